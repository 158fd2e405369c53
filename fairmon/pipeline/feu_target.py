"""Whose groups FEU compares: the declared attribute, or the RUMIE group the window's alert is about.

Issue 16 asks the recommended candidate to improve "DP (or the monitored metric that drifted)". When
the alert that triggered FEU is about RUMIE's most discriminated group, what drifted is that group's
honest DScore: its favorable rate against everyone else's, i.e. the demographic parity of a binary
group "inside the rules" vs "outside". Retraining for DP between the groups of a declared attribute
instead (the only choice before) answered a question the alert did not ask: in the demo the alert was
about ``region = north | age <= 30`` and FEU retrained for ``sex``, whose DP was already 0.005.

So with ``retraining.target: auto`` (the default) FEU's sensitive column is that group, drawn on the
training data by the window's RUMIE rules (:mod:`fairmon.rules`), when the window alerts on a RUMIE
series (also when FEU is requested on demand at such a window); otherwise the declared attribute, as
``target: attribute`` always does: no RUMIE alert (an outcome or GESD drift, FEU on demand at a window
without one), no rules stored (RUMIE's ``ie`` method, a removed artifact), the rules' columns missing
from the training data, a rule matching no training row or a group share far from the window's (the
rules do not draw the same group there: e.g. a boolean column stored as 0/1), fewer than
:data:`MIN_SIDE_ROWS` rows on a side, a training column already named :data:`TARGET_COLUMN`, or
``group_thresholds`` on (a group-specific threshold reads the declared attribute at decision time).
The choice and its reason are recorded. When the rules use model inputs (``rumie.attributes`` holding
features, which ``fairmon spec check`` warns about), the group may be one the model is built to score
low; FEU still retrains for it, and ``model_inputs`` in the record (and the follow-up) says so.

Example
-------
>>> import pandas as pd
>>> data = pd.DataFrame({"age": [22, 45, 28, 60] * 100, "region": ["north", "south"] * 200})
>>> column, frame, said = rumie_group_column(data, [[{"column": "age", "op": "<=", "value": 30}]])
>>> column, said["inside_rows"], said["outside_rows"], sorted(frame[column].unique())
('rumie_group', 200, 200, ['inside', 'outside'])
>>> rumie_group_column(data, [[{"column": "region", "op": "=", "value": "east"}]])[2]
{'reason': "the rule 'region = east' matches no training row"}
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

__all__ = ["TARGET_COLUMN", "MIN_SIDE_ROWS", "MAX_SHARE_GAP", "feu_target", "rumie_group_column"]

#: the sensitive column FEU reads when it retrains for the RUMIE group (inside / outside its rules)
TARGET_COLUMN = "rumie_group"
#: fewest training rows on each side of the rules for FEU to retrain for the group (the test split gets
#: 30 % of them, and the explanation stability compares at least 10 sampled rows a group)
MIN_SIDE_ROWS = 100
#: largest difference between the group's share of the training rows and of the window's rows: beyond
#: it the rules do not draw the same group on the training data
MAX_SHARE_GAP = 0.2


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
    rumie = ctx.artifacts.get_json(A_RUMIE) if ctx.artifacts.exists(A_RUMIE) else None
    evidence = (rumie or {}).get("evidence") or {}
    if not evidence.get("rule_conditions"):
        return declared("no rules of the group in this window's RUMIE artifact (method ie, or the artifact is gone)")
    rules = RuleSet.from_dicts(evidence["rule_conditions"])
    column, frame, said = rumie_group_column(data, rules, window_share=evidence.get("fraction"))
    if "reason" in said:
        return declared(said["reason"])
    inputs = sorted(set(rules.columns) & set(ctx.spec.columns.features))
    return column, frame, {**said, "finding": alert, **({"model_inputs": inputs} if inputs else {})}


def leave_out_small_groups(data: pd.DataFrame, column: str, min_rows: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """``data`` without the rows of ``column``'s groups that have fewer than ``min_rows`` rows, and those groups.

    Why: FEU's DP and EOD are ranges over the groups, so a group of 5 training rows (about one on the test
    split) decided them — a new user's follow-up showed ThresholdOptimizer at DP 1.000 and "no candidate
    better than production" from a 5-row group (session 23). The monitor's metrics leave such groups out of
    their comparisons (``outcome.min_group_size``); FEU leaves their rows out of its data, so the
    candidates are also trained and validated without them (a few dozen rows at most per group; masking
    them only in DP, EOD, the training penalty, the mitigators and GESD would keep them in training, and
    is not done). The follow-up and the report name them.

    >>> frame = pd.DataFrame({"g": ["a"] * 40 + ["b"] * 40 + ["c"] * 5})
    >>> kept, left = leave_out_small_groups(frame, "g", 30)
    >>> len(kept), left
    (80, {'c': 5})
    """
    groups = data[column].astype("string").fillna("(missing)")
    counts = groups.value_counts()
    small = counts[counts < min_rows]
    if small.empty or len(counts) - len(small) < 2:  # two groups are needed to compare: leave all in then
        return data, {}
    keep = ~groups.isin(small.index)
    return data.loc[keep].reset_index(drop=True), {str(k): int(v) for k, v in small.items()}


def rumie_group_column(
    data: pd.DataFrame, conditions: Sequence[Sequence[dict[str, Any]]] | RuleSet, *, window_share: float | None = None
) -> tuple[str, pd.DataFrame, dict[str, Any]]:
    """The training data with :data:`TARGET_COLUMN` (``inside`` / ``outside`` the rules); ``said`` has a
    ``reason`` instead when the rules cannot draw the group there (module docstring)."""
    rules = conditions if isinstance(conditions, RuleSet) else RuleSet.from_dicts(conditions)
    if TARGET_COLUMN in data.columns:
        return TARGET_COLUMN, data, {"reason": f"the training data already has a column {TARGET_COLUMN!r}"}
    missing = [c for c in rules.columns if c not in data.columns]
    if missing:
        return TARGET_COLUMN, data, {"reason": f"the training data lacks the rules' column(s) {missing}"}
    # each OR-term on its own: one matching nothing (its values' type differs there) shrinks the group
    terms = [np.asarray(RuleSet((rule,)).membership(data), dtype=bool) for rule in rules.rules]
    for rule, members in zip(rules.rules, terms, strict=True):
        if not members.any():
            text = " AND ".join(c.text for c in rule)
            return TARGET_COLUMN, data, {"reason": f"the rule {text!r} matches no training row"}
    inside = np.logical_or.reduce(terms)  # the rule set's membership: the OR of its terms
    n_in = int(inside.sum())
    n_out = int(len(inside) - n_in)
    share = n_in / max(len(inside), 1)
    if window_share is not None and abs(share - float(window_share)) > MAX_SHARE_GAP:
        return TARGET_COLUMN, data, {"reason": f"the rules hold {share:.0%} of the training rows against "
                                               f"{float(window_share):.0%} of the window's"}
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
