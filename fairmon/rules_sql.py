"""A rule set as a SQL ``WHERE`` predicate over the source's columns (PostgreSQL dialect).

Analysts paste it into a query (``SELECT count(*) FROM applications WHERE <predicate>``), and for SQL
sources the group's size on the full window can be counted in the database. The predicate selects
exactly the rows :meth:`fairmon.rules.RuleSet.membership` selects in pandas, including the missing-value
conventions there:

- numeric comparisons never match a NULL (pandas: a NaN compares false), except ``!=``, which matches
  it (pandas computes ``~(x == v)``);
- category conditions see a NULL as the category ``<NA>`` (what the feature schema encodes), so
  ``region != north`` and ``region not in {…}`` include NULL rows, and ``region = <NA>`` is
  ``IS NULL``.

Identifiers are double-quoted (``"age"``; embedded quotes doubled) and literals typed: numbers as
numeric literals, categories as quoted strings (embedded quotes doubled), so no value can break out of
its literal. Which ``=``/``!=`` conditions compare numerically depends on the column's type, exactly as
in pandas: pass the numeric columns in ``numeric_columns`` (the feature schema's numeric features).

Examples
--------
>>> from fairmon.rules import parse_rules
>>> to_sql_predicate(parse_rules("age <= 30 OR region = north"), numeric_columns={"age"})
'("age" <= 30) OR ("region" = \\'north\\')'
>>> to_sql_predicate(parse_rules("region != o'hara"), numeric_columns=())
'("region" IS NULL OR "region" <> \\'o\\'\\'hara\\')'
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

from fairmon.errors import MethodError
from fairmon.rules import ERR_RULE_OP, ERR_RULE_VALUE, NUMERIC_OPS, Condition, RuleSet
from fairmon.schema import MISSING_CATEGORY

__all__ = ["to_sql_predicate", "quote_identifier", "ERR_SQL_VALUE"]

ERR_SQL_VALUE = "cannot render rule condition {cond!r} as SQL: {value!r} is not a finite number"
_SQL_OPS = {"<=": "<=", ">": ">", "<": "<", ">=": ">=", "=": "=", "!=": "<>"}


def quote_identifier(name: str) -> str:
    """A double-quoted PostgreSQL identifier (``"my col"``; embedded quotes doubled).

    >>> quote_identifier('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


def _number(cond: Condition, value: Any) -> str:
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise MethodError(ERR_RULE_VALUE.format(cond=cond.text, value=value)) from exc
    if not math.isfinite(x):
        raise MethodError(ERR_SQL_VALUE.format(cond=cond.text, value=value))
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


def _string(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _category_set(col: str, values: Sequence[Any], *, negate: bool) -> str:
    named = [str(v) for v in values if str(v) != MISSING_CATEGORY]
    has_missing = len(named) < len(values)
    listed = f"{col} IN ({', '.join(_string(v) for v in named)})" if named else "FALSE"
    if not negate:
        return f"{col} IS NULL OR {listed}" if has_missing else listed
    if has_missing:
        return f"{col} IS NOT NULL AND NOT ({listed})"
    return f"{col} IS NULL OR NOT ({listed})"


def _condition_sql(cond: Condition, numeric_columns: Collection[str]) -> str:
    col, op, value = quote_identifier(cond.column), cond.op, cond.value
    numeric = op in NUMERIC_OPS or (op in ("=", "!=") and cond.column in numeric_columns and _is_number(value))
    if numeric:
        if op == "in (a, b]":
            return f"{col} > {_number(cond, value[0])} AND {col} <= {_number(cond, value[1])}"
        sql = f"{col} {_SQL_OPS[op]} {_number(cond, value)}"
        return f"{col} IS NULL OR {sql}" if op == "!=" else sql
    if op == "=":
        return f"{col} IS NULL" if str(value) == MISSING_CATEGORY else f"{col} = {_string(value)}"
    if op == "!=":
        return f"{col} IS NOT NULL" if str(value) == MISSING_CATEGORY else f"{col} IS NULL OR {col} <> {_string(value)}"
    if op in ("in", "not in"):
        return _category_set(col, list(value), negate=op == "not in")
    raise MethodError(ERR_RULE_OP.format(cond=cond.text, op=op))


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def to_sql_predicate(rules: RuleSet, *, numeric_columns: Collection[str]) -> str:
    """The rule set as a PostgreSQL boolean expression over the original columns.

    Parameters
    ----------
    rules
        The rule set (an OR of AND-ed conditions, original units and category names).
    numeric_columns
        Columns of a numeric SQL type; ``=``/``!=`` on them compare numbers, elsewhere category text.

    Returns
    -------
    str
        ``(c1 AND c2) OR (c3)``; ``FALSE`` for an empty rule set and ``TRUE`` for a rule without
        conditions (it describes every row).

    Examples
    --------
    >>> from fairmon.rules import Condition, RuleSet
    >>> to_sql_predicate(RuleSet(((Condition("age", "in (a, b]", (25, 40)),),)), numeric_columns={"age"})
    '("age" > 25 AND "age" <= 40)'
    """
    if not rules.rules:
        return "FALSE"
    parts = []
    for rule in rules.rules:
        conds = [f"({_condition_sql(c, numeric_columns)})" for c in rule]
        parts.append("TRUE" if not conds else conds[0] if len(conds) == 1 else "(" + " AND ".join(conds) + ")")
    return " OR ".join(parts)
