"""Readable decision rules: conditions, rule sets (an OR of AND-ed conditions), membership, text.

One module for every place a rule is built, stored, parsed or applied: RUMIE's rules (IE-DT and the
rule search), the drift check's group overlap (the previous window's rules applied to this window's
rows), the synthetic stream's planted rule, and the text in alerts, reports and SQL evidence rows.

A :class:`Condition` compares one *original* column (original units, category names) with a value:

=================  =====================================================  ==========================
op                 meaning                                                value
=================  =====================================================  ==========================
``<=`` ``>``       numeric threshold (``<`` and ``>=`` parse too)          number
``in (a, b]``      numeric interval, open below, closed above             ``(a, b)``
``=`` ``!=``       category equality (numeric equality on numeric data)   category name
``in`` ``not in``  category subset                                        list of category names
=================  =====================================================  ==========================

Categories compare as the feature schema encodes them (a missing value is ``<NA>``); numeric
comparisons coerce the column with :func:`pandas.to_numeric` (unparseable values are never members).

Examples
--------
>>> import pandas as pd
>>> rules = parse_rules("age <= 30 OR region = north")
>>> rules.text
'age <= 30 OR region = north'
>>> frame = pd.DataFrame({"age": [20, 40, 50], "region": ["south", "north", "east"]})
>>> rules.membership(frame).tolist()
[True, True, False]
>>> RuleSet.from_dicts(rules.to_dicts()) == rules
True
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon._codes import string_codes
from fairmon.errors import MethodError
from fairmon.schema import MISSING_CATEGORY

__all__ = [
    "Condition",
    "RuleSet",
    "NUMERIC_OPS",
    "CATEGORY_OPS",
    "parse_rules",
    "membership",
    "jaccard",
    "column_decimals",
    "numeric_condition",
    "ERR_RULE_OP",
    "ERR_RULE_COLUMN",
    "ERR_RULE_SYNTAX",
    "ERR_RULE_VALUE",
]

ERR_RULE_OP = "cannot evaluate rule condition {cond!r}: unknown operator {op!r}"
ERR_RULE_COLUMN = "cannot evaluate rule condition {cond!r}: unknown column {column!r} (not in the data)"
ERR_RULE_VALUE = "cannot evaluate rule condition {cond!r}: {value!r} is not a number"
ERR_RULE_SYNTAX = "cannot parse rule {rule!r}: {problem}"

NUMERIC_OPS = frozenset({"<=", ">", "<", ">=", "in (a, b]"})
CATEGORY_OPS = frozenset({"=", "!=", "in", "not in"})
#: operators of the text syntax, longest first so ``<=`` is not read as ``<``
_TEXT_OPS = ("<=", ">=", "!=", "=", "<", ">")
OnMissing = Literal["raise", "false"]
_NUMERIC_COMPARE: dict[str, Callable[[np.ndarray, float], Any]] = {
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "=": operator.eq,
    "!=": operator.ne,  # NaN != v is True: a missing value is outside an equality
}


#: the most decimals a column's precision is read to; finer data print with 6 significant digits
MAX_DECIMALS = 6


def _value_text(value: Any) -> str:
    if isinstance(value, float | np.floating):
        v = float(value)
        return str(int(v)) if v.is_integer() else f"{v:.6g}"
    return str(value)


def column_decimals(values: Any) -> int | None:
    """The data's precision: the fewest decimals (0 to 6) that write every finite value exactly.

    This is how rule numbers are rounded (:func:`numeric_condition`): an integer column gets integer
    thresholds, a column of prices with cents two decimals. ``None`` when the data need more than
    :data:`MAX_DECIMALS` decimals (or have no finite value): then thresholds are kept as they are.

    Examples
    --------
    >>> column_decimals([18, 30, 64]), column_decimals([9.05, 1.5]), column_decimals([0.1234567])
    (0, 2, None)
    """
    x = pd.to_numeric(pd.Series(np.asarray(values).ravel()), errors="coerce").to_numpy(dtype=float)
    x = np.unique(x[np.isfinite(x)])
    if x.size == 0:
        return None
    tol = 1e-9 * np.maximum(1.0, np.abs(x))
    for d in range(MAX_DECIMALS + 1):
        if np.all(np.abs(np.round(x, d) - x) <= tol):
            return d
    return None


def _floor_to(value: float, decimals: int | None) -> float:
    """The largest number on the data's grid (``decimals``) not above ``value``."""
    if decimals is None or not np.isfinite(value):
        return float(value)
    scale = 10.0**decimals
    return round(float(np.floor(value * scale + 1e-9)) / scale, decimals)


def numeric_condition(column: str, op: str, value: Any, decimals: int | None = None) -> Condition:
    """The one way a numeric threshold becomes a condition: rounded to the column's precision.

    ``value`` is a number (``<=``, ``>``, ``<``, ``>=``) or a pair (``in (a, b]``). With ``decimals``
    (:func:`column_decimals` of the data) thresholds are floored to the data's grid, which keeps the
    rows of every ``<=``/``>``/``in (a, b]`` comparison on data of that precision: a tree's
    ``age <= 30.5`` becomes ``age <= 30``.

    Examples
    --------
    >>> numeric_condition("age", "<=", 30.5, 0).text, numeric_condition("x", ">", 9.0500001, 2).text
    ('age <= 30', 'x > 9.05')
    >>> numeric_condition("age", "in (a, b]", (24.5, 40.5), 0).text
    'age in (24, 40]'
    """
    if op == "in (a, b]":
        lo, hi = value
        return Condition(column, op, (_floor_to(float(lo), decimals), _floor_to(float(hi), decimals)))
    return Condition(column, op, _floor_to(float(value), decimals))


@dataclass(frozen=True)
class Condition:
    """One readable condition on an original column (see the module table for ``op``)."""

    column: str
    op: str
    value: Any
    text: str = ""

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", self.default_text())

    def default_text(self) -> str:
        """``column op value`` as people write it (``age in (25, 40]``, ``region in {a, b}``)."""
        if self.op == "in (a, b]":
            lo, hi = self.value
            return f"{self.column} in ({_value_text(lo)}, {_value_text(hi)}]"
        if self.op in ("in", "not in"):
            return f"{self.column} {self.op} {{{', '.join(_value_text(v) for v in self.value)}}}"
        return f"{self.column} {self.op} {_value_text(self.value)}"

    def to_dict(self) -> dict[str, Any]:
        """The stored form (``Evidence.rule_conditions`` entries, evidence ``rules`` jsonb)."""
        value = list(self.value) if isinstance(self.value, tuple | list) else self.value
        return {"column": self.column, "op": self.op, "value": value, "text": self.text}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Condition:
        """Inverse of :meth:`to_dict` (a missing ``text`` is rebuilt)."""
        value = d["value"]
        if isinstance(value, list):
            value = tuple(value)
        return cls(column=str(d["column"]), op=str(d["op"]), value=value, text=str(d.get("text") or ""))

    def mask(self, frame: pd.DataFrame, *, on_missing: OnMissing = "raise") -> np.ndarray:
        """Rows of ``frame`` that satisfy the condition.

        ``on_missing="false"`` treats a column absent from ``frame`` as matching no row (the rule
        cannot describe rows it cannot see); the default raises :class:`~fairmon.errors.MethodError`.
        """
        if self.column not in frame.columns:
            if on_missing == "false":
                return np.zeros(len(frame), dtype=bool)
            raise MethodError(ERR_RULE_COLUMN.format(cond=self.text, column=self.column))
        s = frame[self.column]
        op, value = self.op, self.value
        if op in NUMERIC_OPS or (op in ("=", "!=") and _numeric_comparison(s, value)):
            x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            try:
                bounds = (float(value[0]), float(value[1])) if op == "in (a, b]" else (float(value), float(value))
            except (TypeError, ValueError, IndexError) as exc:
                raise MethodError(ERR_RULE_VALUE.format(cond=self.text, value=value)) from exc
            lo, hi = bounds
            with np.errstate(invalid="ignore"):
                if op == "in (a, b]":
                    return np.asarray((x > lo) & (x <= hi), dtype=bool)
                out = np.asarray(_NUMERIC_COMPARE[op](x, lo), dtype=bool)
            return out
        if op not in CATEGORY_OPS:
            raise MethodError(ERR_RULE_OP.format(cond=self.text, op=op))
        # decided once per distinct text (pd.factorize codes), not once per row
        names, codes = string_codes(s, MISSING_CATEGORY)
        if op in ("=", "!="):
            hit = np.array([name == str(value) for name in names] or [False], dtype=bool)
        else:
            wanted = {str(v) for v in value}
            hit = np.array([name in wanted for name in names] or [False], dtype=bool)
        inside = np.asarray(hit[codes], dtype=bool)
        return inside if op in ("=", "in") else ~inside


def _numeric_comparison(s: pd.Series, value: Any) -> bool:
    """``=``/``!=`` compare numerically on a numeric (non-boolean) column with a numeric value."""
    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


@dataclass(frozen=True)
class RuleSet:
    """An OR of rules, each an AND of :class:`Condition` (an empty set describes no row)."""

    rules: tuple[tuple[Condition, ...], ...]

    @property
    def text(self) -> str:
        """The one text form of the rules (alerts, report and evidence rows all use it)."""
        return " OR ".join(self.rule_texts)

    @property
    def rule_texts(self) -> list[str]:
        """Each rule's text (``(all rows)`` for a rule without conditions)."""
        return [" AND ".join(c.text for c in rule) if rule else "(all rows)" for rule in self.rules]

    @property
    def n_conditions(self) -> int:
        """Total number of conditions: the size Occam's razor counts."""
        return sum(len(rule) for rule in self.rules)

    @property
    def columns(self) -> list[str]:
        """The columns the rules use, in first-use order."""
        return list(dict.fromkeys(c.column for rule in self.rules for c in rule))

    def membership(self, frame: pd.DataFrame, *, on_missing: OnMissing = "raise") -> np.ndarray:
        """Rows of ``frame`` that match any rule."""
        out = np.zeros(len(frame), dtype=bool)
        for rule in self.rules:
            m = np.ones(len(frame), dtype=bool)
            for cond in rule:
                m &= cond.mask(frame, on_missing=on_missing)
            out |= m
        return out

    def to_dicts(self) -> list[list[dict[str, Any]]]:
        """The stored form: one list of condition dicts per rule."""
        return [[c.to_dict() for c in rule] for rule in self.rules]

    @classmethod
    def from_dicts(cls, rules: Iterable[Iterable[Mapping[str, Any]]]) -> RuleSet:
        """Inverse of :meth:`to_dicts` (what ``Evidence.rule_conditions`` and the store hold)."""
        return cls(tuple(tuple(Condition.from_dict(c) for c in rule) for rule in rules))


def membership(
    rule_conditions: Sequence[Sequence[Mapping[str, Any]]] | RuleSet,
    frame: pd.DataFrame,
    *,
    on_missing: OnMissing = "raise",
) -> np.ndarray:
    """Rows of ``frame`` inside a rule set given as a :class:`RuleSet` or its stored dicts.

    Examples
    --------
    >>> f = pd.DataFrame({"age": [20, 40, 50], "region": ["north", "south", "north"]})
    >>> membership([[{"column": "age", "op": "<=", "value": 30}],
    ...             [{"column": "region", "op": "=", "value": "north"}]], f).tolist()
    [True, False, True]
    """
    rules = rule_conditions if isinstance(rule_conditions, RuleSet) else RuleSet.from_dicts(rule_conditions)
    return rules.membership(frame, on_missing=on_missing)


def jaccard(a: np.ndarray, b: np.ndarray) -> float | None:
    """``|a ∩ b| / |a ∪ b|`` of two boolean masks; None (undefined) when both are empty.

    Examples
    --------
    >>> jaccard(np.array([True, True, False]), np.array([True, False, False]))
    0.5
    >>> jaccard(np.array([False]), np.array([False])) is None
    True
    """
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    union = int(np.sum(a | b))
    return None if union == 0 else float(np.sum(a & b)) / union


def _split_word(text: str, word: str) -> list[str]:
    return [p.strip() for p in re.split(rf"\s+{word}\s+", text.strip()) if p.strip()]


def _parse_condition(text: str, rule: str) -> Condition:
    for op in _TEXT_OPS:
        if op in text:
            column, value = (part.strip().strip("'\"") for part in text.split(op, 1))
            if not column or not value:
                raise MethodError(ERR_RULE_SYNTAX.format(rule=rule, problem=f"incomplete condition {text!r}"))
            return Condition(column=column, op=op, value=value, text=f"{column} {op} {value}")
    raise MethodError(ERR_RULE_SYNTAX.format(rule=rule, problem=f"no comparison operator in {text!r}"))


def parse_rules(text: str) -> RuleSet:
    """Parse the hand-written syntax: rules joined by ``OR``, conditions by ``AND``.

    A condition is ``column OP value`` with OP in ``<= >= < > = !=``; values stay text and are
    compared numerically where the column and the value are numeric.

    Examples
    --------
    >>> [c.op for rule in parse_rules("a > 1 AND b != x OR c >= 2").rules for c in rule]
    ['>', '!=', '>=']
    """
    rules = tuple(
        tuple(_parse_condition(cond, text) for cond in _split_word(clause, "AND")) for clause in _split_word(text, "OR")
    )
    if not rules:
        raise MethodError(ERR_RULE_SYNTAX.format(rule=text, problem="empty rule"))
    return RuleSet(rules)
