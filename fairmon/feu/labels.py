"""The names people read for FEU's baselines: one table for the report, its chart, Slack and benchmarks.

The stored keys (``feu_baselines.baseline``) are identifiers; what a reader sees must be the same
wherever a baseline appears, so that "fairlearn ThresholdOptimizer (DP)" in a Slack follow-up is the
row of that name in the report. Importing this module loads nothing heavy.

>>> baseline_label("constant")
'approve everyone'
>>> baseline_label("threshold_optimizer_tuned", tol=0.04)
"fairlearn ThresholdOptimizer (DP, tol 0.04 by FEU's rule)"
>>> [baseline_label(b) for b in BASELINES][2:4]
['fairlearn ThresholdOptimizer (DP)', 'fairlearn ExponentiatedGradient (DP)']
>>> constraint_note({"band_ok": False, "utility_ok": False})
"outside FEU's positive-rate band on validation"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BASELINES", "TUNED", "baseline_label", "constraint_note", "left_out_clause", "rumie_target_clause"]

#: the baseline name of ThresholdOptimizer with its ``tol`` picked by FEU's constraints on validation
TUNED = "threshold_optimizer_tuned"

_LABELS = {
    "production": "production",
    "constant": "approve everyone",
    "threshold_optimizer": "fairlearn ThresholdOptimizer (DP)",
    "exponentiated_gradient": "fairlearn ExponentiatedGradient (DP)",
    TUNED: "fairlearn ThresholdOptimizer (DP, {tol} by FEU's rule)",
}
#: every baseline an FEU result may carry, in the order tables and legends list them
BASELINES: tuple[str, ...] = tuple(_LABELS)


def baseline_label(name: str, tol: float | None = None) -> str:
    """The reader's name of baseline ``name``; ``tol`` is the tuned ThresholdOptimizer's (None: not known).

    >>> baseline_label("threshold_optimizer_tuned")
    "fairlearn ThresholdOptimizer (DP, tol by FEU's rule)"
    >>> baseline_label("mystery")
    'mystery'
    """
    label = _LABELS.get(name, name)
    return label.format(tol="tol" if tol is None else f"tol {tol:g}")


def constraint_note(validation: Mapping[str, Any]) -> str:
    """Why a baseline is not what FEU proposes, from its validation constraint checks ("" when it keeps them).

    ``validation`` is a baseline's validation metrics with ``band_ok`` / ``utility_ok``
    (:func:`fairmon.feu._mitigator_constraints.check_constraints`; absent or None: no such check).
    The band is named first: a rate moved outside it changes who is accepted, whatever the utility.

    >>> constraint_note({"band_ok": True, "utility_ok": False})
    "below FEU's utility floor on validation"
    >>> constraint_note({})
    ''
    """
    if validation.get("band_ok") is False:
        return "outside FEU's positive-rate band on validation"
    return "below FEU's utility floor on validation" if validation.get("utility_ok") is False else ""


def left_out_clause(target: Mapping[str, Any]) -> str:
    """The groups FEU left out for having too few training rows (:func:`fairmon.pipeline.feu_target.leave_out_small_groups`),
    as a clause of the follow-up and the report ('' when none).

    >>> left_out_clause({"left_out": {"Native American": 5}, "min_group_rows": 30})
    '; groups with fewer than 30 training rows left out: Native American (5)'
    """
    left = target.get("left_out")
    if not isinstance(left, Mapping) or not left:
        return ""
    named = ", ".join(f"{k} ({v})" for k, v in left.items())
    return f"; groups with fewer than {target.get('min_group_rows')} training rows left out: {named}"


def rumie_target_clause(target: Mapping[str, Any]) -> str | None:
    """What FEU's DP and GESD compare when it retrained for the alert's RUMIE group
    (:mod:`fairmon.pipeline.feu_target`), in the words of the Slack follow-up and the report; None for
    any other target.

    >>> print(rumie_target_clause({"kind": "rumie_group", "rules": "age <= 30", "inside_rows": 400,
    ...                            "outside_rows": 600, "model_inputs": ["age"]}))
    DP and GESD compare the group this alert is about (RUMIE's rules age <= 30; 400 training rows inside, 600 outside) with everyone else; its rules use model inputs (age): if the model is meant to separate this group, equalising its approval rate is not the fix (rumie.attributes)
    """
    if target.get("kind") != "rumie_group":
        return None
    text = (f"DP and GESD compare the group this alert is about (RUMIE's rules {target.get('rules')}; "
            f"{target.get('inside_rows')} training rows inside, {target.get('outside_rows')} outside) with everyone else")
    inputs = target.get("model_inputs")
    if inputs:  # the spec check's warning, where the reader decides
        text += (f"; its rules use model inputs ({', '.join(map(str, inputs))}): if the model is meant to "
                 "separate this group, equalising its approval rate is not the fix (rumie.attributes)")
    return text
