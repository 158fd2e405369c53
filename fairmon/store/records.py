"""Typed records: what the pipeline and the methods hand to the store, and what the store hands back.

Why records instead of SQL or DataFrames: the store owns every table definition, so the rest of
fairmon speaks these small frozen dataclasses and never writes SQL. Fields that only the database
assigns (``run_id``, ``window_start`` on result rows, timestamps) default to ``None`` and are filled
when a record is read back. Validation happens here, where a bad value is cheapest to explain.

Keys (what makes a row unique within a window) — duplicates inside one :class:`WindowRecords` are
refused:

- :class:`MetricRecord`: ``(metric, attribute, group)``
- :class:`EvidenceRecord`: ``method``
- :class:`ExplanationMetricRecord`: ``(family, metric, explainer, group)``
- :class:`FindingRecord`: ``(kind, metric, attribute, group)``
- :class:`FEUCandidateRecord`: ``candidate_index``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.store._fields import (
    ERR_DUPLICATE_KEY,
    ERR_FIELD,
    ERR_NAIVE_TIME,
    NEXT_STEP,
    RESULT_STATUSES,
    AlertKind,
    AlertState,
    ExplanationFamily,
    FindingStatus,
    RecordError,
    RunStatus,
    Severity,
    check_literal,
    field_error,
    finite_or_none,
    nonneg_int,
    set_field,
    stored_results_status,
    utc,
)
from fairmon.store._lifecycle_records import AlertRecord, FEUCandidateRecord

__all__ = [
    "RunStatus",
    "RESULT_STATUSES",
    "NEXT_STEP",
    "stored_results_status",
    "Severity",
    "FindingStatus",
    "AlertKind",
    "AlertState",
    "RecordError",
    "ERR_FIELD",
    "ERR_NAIVE_TIME",
    "ERR_DUPLICATE_KEY",
    "RunRecord",
    "MetricRecord",
    "EvidenceRecord",
    "ExplanationMetricRecord",
    "FindingRecord",
    "AlertRecord",
    "FEUCandidateRecord",
    "WindowRecords",
    "utc",
]


@dataclass(frozen=True)
class RunRecord:
    """One monitoring window of one monitor.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> RunRecord("demo", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)).status
    'succeeded'
    """

    monitor: str
    window_start: datetime
    window_end: datetime
    status: RunStatus = "succeeded"
    model_version: str | None = None
    spec_fingerprint: str | None = None
    n_rows: int | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    # filled on read
    run_id: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    #: the attempt holding the run; on a write: the writing attempt (refused when another holds it)
    attempt_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.monitor, str) or not self.monitor:
            raise field_error("RunRecord", "monitor", "empty", self.monitor)
        set_field(self, "window_start", utc(self.window_start, record="RunRecord", name="window_start"))
        set_field(self, "window_end", utc(self.window_end, record="RunRecord", name="window_end"))
        if self.window_end <= self.window_start:
            raise field_error("RunRecord", "window_end", "must be after window_start", self.window_end)
        check_literal(self.status, RunStatus, "RunRecord", "status")
        set_field(self, "n_rows", nonneg_int(self.n_rows, "RunRecord", "n_rows"))
        try:
            set_field(self, "timings", {str(k): float(v) for k, v in dict(self.timings).items()})
        except (TypeError, ValueError):
            raise field_error("RunRecord", "timings", "must map step -> seconds", self.timings) from None
        set_field(self, "details", dict(self.details))


@dataclass(frozen=True)
class MetricRecord:
    """An outcome-fairness number with its CI: ``selection_rate`` of ``sex=Female``, ``dp_difference`` of ``sex``.

    ``attribute`` is the protected attribute (``'sex&race'`` for an intersection, ``''`` overall) and
    ``group`` the group value (``''`` for attribute-level metrics such as a difference). ``value=None``
    (or NaN) means undefined — stored as NULL, never as 0.

    Examples
    --------
    >>> MetricRecord("dp_difference", 0.12, attribute="sex", ci_low=0.08, ci_high=0.16, n=5000).group
    ''
    """

    metric: str
    value: float | None
    attribute: str = ""
    group: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    n_nan: int | None = None
    run_id: int | None = None
    window_start: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.metric, self.attribute, self.group)

    def __post_init__(self) -> None:
        if not self.metric:
            raise field_error("MetricRecord", "metric", "empty", self.metric)
        for name in ("value", "ci_low", "ci_high"):
            set_field(self, name, finite_or_none(getattr(self, name), "MetricRecord", name))
        for name in ("n", "n_nan"):
            set_field(self, name, nonneg_int(getattr(self, name), "MetricRecord", name))


@dataclass(frozen=True)
class EvidenceRecord:
    """RUMIE evidence of one window and method (``ie``, ``ie-dt``, ``enum``).

    ``rules`` is the structured rule set (jsonb), ``rules_text`` the human-readable form used in
    alerts; ``group_overlap`` is the pipeline's measured overlap with the previous window's group
    (optional; feeds the ``rumie_rule_changes`` view).

    Examples
    --------
    >>> EvidenceRecord("ie-dt", 0.31, key_attributes=["age"], rules_text="age <= 25").key_attributes
    ('age',)
    """

    method: str
    dscore: float | None
    honest_dscore: float | None = None
    p_value: float | None = None
    key_attributes: Sequence[str] = ()
    rules: Any = None
    rules_text: str | None = None
    tree: Any = None
    group_size: int | None = None
    group_fraction: float | None = None
    p_fav_in: float | None = None
    p_fav_out: float | None = None
    n: int | None = None
    group_overlap: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    run_id: int | None = None
    window_start: datetime | None = None

    @property
    def key(self) -> str:
        return self.method

    def __post_init__(self) -> None:
        if not self.method:
            raise field_error("EvidenceRecord", "method", "empty", self.method)
        for name in (
            "dscore",
            "honest_dscore",
            "p_value",
            "group_fraction",
            "p_fav_in",
            "p_fav_out",
            "group_overlap",
        ):
            set_field(self, name, finite_or_none(getattr(self, name), "EvidenceRecord", name))
        for name in ("group_size", "n"):
            set_field(self, name, nonneg_int(getattr(self, name), "EvidenceRecord", name))
        if isinstance(self.key_attributes, str):
            raise field_error("EvidenceRecord", "key_attributes", "a sequence of names", self.key_attributes)
        set_field(self, "key_attributes", tuple(str(a) for a in self.key_attributes))
        set_field(self, "details", dict(self.details))


@dataclass(frozen=True)
class ExplanationMetricRecord:
    """A GESD or OpenXAI number.

    GESD: one ``family="gesd", metric="gesd"`` row per sensitive attribute with ``group=<attribute>``
    (windows stored before GESD covered every attribute have ``group=""`` and the attribute in
    ``details["attribute"]``; :attr:`gesd_attribute` reads both), ``group_stability={"Female": 0.81,
    "Male": 0.86}``, ``p_value`` from Mann–Whitney U; ``metric="stability"`` rows per group
    (``group="sex=Female"``). OpenXAI: one row per ``(metric, explainer, group)``: ``group=""`` over
    all sampled rows, ``"sex=Female"`` per group, and the disparity ``<METRIC>_fairness`` with
    ``group="sex"``. An undefined value is None with the reason in ``details["status"]``.

    Examples
    --------
    >>> ExplanationMetricRecord("gesd", "gesd", 0.05, explainer="shap", group="sex").gesd_attribute
    'sex'
    """

    family: ExplanationFamily
    metric: str
    value: float | None
    explainer: str = ""
    group: str = ""
    p_value: float | None = None
    n: int | None = None
    n_nan: int | None = None
    group_stability: Mapping[str, float] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    run_id: int | None = None
    window_start: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.family, self.metric, self.explainer, self.group)

    @property
    def gesd_attribute(self) -> str | None:
        """The sensitive attribute of a GESD value row (``""`` when unknown); None for any other row."""
        if self.family != "gesd" or self.metric != "gesd":
            return None
        return self.group or str(self.details.get("attribute") or "")

    def __post_init__(self) -> None:
        check_literal(self.family, ExplanationFamily, "ExplanationMetricRecord", "family")
        if not self.metric:
            raise field_error("ExplanationMetricRecord", "metric", "empty", self.metric)
        for name in ("value", "p_value"):
            set_field(self, name, finite_or_none(getattr(self, name), "ExplanationMetricRecord", name))
        for name in ("n", "n_nan"):
            set_field(self, name, nonneg_int(getattr(self, name), "ExplanationMetricRecord", name))
        if self.group_stability is not None:
            set_field(
                self,
                "group_stability",
                {
                    str(k): finite_or_none(v, "ExplanationMetricRecord", "group_stability")
                    for k, v in self.group_stability.items()
                },
            )
        set_field(self, "details", dict(self.details))


@dataclass(frozen=True)
class FindingRecord:
    """A drift decision at one window, with the numbers behind it.

    ``status``: ``pending`` (violated, not yet persistent), ``open`` (a drift starts), ``ongoing``,
    ``resolved`` (cleared at this window) or ``event`` (one-off, e.g. data validation). ``group`` is
    the series' group key as the drift code names it (``"sex"`` for ``dp_difference``); ``attribute``
    is optional. :meth:`from_finding` converts a :class:`fairmon.drift.findings.Finding`.

    Examples
    --------
    >>> FindingRecord("ci_outside_range", "dp_difference", "warning", group="sex", value=0.21).status
    'open'
    """

    kind: str
    metric: str
    severity: Severity
    status: FindingStatus = "open"
    attribute: str = ""
    group: str = ""
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    baseline: float | None = None
    since: datetime | None = None
    fingerprint: str | None = None
    numbers: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""
    run_id: int | None = None
    window_start: datetime | None = None
    monitor: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.metric, self.attribute, self.group)

    def __post_init__(self) -> None:
        if not self.kind or not self.metric:
            raise field_error("FindingRecord", "kind/metric", "empty", (self.kind, self.metric))
        check_literal(self.severity, Severity, "FindingRecord", "severity")
        check_literal(self.status, FindingStatus, "FindingRecord", "status")
        for name in ("value", "ci_low", "ci_high", "baseline"):
            set_field(self, name, finite_or_none(getattr(self, name), "FindingRecord", name))
        if self.since is not None:
            set_field(self, "since", utc(self.since, record="FindingRecord", name="since"))
        set_field(self, "numbers", dict(self.numbers))

    @classmethod
    def from_finding(cls, finding: Any) -> FindingRecord:
        """Convert a drift ``Finding`` (duck-typed: kind, metric, group, severity, status, value, ci,
        baseline, since, fingerprint, numbers, message; ``notify`` goes into ``numbers``)."""
        ci = getattr(finding, "ci", None)
        numbers = dict(getattr(finding, "numbers", {}) or {})
        if hasattr(finding, "notify"):
            numbers.setdefault("notify", bool(finding.notify))
        return cls(
            kind=finding.kind,
            metric=finding.metric,
            severity=finding.severity,
            status=finding.status,
            group=getattr(finding, "group", "") or "",
            value=getattr(finding, "value", None),
            ci_low=None if ci is None else ci[0],
            ci_high=None if ci is None else ci[1],
            baseline=getattr(finding, "baseline", None),
            since=getattr(finding, "since", None),
            fingerprint=getattr(finding, "fingerprint", None),
            numbers=numbers,
            message=getattr(finding, "message", "") or "",
        )


@dataclass(frozen=True)
class WindowRecords:
    """Everything one window writes, in one transaction (see :meth:`Store.write_window`).

    Writing replaces the window's metrics, evidence, explanation metrics and findings; FEU candidates
    and alerts have their own lifecycles (:meth:`Store.save_feu_candidates`, the outbox).

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> run = RunRecord("demo", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
    >>> len(WindowRecords(run, metrics=[MetricRecord("dp_difference", 0.1, attribute="sex")]).metrics)
    1
    """

    run: RunRecord
    metrics: Sequence[MetricRecord] = ()
    evidence: Sequence[EvidenceRecord] = ()
    explanation_metrics: Sequence[ExplanationMetricRecord] = ()
    findings: Sequence[FindingRecord] = ()

    def __post_init__(self) -> None:
        for name, kind in (
            ("metrics", MetricRecord),
            ("evidence", EvidenceRecord),
            ("explanation_metrics", ExplanationMetricRecord),
            ("findings", FindingRecord),
        ):
            items = tuple(getattr(self, name))
            seen: set[Any] = set()
            for item in items:
                if not isinstance(item, kind):
                    raise field_error("WindowRecords", name, f"expects {kind.__name__}", item)
                if item.key in seen:
                    raise RecordError(ERR_DUPLICATE_KEY.format(record=kind.__name__, key=item.key))
                seen.add(item.key)
            set_field(self, name, items)
        has_results = any(getattr(self, n) for n in ("metrics", "evidence", "explanation_metrics"))
        if has_results and self.run.status not in RESULT_STATUSES:
            raise field_error(
                "WindowRecords",
                "run.status",
                f"a {self.run.status} window carries no results (use Store.mark_run)",
                self.run.status,
            )
