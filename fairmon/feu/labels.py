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

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "BASELINES",
    "TUNED",
    "baseline_label",
    "constraint_note",
    "left_out_clause",
    "rumie_target_clause",
    "recipe_repeats",
    "candidate_notes",
    "registered_note",
]

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
    DP and GESD compare the group this alert is about (RUMIE's rules age <= 30; 400 rows of the retraining data inside, 600 outside) with everyone else; its rules use model inputs (age): if the model is meant to separate this group, equalising its approval rate is not the fix (rumie.attributes)
    """
    if target.get("kind") != "rumie_group":
        return None
    text = (f"DP and GESD compare the group this alert is about (RUMIE's rules {target.get('rules')}; "
            f"{target.get('inside_rows')} rows of the retraining data inside, {target.get('outside_rows')} outside) "
            "with everyone else")
    inputs = target.get("model_inputs")
    if inputs:  # the spec check's warning, where the reader decides
        text += (f"; its rules use model inputs ({', '.join(map(str, inputs))}): if the model is meant to "
                 "separate this group, equalising its approval rate is not the fix (rumie.attributes)")
    return text


def recipe_repeats(hyperparameters: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Position → the first earlier position with the same hyperparameters, for every repeat.

    NSGA-II can evaluate one recipe twice (a child that copies a parent dropped from the population);
    each evaluation trains with its own seed, so two points of the front may be one recipe whose
    difference is training noise, not another trade-off. The follow-up and the report say so.

    >>> recipe_repeats([{"lr": 0.1, "epochs": 5}, {"lr": 0.2, "epochs": 5}, {"epochs": 5, "lr": 0.1}])
    {2: 0}
    """
    first: dict[tuple[tuple[str, Any], ...], int] = {}
    out: dict[int, int] = {}
    for i, hp in enumerate(hyperparameters):
        key = tuple(sorted((str(k), v) for k, v in hp.items()))
        if key in first:
            out[i] = first[key]
        else:
            first[key] = i
    return out


def registered_note(deployment: Any) -> str:
    """'' unless the candidate's figures are its registered fold ensemble's (``metrics.deployment``):
    then what was registered and the searched network's own test figures, which the other rows show.

    >>> registered_note({"model": "fold_ensemble", "members": 5,
    ...                  "searched": {"test": {"dp": 0.0232, "balanced_accuracy": 0.6366}}})
    'as registered: the fold ensemble of its 5 fold models; the searched network itself: DP 0.023, bal. acc. 0.637'
    >>> registered_note({"model": "searched"})
    ''
    """
    if not isinstance(deployment, Mapping) or deployment.get("model") != "fold_ensemble":
        return ""
    searched = deployment.get("searched")
    test = searched.get("test") if isinstance(searched, Mapping) else None
    own = ""
    if isinstance(test, Mapping) and test.get("dp") is not None and test.get("balanced_accuracy") is not None:
        own = f"; the searched network itself: DP {float(test['dp']):.3f}, bal. acc. {float(test['balanced_accuracy']):.3f}"
    return f"as registered: the fold ensemble of its {deployment.get('members')} fold models{own}"


def candidate_notes(
    hyperparameters: Sequence[Mapping[str, Any]], deployments: Sequence[Any], numbers: Sequence[int] | None = None,
) -> list[str]:
    """Per candidate, what its row says beyond its figures ('' for none): what was registered
    (:func:`registered_note`) and "the recipe of #k again (another training seed)"
    (:func:`recipe_repeats`), ``#k`` as the rows are numbered (``numbers``; default position + 1).
    The Slack follow-up and the report's FEU table both show these.

    >>> candidate_notes([{"lr": 0.1}, {"lr": 0.2}, {"lr": 0.1}], [None, None, {"model": "searched"}], [1, 2, 3])
    ['', '', 'the recipe of #1 again (another training seed)']
    """
    nums = list(numbers) if numbers is not None else list(range(1, len(hyperparameters) + 1))
    repeats = recipe_repeats(hyperparameters)
    out = []
    for i, deployment in enumerate(deployments):
        again = f"the recipe of #{nums[repeats[i]]} again (another training seed)" if i in repeats else ""
        out.append("; ".join(n for n in (registered_note(deployment), again) if n))
    return out
