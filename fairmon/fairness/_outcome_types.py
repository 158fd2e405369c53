"""Result types and metric names of the outcome metrics (:mod:`fairmon.fairness.outcome`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import pandas as pd

__all__ = ["MetricRow", "OutcomeResult", "GROUP_METRICS", "DISPARITY_METRICS", "LABEL_METRICS", "DEFAULT_METRICS"]

RowStatus = Literal["ok", "insufficient", "labels_pending", "undefined"]
CIMethod = Literal["wilson", "percentile"]
DisparityCI = Literal["simultaneous", "percentile"]

#: per-group metrics
GROUP_METRICS: tuple[str, ...] = ("selection_rate", "tpr", "fpr", "fnr")
#: disparity metrics over the groups of one grouping
DISPARITY_METRICS: tuple[str, ...] = ("dp_difference", "dp_ratio", "eop_difference", "eodds_difference")
#: metrics that need labels
LABEL_METRICS: frozenset[str] = frozenset({"tpr", "fpr", "fnr", "eop_difference", "eodds_difference"})
DEFAULT_METRICS: tuple[str, ...] = GROUP_METRICS + DISPARITY_METRICS

ERR_UNKNOWN_METRIC = "unknown outcome metric {metric!r}; known: {known}"
ERR_CONFIDENCE = "confidence must be in (0, 1), got {value}"
ERR_BOOTSTRAP = "n_bootstrap must be 0 (no CI) or >= 50, got {value}"
ERR_MIN_GROUP = "min_group_size must be >= 0, got {value}"


@dataclass(frozen=True)
class MetricRow:
    """One tidy outcome-fairness number.

    ``attribute`` is the grouping (``"sex"`` or an intersection ``"race&sex"``), ``group`` the group
    within it (None for a disparity over the grouping). ``n`` counts the rows used, ``n_nan`` the rows
    of the group(s) excluded because the prediction (or, for label metrics, the label) was missing;
    ``n_skipped`` the bootstrap replicates left out of the interval because a rate was undefined in
    them (e.g. no positives drawn), so ``n_bootstrap - n_skipped`` replicates made the interval.
    """

    metric: str
    attribute: str
    group: str | None
    value: float
    ci_low: float
    ci_high: float
    n: int
    n_nan: int
    status: RowStatus = "ok"
    #: bootstrap replicates skipped because a rate of the statistic was undefined in them
    n_skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN stays float NaN; the store maps it to NULL)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricRow:
        """Inverse of :meth:`to_dict`; a dict written before ``n_skipped`` existed reads as 0.

        >>> MetricRow.from_dict(MetricRow("dp_difference", "sex", None, 0.1, 0.0, 0.2, 50, 0).to_dict()).n_skipped
        0
        """
        def num(v: Any) -> float:
            return float("nan") if v is None else float(v)

        return cls(
            metric=str(data["metric"]), attribute=str(data["attribute"]),
            group=None if data.get("group") is None else str(data["group"]),
            value=num(data.get("value")), ci_low=num(data.get("ci_low")), ci_high=num(data.get("ci_high")),
            n=int(data.get("n") or 0), n_nan=int(data.get("n_nan") or 0), status=data.get("status", "ok"),
            n_skipped=int(data.get("n_skipped") or 0),
        )


@dataclass(frozen=True)
class OutcomeResult:
    """All outcome-fairness rows of one window plus the settings that produced them.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> s = pd.DataFrame({"sex": ["F", "M"] * 40})
    >>> from fairmon.fairness.outcome import outcome_metrics
    >>> r = outcome_metrics(np.tile([1, 0, 1, 1], 20), sensitive_features=s, n_bootstrap=0)
    >>> sorted(r.by_group("selection_rate", "sex").items())
    [('F', 1.0), ('M', 0.5)]
    """

    rows: tuple[MetricRow, ...]
    confidence: float
    n_bootstrap: int
    ci_method: str
    random_state: int | None
    min_group_size: int
    labels_pending: bool
    attributes: tuple[str, ...] = field(default=())
    #: interval method of the disparity rows (``"simultaneous"``: max-t, see ``_outcome_ci``)
    disparity_ci: str = "simultaneous"

    def get(self, metric: str, attribute: str, group: str | None = None) -> MetricRow:
        """The row for (metric, attribute, group); KeyError naming it when absent."""
        for row in self.rows:
            if row.metric == metric and row.attribute == attribute and row.group == group:
                return row
        raise KeyError(f"no outcome row for metric={metric!r} attribute={attribute!r} group={group!r}")

    def by_group(self, metric: str, attribute: str) -> dict[str, float]:
        """``{group: value}`` of a per-group metric for one grouping."""
        return {
            r.group: r.value
            for r in self.rows
            if r.metric == metric and r.attribute == attribute and r.group is not None
        }

    def disparities(self) -> list[MetricRow]:
        """The disparity rows (``group is None``)."""
        return [r for r in self.rows if r.group is None]

    def groupings(self) -> list[str]:
        """Grouping keys in result order (attributes first, then intersections)."""
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.setdefault(r.attribute, None)
        return list(seen)

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: metric, attribute, group, value, ci_low, ci_high, n, n_nan, status."""
        cols = ["metric", "attribute", "group", "value", "ci_low", "ci_high", "n", "n_nan", "status"]
        return pd.DataFrame([r.to_dict() for r in self.rows], columns=cols)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the settings and the rows."""
        return {
            "confidence": self.confidence,
            "n_bootstrap": self.n_bootstrap,
            "ci_method": self.ci_method,
            "disparity_ci": self.disparity_ci,
            "random_state": self.random_state,
            "min_group_size": self.min_group_size,
            "labels_pending": self.labels_pending,
            "attributes": list(self.attributes),
            "rows": [r.to_dict() for r in self.rows],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutcomeResult:
        """Inverse of :meth:`to_dict` (keys added later default: ``disparity_ci`` reads as
        ``"percentile"``, the only method before it existed).

        >>> r = OutcomeResult((), 0.95, 0, "percentile", 0, 30, False)
        >>> OutcomeResult.from_dict(r.to_dict()) == r
        True
        """
        return cls(
            rows=tuple(MetricRow.from_dict(r) for r in data.get("rows", ())),
            confidence=float(data["confidence"]), n_bootstrap=int(data["n_bootstrap"]),
            ci_method=str(data.get("ci_method", "percentile")), random_state=data.get("random_state"),
            min_group_size=int(data["min_group_size"]), labels_pending=bool(data["labels_pending"]),
            attributes=tuple(data.get("attributes", ())), disparity_ci=str(data.get("disparity_ci", "percentile")),
        )
