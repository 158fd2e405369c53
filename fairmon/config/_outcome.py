"""The ``outcome`` section: outcome fairness metrics (selection rates, parity gaps) with bootstrap CIs.

Examples
--------
>>> OutcomeSpec().bootstrap, "dp_ratio" in OUTCOME_METRICS
(1000, True)
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator

from fairmon.config._limits import MAX_BOOTSTRAP
from fairmon.config._parsers import PositiveInt, SpecSection, check_unique

__all__ = ["LABEL_METRICS", "OUTCOME_METRICS", "OutcomeMetric", "OutcomeSpec"]

OutcomeMetric = Literal[
    "selection_rate",
    "tpr",
    "fpr",
    "fnr",
    "dp_difference",
    "dp_ratio",
    "eop_difference",
    "eodds_difference",
]
#: outcome metric names, as :func:`fairmon.fairness.outcome.outcome_metrics` spells them
OUTCOME_METRICS: tuple[str, ...] = get_args(OutcomeMetric)
#: outcome metrics that need ground-truth labels
LABEL_METRICS = ("tpr", "fpr", "fnr", "eop_difference", "eodds_difference")


class OutcomeSpec(SpecSection):
    """Outcome fairness metrics with bootstrap confidence intervals.

    ``metrics`` defaults to every metric the columns allow (label metrics only with a label column);
    names as in :mod:`fairmon.fairness.outcome` (``dp_ratio`` = min/max selection rate, so <= 1).
    Groups smaller than ``min_group_size`` are reported but not compared; ``intersections`` adds
    pairwise intersections of the sensitive attributes; ``bootstrap`` resamples (0 = no CI; at most
    ``MAX_BOOTSTRAP``: the resampling cost grows with it). ``ci_method`` is the per-group rates'
    interval: ``wilson`` (the Wilson score interval; default) or ``percentile`` (the bootstrap's,
    ``[0, 0]`` for a small group with no favourable decision); disparities always get the simultaneous
    bootstrap interval. ``push_down`` counts the (group × decision
    × label) cells with ``GROUP BY`` in the database instead of over the loaded rows; it needs a SQL
    source (``data.sql``) and a logged decision (``columns.decision``); results are identical.
    """

    enabled: bool = True
    metrics: tuple[OutcomeMetric, ...] | None = None
    min_group_size: PositiveInt = 30
    intersections: bool = True
    bootstrap: Annotated[int, Field(ge=0, le=MAX_BOOTSTRAP)] = 1000
    confidence: Annotated[float, Field(gt=0.5, lt=1.0)] = 0.95
    ci_method: Literal["wilson", "percentile"] = "wilson"
    random_state: int = 0
    push_down: bool = False

    @field_validator("bootstrap")
    @classmethod
    def _enough(cls, v: int) -> int:
        if 0 < v < 50:
            raise ValueError(f"must be 0 (no intervals) or at least 50 resamples, got {v}")
        return v

    @field_validator("metrics")
    @classmethod
    def _unique(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if v is None else check_unique(v)
