"""Whose groups FEU compares: the declared attribute, or the RUMIE group the window's alert is about.

Issue 16 asks the recommended candidate to improve "DP (or the monitored metric that drifted)". When
the alert that triggered FEU is about RUMIE's most discriminated group, what drifted is that group's
honest DScore: its favorable rate against everyone else's, i.e. the demographic parity of a binary
group "inside the rules" vs "outside". Retraining for DP between the groups of a declared attribute
instead (the only choice before) answered a question the alert did not ask: in the demo the alert was
about ``region = north | age <= 30`` and FEU retrained for ``sex``, whose DP was already 0.005.

So with ``retraining.target: auto`` (the default) FEU's sensitive column is that group, drawn on the
training data by the window's RUMIE rules (:mod:`fairmon.rules`), when the window alerts on a RUMIE
series; otherwise — no RUMIE alert (an outcome or GESD drift, FEU requested on demand), the rules'
columns missing from the training data, fewer than :data:`MIN_SIDE_ROWS` rows on a side, or
``group_thresholds`` on (a group-specific threshold reads the declared attribute at decision time) —
the declared attribute, as ``target: attribute`` always does. The choice and its reason are recorded.

Example
-------
>>> import pandas as pd
>>> data = pd.DataFrame({"age": [22, 45, 28, 60] * 20, "region": ["north", "south"] * 40})
>>> column, frame, said = rumie_group_column(data, [[{"column": "age", "op": "<=", "value": 30}]])
>>> column, said["inside_rows"], said["outside_rows"], sorted(frame[column].unique())
('rumie_group', 40, 40, ['inside', 'outside'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.fairness.rescore import RUMIE_METRICS
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.table import A_DRIFT, A_RUMIE
from fairmon.rules import RuleSet

__all__ = ["TARGET_COLUMN", "MIN_SIDE_ROWS", "feu_target", "rumie_group_column"]

#: the sensitive column FEU reads when it retrains for the RUMIE group (inside / outside its rules)
TARGET_COLUMN = "rumie_group"
#: fewest training rows on each side of the rules for FEU to retrain for the group
MIN_SIDE_ROWS = 30


def feu_target(ctx: RunContext, data: pd.DataFrame) -> tuple[str, pd.DataFrame, dict[str, Any]]:
    """``(sensitive column, training data, what was chosen and why)`` for this window's FEU step."""
    attr = ctx.spec.explanations.gesd.attribute or ctx.spec.columns.sensitive[0]

    def declared(reason: str | None) -> tuple[str, pd.DataFrame, dict[str, Any]]:
        return attr, data, {"kind": "attribute", "attribute": attr, **({"reason": reason} if reason else {})}

    rt = ctx.spec.retraining
    if rt.target == "attribute":
        return declared(None)
    alert = _rumie_alert(ctx)
    if alert is None:
        return declared("the window's alert is not about a RUMIE group")
    if rt.group_thresholds:
        return declared("group_thresholds is on: a group-specific threshold reads the declared attribute")
    evidence = (ctx.artifacts.get_json(A_RUMIE) or {}).get("evidence") or {} if ctx.artifacts.exists(A_RUMIE) else {}
    conditions = evidence.get("rule_conditions")
    if not conditions:
        return declared("RUMIE stored no rules for the group")
    column, frame, said = rumie_group_column(data, conditions)
    if "reason" in said:
        return declared(said["reason"])
    return column, frame, {**said, "finding": alert}


def rumie_group_column(
    data: pd.DataFrame, conditions: Sequence[Sequence[dict[str, Any]]] | RuleSet
) -> tuple[str, pd.DataFrame, dict[str, Any]]:
    """The training data with :data:`TARGET_COLUMN` (``inside`` / ``outside`` the rules); ``said`` has a
    ``reason`` instead when the rules cannot be drawn there (columns missing, a side too small)."""
    rules = conditions if isinstance(conditions, RuleSet) else RuleSet.from_dicts(conditions)
    missing = [c for c in rules.columns if c not in data.columns]
    if missing:
        return TARGET_COLUMN, data, {"reason": f"the training data lacks the rules' column(s) {missing}"}
    inside = np.asarray(rules.membership(data), dtype=bool)
    n_in = int(inside.sum())
    n_out = int(len(inside) - n_in)
    if min(n_in, n_out) < MIN_SIDE_ROWS:
        return TARGET_COLUMN, data, {"reason": f"the rules {rules.text!r} leave {n_in} training rows inside and "
                                               f"{n_out} outside (at least {MIN_SIDE_ROWS} each)"}
    frame = data.assign(**{TARGET_COLUMN: np.where(inside, "inside", "outside")})
    return TARGET_COLUMN, frame, {"kind": "rumie_group", "rules": rules.text, "inside_rows": n_in,
                                  "outside_rows": n_out}


def _rumie_alert(ctx: RunContext) -> dict[str, Any] | None:
    """The RUMIE finding the window alerts on (open and notified, on a RUMIE series), or None."""
    if not ctx.artifacts.exists(A_DRIFT):
        return None
    for f in ctx.artifacts.get_json(A_DRIFT).get("findings", []):
        if f.get("notify") and f.get("status") in ("open", "ongoing") and (
                f.get("metric") in RUMIE_METRICS or str(f.get("kind", "")).startswith("rumie")):
            return {"kind": f.get("kind"), "metric": f.get("metric")}
    return None
