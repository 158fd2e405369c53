"""Overlap of RUMIE groups between windows (the "new group" check's input).

Windows hold different rows, so two windows' group masks cannot be compared directly. We apply the
*previous* window's rules (``Evidence.rule_conditions``: an OR of AND-ed conditions on original
columns, in original units) to the *current* window's rows and compare that membership with the
current group: ``Jaccard = |S_now ∩ S_prev| / |S_now ∪ S_prev|``. The pipeline computes it and passes
it as :attr:`~fairmon.drift.window.WindowSummary.group_overlap`.

Example
-------
>>> import pandas as pd, numpy as np
>>> X = pd.DataFrame({"age": [20, 40, 25, 60], "region": ["north", "south", "east", "north"]})
>>> prev = [[{"column": "age", "op": "<=", "value": 30}], [{"column": "region", "op": "=", "value": "north"}]]
>>> rules_membership(prev, X).tolist()
[True, False, True, True]
>>> round(group_overlap(np.array([True, False, True, False]), prev, X), 3)
0.667
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import MethodError

__all__ = ["rules_membership", "group_overlap", "jaccard", "ERR_RULE_OP", "ERR_RULE_COLUMN"]

ERR_RULE_OP = "cannot evaluate rule condition {cond!r}: unknown operator {op!r}"
ERR_RULE_COLUMN = "cannot evaluate rule condition {cond!r}: column {column!r} is not in the window's data"


def _condition(cond: Mapping[str, Any], frame: pd.DataFrame) -> np.ndarray:
    col, op = cond.get("column"), cond.get("op")
    value: Any = cond.get("value")
    if col not in frame.columns:
        raise MethodError(ERR_RULE_COLUMN.format(cond=cond.get("text", cond), column=col))
    x = frame[col]
    if op == "<=":
        return (pd.to_numeric(x, errors="coerce") <= float(value)).to_numpy()
    if op == ">":
        return (pd.to_numeric(x, errors="coerce") > float(value)).to_numpy()
    if op == "in (a, b]":
        lo, hi = float(value[0]), float(value[1])
        v = pd.to_numeric(x, errors="coerce")
        return ((v > lo) & (v <= hi)).to_numpy()
    s = x.astype(str)
    if op == "=":
        return (s == str(value)).to_numpy()
    if op == "!=":
        return (s != str(value)).to_numpy()
    if op == "not in":
        return (~s.isin([str(v) for v in value])).to_numpy()
    raise MethodError(ERR_RULE_OP.format(cond=cond.get("text", cond), op=op))


def rules_membership(rule_conditions: Sequence[Sequence[Mapping[str, Any]]], frame: pd.DataFrame) -> np.ndarray:
    """Rows of ``frame`` matching any rule (each rule an AND of conditions)."""
    out = np.zeros(len(frame), dtype=bool)
    for rule in rule_conditions:
        m = np.ones(len(frame), dtype=bool)
        for cond in rule:
            m &= _condition(cond, frame)
        out |= m
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard overlap of two boolean masks (1.0 when both are empty)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    union = int((a | b).sum())
    return 1.0 if union == 0 else float((a & b).sum() / union)


def group_overlap(
    current_mask: np.ndarray, previous_rule_conditions: Sequence[Sequence[Mapping[str, Any]]], frame: pd.DataFrame
) -> float:
    """Jaccard overlap of the current group with the previous window's rules applied to ``frame``."""
    return jaccard(current_mask, rules_membership(previous_rule_conditions, frame))
