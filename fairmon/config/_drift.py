"""The ``drift`` section: when discrimination counts as drifted (baselines, ranges, persistence).

Examples
--------
>>> r = DriftSpec().allowed_ranges["dp_ratio"]
>>> r.low, r.high, r.judge, METRIC_DOMAINS["rumie_dscore"]
(0.8, 1.0, 'interval', (-1.0, 1.0))
>>> DriftSpec.model_validate({"allowed_ranges": {"dp_ratio": {"range": [0.8, 1], "judge": "value"}}}).allowed_ranges
{'dp_ratio': AllowedRange(range=(0.8, 1.0), judge='value')}
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from fairmon.config._limits import MAX_HISTORY_WINDOWS
from fairmon.config._messages import (
    ERR_PERSISTENCE,
    ERR_RANGE_DOMAIN,
    ERR_RANGE_ORDER,
    ERR_UNKNOWN_METRIC,
    excerpt,
)
from fairmon.config._outcome import OUTCOME_METRICS
from fairmon.config._parsers import Fraction, NonNegInt, PositiveInt, SpecSection

__all__ = [
    "AllowedRange",
    "DRIFT_METRICS",
    "METRIC_DOMAINS",
    "Baseline",
    "ColdStart",
    "DriftSpec",
    "Persistence",
    "ReferenceBaseline",
    "RangeJudge",
    "RumieDriftThresholds",
    "TrailingBaseline",
]

#: how an allowed range is judged: ``interval`` (the whole confidence interval must lie outside, the
#: SageMaker Clarify rule) or ``value`` (the point value outside fires, as the four-fifths rule reads)
RangeJudge = Literal["interval", "value"]


class AllowedRange(SpecSection):
    """One allowed range ``[low, high]`` of a drift metric and how a window is judged against it.

    ``judge: interval`` (the default) flags a window only when the metric's whole confidence interval
    lies outside the range, so sampling noise around a bound does not alert; ``judge: value`` flags it
    when the point value lies outside, which is how a compliance rule such as the four-fifths rule
    (``dp_ratio`` at least 0.8) is read. Written as ``[low, high]`` (interval judgement) or
    ``{range: [low, high], judge: value}``; an interval-judged range is written back as the list, so a
    spec's fingerprint does not change with the form.

    >>> AllowedRange.model_validate([0.8, 1.0]).judge
    'interval'
    >>> AllowedRange(range=(0.8, 1.0), judge="value").model_dump()
    {'range': (0.8, 1.0), 'judge': 'value'}
    """

    range: tuple[float, float]
    judge: RangeJudge = "interval"

    @model_validator(mode="before")
    @classmethod
    def _list_form(cls, data: Any) -> Any:
        if isinstance(data, list | tuple):
            return {"range": data}
        return data

    @model_serializer(mode="plain")
    def _dump(self) -> Any:
        if self.judge == "interval":
            return self.range
        return {"range": self.range, "judge": self.judge}

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: Any) -> dict[str, Any]:
        # editors must accept both forms: the list [low, high] and the mapping {range, judge}
        obj = handler(core)
        pair = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
        return {"anyOf": [pair, obj]}

    @property
    def low(self) -> float:
        return float(self.range[0])

    @property
    def high(self) -> float:
        return float(self.range[1])

class ReferenceBaseline(SpecSection):
    """Compare every window with one fixed reference window: the scheduled window containing the date
    ``window`` in ``schedule.timezone`` (the first one starting that day, whatever the cron's hour).

    That window and earlier ones have nothing to compare with (a cold start). While the reference window
    has no completed run, the significance tests are silent and the drift result and the log say why;
    the window is not failed."""

    kind: Literal["reference"]
    window: dt.date


class TrailingBaseline(SpecSection):
    """Compare every window with the last ``n_windows`` (at least 2) earlier completed windows in which
    the series was not drifting (a drift's own windows never become its baseline)."""

    kind: Literal["trailing"] = "trailing"
    n_windows: Annotated[int, Field(ge=2, le=MAX_HISTORY_WINDOWS)] = 7


Baseline = Annotated[ReferenceBaseline | TrailingBaseline, Field(discriminator="kind")]


class ColdStart(SpecSection):
    """Until ``min_history`` (at least 2: a significance test needs a spread) earlier completed windows
    exist: ``ranges_only`` checks only the allowed ranges, ``suppress`` records findings without
    alerting."""

    min_history: Annotated[int, Field(ge=2, le=MAX_HISTORY_WINDOWS)] = 3
    rule: Literal["ranges_only", "suppress"] = "ranges_only"


class Persistence(SpecSection):
    """Alert only when at least ``m`` of the last ``n`` windows (this one included) violate."""

    m: PositiveInt = 2
    n: Annotated[int, Field(ge=1, le=MAX_HISTORY_WINDOWS)] = 3

    @model_validator(mode="after")
    def _m_le_n(self) -> Persistence:
        if self.m > self.n:
            raise ValueError("m: " + ERR_PERSISTENCE.format(m=self.m, n=self.n))
        return self


class RumieDriftThresholds(SpecSection):
    """RUMIE drift: honest DScore above ``honest_dscore_threshold`` (or a significant increase), or a new
    group (Jaccard overlap with the previous window's group below ``min_jaccard``). A new group and
    changed key attributes count only for a group whose honest DScore is above the threshold: a weak
    group wanders between windows of an unchanged model."""

    honest_dscore_threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.1
    min_jaccard: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5


DRIFT_METRICS = (*OUTCOME_METRICS, "rumie_dscore", "rumie_honest_dscore", "gesd")
#: the values each drift metric can take, ``(low, high)``: rates, gaps and ``dp_ratio`` (min / max
#: selection rate, 0/0 = 1) lie in [0, 1] (:mod:`fairmon.fairness.outcome`); DScore is
#: ``P(fav | rest) - P(fav | group)`` in [-1, 1] (:mod:`fairmon.fairness.rumie`); GESD is a gap (or
#: variance) of mean stabilities ``1 / (1 + ||.||)`` in (0, 1], so in [0, 1] (:mod:`fairmon.explain.gesd`)
METRIC_DOMAINS: dict[str, tuple[float, float]] = {
    **{m: (0.0, 1.0) for m in OUTCOME_METRICS},
    "rumie_dscore": (-1.0, 1.0),
    "rumie_honest_dscore": (-1.0, 1.0),
    "gesd": (0.0, 1.0),
}


class DriftSpec(SpecSection):
    """When discrimination counts as drifted (DESIGN §5).

    ``allowed_ranges`` maps a metric to an :class:`AllowedRange` ``[low, high]`` within its domain
    (:data:`METRIC_DOMAINS`): a window violates when the metric's confidence interval lies outside it
    (``judge: interval``, the default) or when its point value does (``judge: value``). Changes against the ``baseline`` count when significant at
    ``significance_level`` and at least ``min_effect`` in size. ``gesd_threshold`` (optional) is an
    absolute GESD level that always counts.
    """

    baseline: Baseline = TrailingBaseline()
    cold_start: ColdStart = ColdStart()
    allowed_ranges: dict[str, AllowedRange] = Field(
        default_factory=lambda: {"dp_ratio": AllowedRange(range=(0.8, 1.0))}
    )
    significance_level: Fraction = 0.05
    min_effect: Annotated[float, Field(ge=0.0)] = 0.02
    persistence: Persistence = Persistence()
    cooldown_windows: NonNegInt = 3
    rumie: RumieDriftThresholds = RumieDriftThresholds()
    gesd_threshold: Annotated[float, Field(ge=0.0)] | None = None

    @field_validator("allowed_ranges")
    @classmethod
    def _ranges(cls, v: dict[str, AllowedRange]) -> dict[str, AllowedRange]:
        for metric, allowed in v.items():
            low, high = allowed.range
            if metric not in DRIFT_METRICS:
                raise ValueError(
                    f"{excerpt(metric, 80)}: "
                    + ERR_UNKNOWN_METRIC.format(metric=excerpt(metric), known=list(DRIFT_METRICS))
                )
            if low > high:
                raise ValueError(f"{metric}: " + ERR_RANGE_ORDER.format(metric=metric, value=[low, high]))
            dlo, dhi = METRIC_DOMAINS[metric]
            if not dlo <= low <= high <= dhi:  # also refuses NaN and infinities
                raise ValueError(
                    f"{metric}: " + ERR_RANGE_DOMAIN.format(metric=metric, value=[low, high], low=dlo, high=dhi)
                )
        return v
