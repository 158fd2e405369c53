"""Window writes: one window's results in one transaction, replacing (never duplicating) a re-run's rows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from fairmon.store._rows import jsonable
from fairmon.store._runs import LATEST_COLUMNS, RunWrites, latest_source
from fairmon.store._tables import evidence, explanation_metrics, metric_latest, metrics
from fairmon.store._tables import findings as findings_table
from fairmon.store.records import (
    EvidenceRecord,
    ExplanationMetricRecord,
    FindingRecord,
    MetricRecord,
    RecordError,
    WindowRecords,
)

__all__ = ["ERR_NOT_WINDOW_RECORDS", "ERR_DUPLICATE_FINDINGS", "WindowWrites"]

ERR_NOT_WINDOW_RECORDS = "write_window expects WindowRecords, got {type}"
ERR_DUPLICATE_FINDINGS = "write_findings: duplicate finding keys for run {run_id}"


def _keys(run_id: int, mid: int, ws: datetime) -> dict[str, Any]:
    return {"run_id": run_id, "monitor_id": mid, "window_start": ws}


class WindowWrites(RunWrites):
    """:meth:`write_window`, :meth:`write_findings` and :meth:`rebuild_latest_metrics`."""

    def _insert_metrics(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[MetricRecord]
    ) -> None:
        if not rows:
            return
        keys = _keys(run_id, mid, ws)
        conn.execute(
            sa.insert(metrics),
            [
                {
                    **keys,
                    "metric": m.metric,
                    "attribute": m.attribute,
                    "group_key": m.group,
                    "value": m.value,
                    "ci_low": m.ci_low,
                    "ci_high": m.ci_high,
                    "n": m.n,
                    "n_nan": m.n_nan,
                }
                for m in rows
            ],
        )

    def _insert_evidence(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[EvidenceRecord]
    ) -> None:
        if not rows:
            return
        keys = _keys(run_id, mid, ws)
        conn.execute(
            sa.insert(evidence),
            [
                {
                    **keys,
                    "method": e.method,
                    "dscore": e.dscore,
                    "honest_dscore": e.honest_dscore,
                    "p_value": e.p_value,
                    "key_attributes": list(e.key_attributes),
                    "rules": jsonable(e.rules),
                    "rules_text": e.rules_text,
                    "tree": jsonable(e.tree),
                    "group_size": e.group_size,
                    "group_fraction": e.group_fraction,
                    "p_fav_in": e.p_fav_in,
                    "p_fav_out": e.p_fav_out,
                    "n": e.n,
                    "group_overlap": e.group_overlap,
                    "details": jsonable(e.details),
                }
                for e in rows
            ],
        )

    def _insert_explanations(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[ExplanationMetricRecord]
    ) -> None:
        if not rows:
            return
        keys = _keys(run_id, mid, ws)
        conn.execute(
            sa.insert(explanation_metrics),
            [
                {
                    **keys,
                    "family": x.family,
                    "metric": x.metric,
                    "explainer": x.explainer,
                    "group_key": x.group,
                    "value": x.value,
                    "p_value": x.p_value,
                    "n": x.n,
                    "n_nan": x.n_nan,
                    "group_stability": jsonable(x.group_stability),
                    "details": jsonable(x.details),
                }
                for x in rows
            ],
        )

    def _insert_findings(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[FindingRecord]
    ) -> None:
        if not rows:
            return
        keys = _keys(run_id, mid, ws)
        conn.execute(
            sa.insert(findings_table),
            [
                {
                    **keys,
                    "kind": f.kind,
                    "metric": f.metric,
                    "attribute": f.attribute,
                    "group_key": f.group,
                    "severity": f.severity,
                    "status": f.status,
                    "value": f.value,
                    "ci_low": f.ci_low,
                    "ci_high": f.ci_high,
                    "baseline": f.baseline,
                    "since": f.since,
                    "fingerprint": f.fingerprint,
                    "numbers": jsonable(f.numbers),
                    "message": f.message,
                }
                for f in rows
            ],
        )

    def write_window(self, records: WindowRecords) -> int:
        """Write one window in ONE transaction; returns its ``run_id`` (stable across re-runs).

        The run row is upserted on (monitor, window_start, window_end); the window's metrics, evidence,
        explanation metrics and findings are replaced (delete + insert), never duplicated. If anything
        fails, the transaction rolls back and the earlier state of the window is intact. The monitor
        row is created on first use. A run with an ``attempt_id`` is that attempt's write: refused
        (:class:`~fairmon.errors.AttemptSupersededError`, nothing written) when a newer attempt holds the run.

        Examples
        --------
        >>> from datetime import datetime, UTC
        >>> from fairmon.store import RunRecord, MetricRecord, WindowRecords
        >>> run = RunRecord("demo", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
        >>> records = WindowRecords(run, metrics=[MetricRecord("dp_difference", 0.12, attribute="sex")])
        >>> store.write_window(records)  # doctest: +SKIP
        1
        """
        if not isinstance(records, WindowRecords):
            raise RecordError(ERR_NOT_WINDOW_RECORDS.format(type=type(records).__name__))
        run = records.run
        with self._tx(run.monitor) as conn:
            mid = self._lock_monitor(conn, run.monitor)
            self._check_lease(conn, mid, run.monitor, run.window_start, run.window_end, run.attempt_id)
            run_id = self._upsert_run(conn, mid, run)
            gone = self._clear_results(conn, run_id)
            ws = run.window_start
            self._insert_metrics(conn, run_id, mid, ws, records.metrics)
            self._insert_evidence(conn, run_id, mid, ws, records.evidence)
            self._insert_explanations(conn, run_id, mid, ws, records.explanation_metrics)
            self._insert_findings(conn, run_id, mid, ws, records.findings)
            self._refresh_latest(conn, run_id, mid, gone)
        return run_id

    def write_findings(
        self, run_id: int, findings: Sequence[FindingRecord], *, attempt_id: str | None = None
    ) -> None:
        """Replace the drift findings of a run (one transaction); with ``attempt_id``, refused
        (:class:`~fairmon.errors.AttemptSupersededError`) when another attempt holds the run.

        Examples
        --------
        >>> store.write_findings(run_id, [FindingRecord("outcome", "dp_difference", "warning")])  # doctest: +SKIP
        """
        keys = [f.key for f in findings]
        if len(set(keys)) != len(keys):
            raise RecordError(ERR_DUPLICATE_FINDINGS.format(run_id=run_id))
        with self._tx() as conn:
            mid, ws = self._run_key(conn, run_id)
            self._check_run_lease(conn, run_id, mid, ws, attempt_id)
            conn.execute(sa.delete(findings_table).where(findings_table.c.run_id == run_id))
            self._insert_findings(conn, run_id, mid, ws, findings)

    def rebuild_latest_metrics(self) -> int:
        """Recompute ``metric_latest`` from ``metrics`` (after a bulk load); returns the row count.

        Examples
        --------
        >>> store.rebuild_latest_metrics()  # doctest: +SKIP
        10000
        """
        m = metrics.c
        latest = (
            latest_source()
            .ext(distinct_on(m.monitor_id, m.metric, m.attribute, m.group_key))
            .order_by(m.monitor_id, m.metric, m.attribute, m.group_key, m.window_start.desc())
        )
        with self._tx() as conn:
            conn.execute(sa.delete(metric_latest))
            return int(conn.execute(pg_insert(metric_latest).from_select(LATEST_COLUMNS, latest)).rowcount)
