"""What a run report shows, read back from the store (so any report can be rebuilt later).

A report never reads step artifacts: everything comes from the rows one window wrote (run, metrics,
RUMIE evidence with its tree JSON, GESD/OpenXAI rows, findings, FEU candidates, alerts) plus the
trend of earlier windows of the same monitor. :func:`load_report_data` gathers them into one
:class:`ReportData`; :mod:`fairmon.report.render` turns that into HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fairmon._numbers import finite_float
from fairmon.errors import ConfigError
from fairmon.window import parse_date

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.store import (
        AlertRecord,
        AttributionGapRecord,
        EvidenceRecord,
        ExplanationMetricRecord,
        FEUCandidateRecord,
        FindingRecord,
        MetricRecord,
        RescoreRecord,
        RunRecord,
        Store,
    )

__all__ = [
    "ReportData",
    "TrendPoint",
    "load_report_data",
    "report_status",
    "ERR_NO_RUN",
    "ERR_NO_RUNS",
    "DEFAULT_HISTORY",
]

ERR_NO_RUN = "monitor {monitor!r} has no run for the window starting {window}; runs: {known}"
ERR_NO_RUNS = "monitor {monitor!r} has no runs in the store"
#: how many windows (this one included) the trend charts show by default
DEFAULT_HISTORY = 60
#: run statuses whose rows carry results
_RESULT = ("succeeded", "labels_pending")
#: finding statuses that mean "a drift is active at this window"
_ACTIVE = ("open", "ongoing")


@dataclass(frozen=True)
class TrendPoint:
    """The key numbers of one window for the trend charts (None = not computed / undefined).

    ``dp_difference``/``dp_ratio`` map attribute → (value, ci_low, ci_high), ``gesd`` attribute → GESD
    (None when undefined); ``drift`` says whether a warning or critical finding was open or ongoing at
    that window (:func:`report_status` ``drift``); ``spec_changed`` that the window was computed under
    another spec than the series' previous window (a stored spec_changed event).
    """

    window_start: datetime
    status: str
    model_version: str | None
    dp_difference: dict[str, tuple[float | None, float | None, float | None]] = field(default_factory=dict)
    dp_ratio: dict[str, tuple[float | None, float | None, float | None]] = field(default_factory=dict)
    dscore: float | None = None
    honest_dscore: float | None = None
    gesd: dict[str, float | None] = field(default_factory=dict)
    drift: bool = False
    spec_changed: bool = False


@dataclass(frozen=True)
class ReportData:
    """Everything one window's report shows.

    Examples
    --------
    >>> from fairmon.store import open_store  # doctest: +SKIP
    >>> data = load_report_data(open_store(), "demo", "2026-01-07")  # doctest: +SKIP
    >>> data.run.status, len(data.trend)  # doctest: +SKIP
    ('succeeded', 7)
    """

    run: RunRecord
    metrics: tuple[MetricRecord, ...] = ()
    evidence: tuple[EvidenceRecord, ...] = ()
    explanations: tuple[ExplanationMetricRecord, ...] = ()
    findings: tuple[FindingRecord, ...] = ()
    feu: tuple[FEUCandidateRecord, ...] = ()
    #: what the FEU candidates were compared with (``Store.feu_baselines``): name -> validation/test metrics
    feu_baselines: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    alerts: tuple[AlertRecord, ...] = ()
    trend: tuple[TrendPoint, ...] = ()
    rumie_method: str = "ie-dt"
    #: the monitor's allowed ranges ``(metric, low, high, judge)`` when its spec is known (the report
    #: marks each disparity with its range and whether the interval or the value is judged)
    allowed_ranges: tuple[tuple[str, float, float, str], ...] = ()
    attribution_gaps: tuple[AttributionGapRecord, ...] = ()
    rescores: tuple[RescoreRecord, ...] = ()
    #: without candidates of its own: the latest earlier window (within the trend's history) that has FEU
    #: candidates — FEU runs when a drift opens, not on every window it stays open
    feu_latest_window: datetime | None = None

    @property
    def monitor(self) -> str:
        return self.run.monitor

    @property
    def main_evidence(self) -> EvidenceRecord | None:
        """The evidence of the monitor's RUMIE method (else the first one stored)."""
        for ev in self.evidence:
            if ev.method == self.rumie_method:
                return ev
        return self.evidence[0] if self.evidence else None

    @property
    def gesd(self) -> dict[str, ExplanationMetricRecord]:
        """The window's GESD value rows keyed by sensitive attribute (sorted)."""
        found = {x.gesd_attribute: x for x in self.explanations if x.gesd_attribute is not None}
        return {a: found[a] for a in sorted(found)}

    @property
    def status(self) -> str:
        return report_status(self.run.status, self.findings)


def report_status(run_status: str, findings: Sequence[FindingRecord]) -> str:
    """One word for the window: ``drift`` / ``watch`` / ``ok``, or the run status when it has no results.

    ``drift``: a warning or critical finding is open or ongoing; ``watch``: an informational finding
    is active, a violation is pending persistence, or an event was recorded; ``ok``: nothing found.

    >>> report_status("failed", [])
    'failed'
    >>> report_status("succeeded", [])
    'ok'
    """
    if run_status not in _RESULT:
        return run_status
    if any(f.status in _ACTIVE and f.severity != "info" for f in findings):
        return "drift"
    if any(f.status in (*_ACTIVE, "pending", "event") for f in findings):
        return "watch"
    return "ok"


def _trend_point(store: Store, run: RunRecord, method: str, spec_changed: frozenset[datetime] = frozenset()) -> TrendPoint:
    rid = int(run.run_id or 0)
    dpd: dict[str, tuple[float | None, float | None, float | None]] = {}
    dpr: dict[str, tuple[float | None, float | None, float | None]] = {}
    dscore = honest = None
    gesd: dict[str, float | None] = {}
    drift = False
    if run.status in _RESULT:
        for m in store.metrics_of_run(rid):
            if m.group == "" and m.metric in ("dp_difference", "dp_ratio"):
                (dpd if m.metric == "dp_difference" else dpr)[m.attribute] = (m.value, m.ci_low, m.ci_high)
        evs = store.evidence_of_run(rid)
        ev = next((e for e in evs if e.method == method), evs[0] if evs else None)
        if ev is not None:
            dscore, honest = ev.dscore, ev.honest_dscore
        for x in store.explanation_metrics_of_run(rid):
            if x.gesd_attribute is not None:
                gesd[x.gesd_attribute] = finite_float(x.value)
        drift = report_status(run.status, store.findings_of_run(rid)) == "drift"
    return TrendPoint(
        window_start=run.window_start,
        status=run.status,
        model_version=run.model_version,
        dp_difference=dpd,
        dp_ratio=dpr,
        dscore=finite_float(dscore),
        honest_dscore=finite_float(honest),
        gesd=gesd,
        drift=drift,
        spec_changed=run.window_start in spec_changed,
    )


def _parse_window(window: datetime | str) -> datetime:
    return parse_date(window) if isinstance(window, str) else window


def load_report_data(
    store: Store,
    monitor: str,
    window: datetime | str | None = None,
    *,
    rumie_method: str | None = None,
    history: int = DEFAULT_HISTORY,
    allowed_ranges: Mapping[str, Any] | None = None,
) -> ReportData:
    """Read one window's report contents from the store.

    Parameters
    ----------
    store : Store
        The fairmon store.
    monitor : str
        Monitor name.
    window : datetime or str, optional
        Start of the window (``"2026-01-07"`` or an aware datetime); None = the latest run.
    rumie_method : str, optional
        Which evidence row is the headline (default ``ie-dt``; the pipeline stores one row, the
        spec's method, which is used when no row has this method).
    history : int
        Windows shown in the trend charts (this one and the ones before it).
    allowed_ranges : mapping, optional
        The spec's ``drift.allowed_ranges`` (metric → :class:`fairmon.config.AllowedRange`): the
        report shows each disparity's range and how it is judged (the store does not hold the spec).

    Raises
    ------
    ConfigError
        The monitor has no run for that window (the message lists the windows it has).
    """
    runs = store.runs(monitor)
    if not runs:
        raise ConfigError(ERR_NO_RUNS.format(monitor=monitor))
    if window is None:
        run = runs[-1]
    else:
        ws = _parse_window(window)
        match = [r for r in runs if r.window_start == ws]
        if not match and isinstance(window, str) and "T" not in window:  # a date: that day's window
            match = [r for r in runs if r.window_start.date() == ws.date()]
        if not match:
            known = ", ".join(f"{r.window_start:%Y-%m-%d}" for r in runs[-10:])
            raise ConfigError(ERR_NO_RUN.format(monitor=monitor, window=ws.isoformat(), known=known or "none"))
        run = match[-1]
    method = rumie_method or "ie-dt"
    rid = int(run.run_id or 0)
    earlier = [r for r in runs if r.window_start <= run.window_start][-max(1, int(history)) :]
    changed = frozenset(c.window_start for c in store.spec_changes(monitor))
    trend = tuple(_trend_point(store, r, method, changed) for r in earlier)
    alerts = tuple(
        a
        for a in store.alerts(monitor, since=run.window_start)
        if a.window_start is not None and a.window_start == run.window_start
    )
    feu = tuple(store.feu_candidates(rid))
    feu_latest = None
    if not feu:
        feu_latest = next((r.window_start for r in reversed(earlier[:-1])
                           if r.run_id is not None and store.feu_candidates(int(r.run_id))), None)
    return ReportData(
        run=run,
        metrics=tuple(store.metrics_of_run(rid)),
        evidence=tuple(store.evidence_of_run(rid)),
        explanations=tuple(store.explanation_metrics_of_run(rid)),
        findings=tuple(store.findings_of_run(rid)),
        feu=feu,
        feu_latest_window=feu_latest,
        feu_baselines=store.feu_baselines(rid),
        alerts=alerts,
        trend=trend,
        rumie_method=method,
        allowed_ranges=tuple(
            (str(m), float(r.low), float(r.high), str(r.judge)) for m, r in sorted((allowed_ranges or {}).items())
        ),
        attribution_gaps=tuple(store.attribution_gaps_of_run(rid)),
        rescores=tuple(store.rescores_of_run(rid)),
    )
