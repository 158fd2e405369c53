"""fairmon.fairness: outcome fairness metrics and RUMIE, the mined discriminated group.

What a user calls: :func:`outcome_metrics` (group metrics with confidence intervals, an
:class:`OutcomeResult`) and the single disparity functions; :func:`mine` (RUMIE: IE, IE-DT and the
rule search, an :class:`Evidence`), :func:`held_out_test`, :func:`enum_baseline`, :func:`dscore`, and
the rule search's :class:`RuleSearchSettings` with its results (:class:`RuleSetScore`). Error texts
and the method's internals stay in :mod:`fairmon.fairness.rumie` and the private modules.

Examples
--------
>>> from fairmon.fairness import RuleSearchSettings, dscore
>>> dscore([1, 1, 0, 0], [False, False, True, True]), RuleSearchSettings().epsilon
(1.0, 0.01)
"""

from fairmon.fairness.outcome import (
    DEFAULT_METRICS,
    DISPARITY_METRICS,
    GROUP_METRICS,
    INTERSECTION_SEP,
    LABEL_METRICS,
    MISSING_GROUP,
    MetricRow,
    OutcomeResult,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equalized_odds_difference,
    outcome_metrics,
    selection_rate,
)
from fairmon.fairness.rumie import (
    Evidence,
    RuleSearchResult,
    RuleSearchSettings,
    RuleSetScore,
    dscore,
    enum_baseline,
    held_out_test,
    mine,
)

__all__ = [
    # outcome fairness
    "OutcomeResult",
    "MetricRow",
    "outcome_metrics",
    "selection_rate",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "GROUP_METRICS",
    "DISPARITY_METRICS",
    "LABEL_METRICS",
    "DEFAULT_METRICS",
    "MISSING_GROUP",
    "INTERSECTION_SEP",
    # RUMIE
    "Evidence",
    "mine",
    "held_out_test",
    "enum_baseline",
    "dscore",
    "RuleSearchSettings",
    "RuleSetScore",
    "RuleSearchResult",
]
