"""Reads of runs and of one run's results (the report, the CLI, a window's own later steps)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from fairmon.store._base import ERR_UNKNOWN_RUN, StoreBase
from fairmon.store._rows import (
    EVIDENCE_COLUMNS,
    EXPLANATION_COLUMNS,
    METRIC_COLUMNS,
    evidence_from_row,
    explanation_from_row,
    finding_from_row,
    finding_select,
    metric_from_row,
    run_from_row,
    run_select,
)
from fairmon.store._tables import evidence, explanation_metrics, findings, metric_latest, metrics, monitors
from fairmon.store._tables import runs as runs_table
from fairmon.store.records import (
    RESULT_STATUSES,
    EvidenceRecord,
    ExplanationMetricRecord,
    FindingRecord,
    MetricRecord,
    RecordError,
    RunRecord,
    WindowRecords,
    utc,
)

__all__ = ["RunReads"]

_R = runs_table.c


class RunReads(StoreBase):
    """:meth:`get_run`, :meth:`runs`, :meth:`completed_runs_before`, ``*_of_run``, :meth:`read_window`."""

    def _runs_where(
        self, *where: sa.ColumnElement[bool], order: Sequence[Any], limit: int | None = None
    ) -> list[RunRecord]:
        stmt = run_select().where(*where).order_by(*order)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._read() as conn:
            return [run_from_row(r) for r in conn.execute(stmt).mappings()]

    def get_run(
        self, monitor: str, window_start: datetime, window_end: datetime | None = None
    ) -> RunRecord | None:
        """The run of a monitor's window (``window_end`` optional when the start is unambiguous).

        Examples
        --------
        >>> store.get_run("demo", datetime(2026, 1, 1, tzinfo=UTC)).status  # doctest: +SKIP
        'succeeded'
        """
        where = [monitors.c.name == monitor, _R.window_start == utc(window_start, name="window_start")]
        if window_end is not None:
            where.append(_R.window_end == utc(window_end, name="window_end"))
        found = self._runs_where(*where, order=[_R.window_end.desc()], limit=1)
        return found[0] if found else None

    def get_run_by_id(self, run_id: int) -> RunRecord | None:
        """The run with this ``run_id``, or ``None``.

        Examples
        --------
        >>> store.get_run_by_id(1).monitor  # doctest: +SKIP
        'demo'
        """
        found = self._runs_where(_R.run_id == run_id, order=[])
        return found[0] if found else None

    def runs(
        self,
        monitor: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        statuses: Sequence[str] | None = None,
    ) -> list[RunRecord]:
        """Runs of a monitor with ``since <= window_start < until``, oldest first.

        Examples
        --------
        >>> [r.status for r in store.runs("demo", statuses=["failed"])]  # doctest: +SKIP
        ['failed']
        """
        where = [monitors.c.name == monitor]
        if since is not None:
            where.append(_R.window_start >= utc(since, name="since"))
        if until is not None:
            where.append(_R.window_start < utc(until, name="until"))
        if statuses is not None:
            where.append(_R.status.in_(list(statuses)))
        return self._runs_where(*where, order=[_R.window_start, _R.window_end])

    def completed_runs_before(
        self, monitor: str, window_start: datetime, n: int, *, statuses: Sequence[str] = RESULT_STATUSES
    ) -> list[RunRecord]:
        """The ``n`` latest runs that started strictly before ``window_start`` with a completed status.

        Oldest first. Drift decisions use only these, so re-running an old window never sees — and
        never rewrites — the decisions of later windows. Completed means the window's results are
        stored: ``succeeded`` and ``labels_pending`` (everything but the label-based metrics, which a
        monitor with late labels lacks for months; leaving those windows out would keep its drift
        checks in cold start forever). A window whose latest attempt failed is not one, though it may
        keep an earlier attempt's rows (``details.results_kept``): its status says its run or its data
        failed now, and a baseline must not rest on it.

        Examples
        --------
        >>> len(store.completed_runs_before("demo", datetime(2026, 2, 1, tzinfo=UTC), 7))  # doctest: +SKIP
        7
        """
        latest_first = self._runs_where(
            monitors.c.name == monitor,
            _R.window_start < utc(window_start, name="window_start"),
            _R.status.in_(list(statuses)),
            order=[_R.window_start.desc()],
            limit=int(n),
        )
        return list(reversed(latest_first))

    # ------------------------------------------------------------------ results of one run
    def metrics_of_run(self, run_id: int) -> list[MetricRecord]:
        """Metrics of a run ordered by (metric, attribute, group).

        Examples
        --------
        >>> [m.metric for m in store.metrics_of_run(1)]  # doctest: +SKIP
        ['dp_difference', 'selection_rate', 'selection_rate']
        """
        m = metrics.c
        stmt = (
            sa.select(*METRIC_COLUMNS).where(m.run_id == run_id).order_by(m.metric, m.attribute, m.group_key)
        )
        with self._read() as conn:
            return [metric_from_row(r) for r in conn.execute(stmt).mappings()]

    def evidence_of_run(self, run_id: int) -> list[EvidenceRecord]:
        """RUMIE evidence of a run, by method.

        Examples
        --------
        >>> store.evidence_of_run(1)[0].method  # doctest: +SKIP
        'ie-dt'
        """
        stmt = sa.select(*EVIDENCE_COLUMNS).where(evidence.c.run_id == run_id).order_by(evidence.c.method)
        with self._read() as conn:
            return [evidence_from_row(r) for r in conn.execute(stmt).mappings()]

    def explanation_metrics_of_run(self, run_id: int) -> list[ExplanationMetricRecord]:
        """GESD and OpenXAI rows of a run ordered by (family, metric, explainer, group).

        Examples
        --------
        >>> store.explanation_metrics_of_run(1)[0].family  # doctest: +SKIP
        'gesd'
        """
        x = explanation_metrics.c
        stmt = (
            sa.select(*EXPLANATION_COLUMNS)
            .where(x.run_id == run_id)
            .order_by(x.family, x.metric, x.explainer, x.group_key)
        )
        with self._read() as conn:
            return [explanation_from_row(r) for r in conn.execute(stmt).mappings()]

    def findings_of_run(self, run_id: int) -> list[FindingRecord]:
        """Drift findings of a run ordered by (kind, metric, attribute, group).

        Examples
        --------
        >>> store.findings_of_run(1)[0].status  # doctest: +SKIP
        'open'
        """
        f = findings.c
        stmt = finding_select().where(f.run_id == run_id).order_by(f.kind, f.metric, f.attribute, f.group_key)
        with self._read() as conn:
            return [finding_from_row(r) for r in conn.execute(stmt).mappings()]

    def read_window(self, run_id: int) -> WindowRecords:
        """Everything a window wrote, as records (for the report).

        Examples
        --------
        >>> store.read_window(1).run.status  # doctest: +SKIP
        'succeeded'
        """
        run = self.get_run_by_id(run_id)
        if run is None:
            raise RecordError(ERR_UNKNOWN_RUN.format(run_id=run_id))
        return WindowRecords(
            run,
            metrics=self.metrics_of_run(run_id),
            evidence=self.evidence_of_run(run_id),
            explanation_metrics=self.explanation_metrics_of_run(run_id),
            findings=self.findings_of_run(run_id),
        )

    def series(self, monitor: str, metric: str | None = None) -> list[tuple[str, str, str]]:
        """``(metric, attribute, group)`` of every metric series a monitor has (from the latest table).

        Examples
        --------
        >>> store.series("demo", "dp_difference")  # doctest: +SKIP
        [('dp_difference', 'sex', '')]
        """
        lt = metric_latest.c
        stmt = (
            sa.select(lt.metric, lt.attribute, lt.group_key)
            .select_from(metric_latest.join(monitors, monitors.c.monitor_id == lt.monitor_id))
            .where(monitors.c.name == monitor)
        )
        if metric is not None:
            stmt = stmt.where(lt.metric == metric)
        with self._read() as conn:
            rows = conn.execute(stmt.order_by(lt.metric, lt.attribute, lt.group_key)).mappings()
            return [(str(r["metric"]), str(r["attribute"]), str(r["group_key"])) for r in rows]
