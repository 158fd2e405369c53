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
"""

from __future__ import annotations

__all__ = ["BASELINES", "TUNED", "baseline_label"]

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
