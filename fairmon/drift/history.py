"""The drift decision's view of the past: earlier windows' summaries and the reference window.

Read through a small :class:`HistoryReader` protocol — the few store reads the decision needs — so the
history is assembled the same way from the Postgres store (:class:`fairmon.store.Store` implements the
protocol) and from memory (:class:`InMemoryHistory`, for tests and benchmarks). Stored RUMIE evidence
comes back as the :class:`~fairmon.fairness.rumie.Evidence` the window computed
(:func:`fairmon.results.evidence_from_record`).

Examples
--------
>>> from datetime import UTC, datetime
>>> from fairmon.store.records import MetricRecord, RunRecord
>>> t = datetime(2026, 1, 1, tzinfo=UTC)
>>> mem = InMemoryHistory()
>>> run = mem.add_run(RunRecord("m", t, t.replace(day=2)), metrics=[MetricRecord("dp_difference", 0.1,
...                   attribute="sex", ci_low=0.05, ci_high=0.15, n=100)])
>>> hist, short = history_summaries(mem, "m", t.replace(day=9), lead=5)
>>> [h.measurements()[("dp_difference", "sex")].value for h in hist], short
([0.1], None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from fairmon.drift.findings import finding_key
from fairmon.drift.window import WindowSummary
from fairmon.results import evidence_from_record
from fairmon.store.records import (
    RESULT_STATUSES,
    EvidenceRecord,
    ExplanationMetricRecord,
    FindingRecord,
    MetricRecord,
    RunRecord,
)

__all__ = [
    "HistoryReader",
    "InMemoryHistory",
    "MAX_HISTORY_WINDOWS",
    "summary_from_store",
    "history_summaries",
    "reference_summary",
    "open_drift_since",
    "ERR_HISTORY_CAPPED",
]

#: most earlier windows one drift decision loads (a drift open longer than this loses its baseline)
MAX_HISTORY_WINDOWS = 400

ERR_HISTORY_CAPPED = (
    "drift history capped at {cap} windows: the oldest open drift of {monitor} began {oldest}, {drifted} "
    "completed windows ago, and {lead} more before it are needed for its trailing baseline; the baseline "
    "of the drifting series now holds drifted windows, so the significance test may stop firing although "
    "the drift goes on (the allowed-range rules are unaffected)"
)


class HistoryReader(Protocol):
    """The store reads drift history needs (:class:`fairmon.store.Store` has them)."""

    def completed_runs_before(self, monitor: str, window_start: datetime, n: int) -> list[RunRecord]: ...

    def runs(self, monitor: str, *, since: datetime | None = None, until: datetime | None = None,
             statuses: Sequence[str] | None = None) -> list[RunRecord]: ...

    def get_run(self, monitor: str, window_start: datetime, window_end: datetime | None = None) -> RunRecord | None: ...

    def metrics_of_run(self, run_id: int) -> list[MetricRecord]: ...

    def evidence_of_run(self, run_id: int) -> list[EvidenceRecord]: ...

    def explanation_metrics_of_run(self, run_id: int) -> list[ExplanationMetricRecord]: ...

    def open_findings(self, monitor: str, *, before: datetime | None = None) -> list[FindingRecord]: ...


@dataclass
class InMemoryHistory:
    """A :class:`HistoryReader` over records held in memory (runs get ids in the order added)."""

    run_records: list[RunRecord] = field(default_factory=list)
    metrics: dict[int, list[MetricRecord]] = field(default_factory=dict)
    evidence: dict[int, list[EvidenceRecord]] = field(default_factory=dict)
    explanations: dict[int, list[ExplanationMetricRecord]] = field(default_factory=dict)
    findings: list[FindingRecord] = field(default_factory=list)

    def add_run(self, run: RunRecord, *, metrics: Sequence[MetricRecord] = (),
                evidence: Sequence[EvidenceRecord] = (),
                explanations: Sequence[ExplanationMetricRecord] = ()) -> RunRecord:
        """Store a run with its results; returns the run with its ``run_id``."""
        stored = replace(run, run_id=len(self.run_records) + 1)
        self.run_records.append(stored)
        rid = int(stored.run_id or 0)
        self.metrics[rid], self.evidence[rid], self.explanations[rid] = list(metrics), list(evidence), list(explanations)
        return stored

    def completed_runs_before(self, monitor: str, window_start: datetime, n: int) -> list[RunRecord]:
        done = self.runs(monitor, until=window_start, statuses=RESULT_STATUSES)
        return done[-n:] if n > 0 else []

    def runs(self, monitor: str, *, since: datetime | None = None, until: datetime | None = None,
             statuses: Sequence[str] | None = None) -> list[RunRecord]:
        out = [r for r in self.run_records if r.monitor == monitor
               and (since is None or r.window_start >= since) and (until is None or r.window_start < until)
               and (statuses is None or r.status in statuses)]
        return sorted(out, key=lambda r: (r.window_start, r.window_end))

    def get_run(self, monitor: str, window_start: datetime, window_end: datetime | None = None) -> RunRecord | None:
        return next((r for r in self.run_records if r.monitor == monitor and r.window_start == window_start
                     and (window_end is None or r.window_end == window_end)), None)

    def metrics_of_run(self, run_id: int) -> list[MetricRecord]:
        return list(self.metrics.get(run_id, ()))

    def evidence_of_run(self, run_id: int) -> list[EvidenceRecord]:
        return list(self.evidence.get(run_id, ()))

    def explanation_metrics_of_run(self, run_id: int) -> list[ExplanationMetricRecord]:
        return list(self.explanations.get(run_id, ()))

    def open_findings(self, monitor: str, *, before: datetime | None = None) -> list[FindingRecord]:
        latest: dict[tuple[str, str, str, str], FindingRecord] = {}
        for f in sorted(self.findings, key=lambda f: f.window_start or datetime.min):
            if f.monitor == monitor and (before is None or (f.window_start is not None and f.window_start < before)):
                latest[f.key] = f
        return [f for f in latest.values() if f.status in ("open", "ongoing")]


def summary_from_store(reader: HistoryReader, run: RunRecord, *, method: str = "ie-dt",
                       ci_level: float = 0.95) -> WindowSummary:
    """The :class:`WindowSummary` of a stored window: its metrics, the evidence of ``method`` (else the
    first stored), GESD per sensitive attribute and the group overlap.

    The store keeps the intervals, not their level: earlier windows were computed at the spec's
    ``outcome.confidence`` (``ci_level``).
    """
    rid = int(run.run_id or 0)
    metrics = [
        {"metric": m.metric, "attribute": m.attribute, "group": m.group if m.group != "" else None,
         "value": m.value, "ci_low": m.ci_low, "ci_high": m.ci_high, "n": m.n, "status": "ok"}
        for m in reader.metrics_of_run(rid)
        if m.value is not None
    ]
    evs = reader.evidence_of_run(rid)
    ev = next((e for e in evs if e.method == method), evs[0] if evs else None)
    gesd = {  # per sensitive attribute, as the window computed it
        x.gesd_attribute: {"value": x.value, "p_value": x.p_value, "groups": x.group_stability,
                           "noise_floor": (x.details or {}).get("noise_floor")}
        for x in reader.explanation_metrics_of_run(rid)
        if x.gesd_attribute is not None
    }
    return WindowSummary(
        monitor=run.monitor,
        window_start=run.window_start,
        window_end=run.window_end,
        metrics=metrics,
        evidence=evidence_from_record(ev) if ev is not None else None,
        gesd=gesd or None,
        group_overlap=ev.group_overlap if ev is not None else None,
        model_version=run.model_version,
        ci_level=ci_level,
    )


def history_summaries(
    reader: HistoryReader, monitor: str, window_start: datetime, *, lead: int,
    open_since: Mapping[str, datetime] | None = None, method: str = "ie-dt", ci_level: float = 0.95,
    max_windows: int | None = None,
) -> tuple[list[WindowSummary], str | None]:
    """Completed windows that start before ``window_start`` (the drift history), oldest first, and why
    the history is short (None when it is not).

    ``lead`` windows (the baseline plus the persistence/cooldown replay) counted back from the start
    of the oldest drift still open (``open_since``, :func:`open_drift_since`), not from this window:
    the trailing baseline of a drifting series is its windows before the drift
    (:mod:`fairmon.drift.policy`), and the replay can only tell them apart when it sees the drift
    begin. At most ``max_windows`` (:data:`MAX_HISTORY_WINDOWS`); when that cap cuts the history after
    the drift began, the drifted windows end up as the baseline and the reason says so.
    """
    cap = MAX_HISTORY_WINDOWS if max_windows is None else max_windows
    n, short = lead, None
    if open_since:
        oldest = min(open_since.values())
        drifted = reader.runs(monitor, since=oldest, until=window_start, statuses=RESULT_STATUSES)
        n = lead + len(drifted)
        if n > cap:
            short = ERR_HISTORY_CAPPED.format(cap=cap, monitor=monitor, oldest=oldest.isoformat(),
                                              drifted=len(drifted), lead=lead)
            n = cap
    runs = reader.completed_runs_before(monitor, window_start, n)
    return [summary_from_store(reader, r, method=method, ci_level=ci_level)
            for r in runs if r.window_end <= window_start], short


def reference_summary(
    reader: HistoryReader, reference: WindowSummary, *, method: str = "ie-dt", ci_level: float = 0.95
) -> WindowSummary:
    """The stored run of the reference window (:func:`fairmon.drift.reference_window`).

    One that is not completed (failed, data_invalid, not run yet, ...) comes back without results and
    with that status, so the decision can say why there is no baseline — also when a failed re-run kept
    an earlier attempt's rows (:meth:`~fairmon.store.Store.completed_runs_before` says why).
    """
    run = reader.get_run(reference.monitor, reference.window_start, reference.window_end)
    if run is None:
        return WindowSummary(reference.monitor, reference.window_start, reference.window_end, status="not run yet")
    if run.status in RESULT_STATUSES:  # labels_pending too: everything but the label metrics is there
        return summary_from_store(reader, run, method=method, ci_level=ci_level)
    return WindowSummary(reference.monitor, reference.window_start, reference.window_end, status=run.status)


def open_drift_since(reader: HistoryReader, monitor: str, before: datetime) -> dict[str, datetime]:
    """Finding key → ``since`` of the drifts still open at the latest decision before ``before``.

    A drift can outlast the history the replay sees; its start is the one recorded when it opened.
    """
    return {
        finding_key(f.kind, f.metric, f.group): f.since
        for f in reader.open_findings(monitor, before=before)
        if f.since is not None
    }
