"""The store: the only place in fairmon that writes SQL.

Why one repository object: writes for a window must be one transaction keyed by (monitor, window) so an
Airflow retry or re-run replaces rows instead of duplicating them, and a failure half-way leaves the
earlier state intact. Reads that drive decisions (history of earlier, completed windows) live here too,
so their semantics ("before this window", "completed only": succeeded or labels_pending) are defined once.

Examples
--------
>>> from datetime import datetime, UTC
>>> from fairmon.store import get_engine, upgrade, Store, RunRecord, MetricRecord, WindowRecords
>>> engine = get_engine("postgresql://postgres@127.0.0.1:5432/fm")  # doctest: +SKIP
>>> upgrade(engine); store = Store(engine)  # doctest: +SKIP
>>> run = RunRecord("demo", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
>>> store.write_window(WindowRecords(run, metrics=[MetricRecord("dp_difference", 0.12, attribute="sex")]))  # doctest: +SKIP
1
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from fairmon.store.engine import translate_errors
from fairmon.store.migrations import require_head
from fairmon.store.records import (
    RESULT_STATUSES,
    AlertRecord,
    AlertState,
    EvidenceRecord,
    ExplanationMetricRecord,
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RecordError,
    RunRecord,
    RunStatus,
    WindowRecords,
    utc,
)

__all__ = [
    "Store",
    "open_store",
    "ALLOWED_TRANSITIONS",
    "ERR_UNKNOWN_RUN",
    "ERR_TRANSITION",
    "ERR_TWO_SELECTED",
]

ERR_UNKNOWN_RUN = "no run with id {run_id}"
ERR_TRANSITION = "outbox transition {from_state} -> {to_state} is not allowed (allowed: {allowed})"
ERR_TWO_SELECTED = "FEU candidates of run {run_id}: {count} marked selected, at most one may be"

#: outbox state machine: pending → sending → sent | failed | pending (retry); failed → pending (requeue);
#: sending → sending (reclaim a stale claim; pass ``expected_attempts`` to make it a true CAS)
ALLOWED_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "pending": ("sending",),
    "sending": ("sent", "failed", "pending", "sending"),
    "failed": ("pending",),
    "sent": (),
}


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _clean_json(obj: Any) -> Any:
    # NaN/inf are not JSON: store them as null
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, Mapping):
        return {str(k): _clean_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean_json(v) for v in obj]
    return obj


def _js(obj: Any) -> str | None:
    if obj is None:
        return None
    return json.dumps(_clean_json(json.loads(json.dumps(obj, default=_json_default))), sort_keys=True)


def _ts(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


class Store:
    """Repository over the fairmon schema (``sql/migrations``).

    Parameters
    ----------
    engine
        From :func:`fairmon.store.get_engine`.
    check_schema
        Refuse to work on a database that is not at the migration head
        (:class:`~fairmon.errors.SchemaNotAtHeadError`); on by default.
    """

    def __init__(self, engine: Engine, *, check_schema: bool = True) -> None:
        self.engine = engine
        if check_schema:
            require_head(engine)

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with translate_errors(self.engine), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with translate_errors(self.engine), self.engine.connect() as conn:
            yield conn

    @staticmethod
    def _lock_monitor(conn: Connection, name: str) -> None:
        """Serialise the transactions that rewrite one monitor's rows (held until commit).

        Why: two writers of the same monitor (an Airflow retry overlapping a zombie attempt, a
        backfill next to the scheduled run) upsert the same ``metric_latest`` rows and the same run
        row in whatever order their statements reach them; under load Postgres then reports a
        deadlock and one window fails. Windows of one monitor are written one after another anyway,
        so one advisory lock per monitor costs nothing and removes the lock-order race.
        """
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('fairmon.monitor:' || :n))"), {"n": name})

    # ------------------------------------------------------------------ monitors
    def _ensure_monitor(self, conn: Connection, name: str) -> int:
        mid = conn.execute(sa.text("SELECT monitor_id FROM monitors WHERE name = :n"), {"n": name}).scalar()
        if mid is None:
            mid = conn.execute(
                sa.text(
                    "INSERT INTO monitors (name) VALUES (:n) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name "
                    "RETURNING monitor_id"
                ),
                {"n": name},
            ).scalar_one()
        return int(mid)

    def upsert_monitor(
        self,
        name: str,
        *,
        owner: str | None = None,
        tags: Sequence[str] = (),
        spec: Mapping[str, Any] | None = None,
        spec_fingerprint: str | None = None,
    ) -> int:
        """Create or update a monitor's identity row; returns its ``monitor_id``."""
        if not name:
            raise RecordError("upsert_monitor: name is empty")
        with self._tx() as conn:
            return int(
                conn.execute(
                    sa.text(
                        """
                        INSERT INTO monitors (name, owner, tags, spec, spec_fingerprint)
                        VALUES (:name, :owner, :tags, CAST(:spec AS jsonb), :fp)
                        ON CONFLICT (name) DO UPDATE SET
                            owner = COALESCE(EXCLUDED.owner, monitors.owner),
                            tags = EXCLUDED.tags,
                            spec = COALESCE(EXCLUDED.spec, monitors.spec),
                            spec_fingerprint = COALESCE(EXCLUDED.spec_fingerprint, monitors.spec_fingerprint),
                            updated_at = now()
                        RETURNING monitor_id
                        """
                    ),
                    {
                        "name": name,
                        "owner": owner,
                        "tags": list(tags),
                        "spec": _js(spec),
                        "fp": spec_fingerprint,
                    },
                ).scalar_one()
            )

    def monitors(self) -> list[str]:
        """Names of every monitor, sorted."""
        with self._read() as conn:
            return [str(r[0]) for r in conn.execute(sa.text("SELECT name FROM monitors ORDER BY name"))]

    # ------------------------------------------------------------------ runs
    _UPSERT_RUN = """
        INSERT INTO runs (monitor_id, window_start, window_end, status, model_version, spec_fingerprint,
                          n_rows, timings, error, details)
        VALUES (:mid, :ws, :we, :status, :mv, :fp, :n_rows, CAST(:timings AS jsonb), :error, CAST(:details AS jsonb))
        ON CONFLICT (monitor_id, window_start, window_end) DO UPDATE SET
            status = EXCLUDED.status,
            model_version = {mv},
            spec_fingerprint = {fp},
            n_rows = {n_rows},
            timings = EXCLUDED.timings,
            error = EXCLUDED.error,
            details = EXCLUDED.details,
            updated_at = now()
        RETURNING run_id
    """

    def _upsert_run(self, conn: Connection, mid: int, run: RunRecord, *, keep_known: bool = False) -> int:
        if keep_known:  # a status mark keeps what an earlier attempt knew (model version, ...)
            cols = {
                c: f"COALESCE(EXCLUDED.{c}, runs.{c})"
                for c in ("model_version", "spec_fingerprint", "n_rows")
            }
        else:
            cols = {c: f"EXCLUDED.{c}" for c in ("model_version", "spec_fingerprint", "n_rows")}
        sql = self._UPSERT_RUN.format(
            mv=cols["model_version"], fp=cols["spec_fingerprint"], n_rows=cols["n_rows"]
        )
        return int(
            conn.execute(
                sa.text(sql),
                {
                    "mid": mid,
                    "ws": run.window_start,
                    "we": run.window_end,
                    "status": run.status,
                    "mv": run.model_version,
                    "fp": run.spec_fingerprint,
                    "n_rows": run.n_rows,
                    "timings": _js(run.timings),
                    "error": run.error,
                    "details": _js(run.details),
                },
            ).scalar_one()
        )

    def _clear_results(self, conn: Connection, run_id: int) -> list[tuple[str, str, str]]:
        # one round trip: every result table of the run, and the latest rows that pointed at it
        rows = conn.execute(
            sa.text(
                """
                WITH m AS (DELETE FROM metrics WHERE run_id = :r),
                     e AS (DELETE FROM evidence WHERE run_id = :r),
                     x AS (DELETE FROM explanation_metrics WHERE run_id = :r),
                     f AS (DELETE FROM findings WHERE run_id = :r)
                DELETE FROM metric_latest WHERE run_id = :r RETURNING metric, attribute, group_key
                """
            ),
            {"r": run_id},
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def _insert_metrics(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[MetricRecord]
    ) -> None:
        if not rows:
            return
        conn.execute(
            sa.text(
                "INSERT INTO metrics (run_id, monitor_id, window_start, metric, attribute, group_key, value, ci_low, "
                "ci_high, n, n_nan) VALUES (:r, :mid, :ws, :metric, :attribute, :group, :value, :ci_low, :ci_high, :n, :n_nan)"
            ),
            [
                {
                    "r": run_id,
                    "mid": mid,
                    "ws": ws,
                    "metric": m.metric,
                    "attribute": m.attribute,
                    "group": m.group,
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
        conn.execute(
            sa.text(
                """
                INSERT INTO evidence (run_id, monitor_id, window_start, method, dscore, honest_dscore, p_value,
                    key_attributes, rules, rules_text, tree, group_size, group_fraction, p_fav_in, p_fav_out, n,
                    group_overlap, details)
                VALUES (:r, :mid, :ws, :method, :dscore, :honest, :p, :keys, CAST(:rules AS jsonb), :rules_text,
                    CAST(:tree AS jsonb), :size, :frac, :pin, :pout, :n, :overlap, CAST(:details AS jsonb))
                """
            ),
            [
                {
                    "r": run_id,
                    "mid": mid,
                    "ws": ws,
                    "method": e.method,
                    "dscore": e.dscore,
                    "honest": e.honest_dscore,
                    "p": e.p_value,
                    "keys": list(e.key_attributes),
                    "rules": _js(e.rules),
                    "rules_text": e.rules_text,
                    "tree": _js(e.tree),
                    "size": e.group_size,
                    "frac": e.group_fraction,
                    "pin": e.p_fav_in,
                    "pout": e.p_fav_out,
                    "n": e.n,
                    "overlap": e.group_overlap,
                    "details": _js(e.details),
                }
                for e in rows
            ],
        )

    def _insert_explanations(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[ExplanationMetricRecord]
    ) -> None:
        if not rows:
            return
        conn.execute(
            sa.text(
                """
                INSERT INTO explanation_metrics (run_id, monitor_id, window_start, family, metric, explainer,
                    group_key, value, p_value, n, n_nan, group_stability, details)
                VALUES (:r, :mid, :ws, :family, :metric, :explainer, :group, :value, :p, :n, :n_nan,
                    CAST(:stab AS jsonb), CAST(:details AS jsonb))
                """
            ),
            [
                {
                    "r": run_id,
                    "mid": mid,
                    "ws": ws,
                    "family": x.family,
                    "metric": x.metric,
                    "explainer": x.explainer,
                    "group": x.group,
                    "value": x.value,
                    "p": x.p_value,
                    "n": x.n,
                    "n_nan": x.n_nan,
                    "stab": _js(x.group_stability),
                    "details": _js(x.details),
                }
                for x in rows
            ],
        )

    def _insert_findings(
        self, conn: Connection, run_id: int, mid: int, ws: datetime, rows: Sequence[FindingRecord]
    ) -> None:
        if not rows:
            return
        conn.execute(
            sa.text(
                """
                INSERT INTO findings (run_id, monitor_id, window_start, kind, metric, attribute, group_key, severity,
                    status, value, ci_low, ci_high, baseline, since, fingerprint, numbers, message)
                VALUES (:r, :mid, :ws, :kind, :metric, :attribute, :group, :severity, :status,
                    :value, :ci_low, :ci_high, :baseline, :since, :fingerprint, CAST(:numbers AS jsonb), :message)
                """
            ),
            [
                {
                    "r": run_id,
                    "mid": mid,
                    "ws": ws,
                    "kind": f.kind,
                    "metric": f.metric,
                    "attribute": f.attribute,
                    "group": f.group,
                    "severity": f.severity,
                    "status": f.status,
                    "value": f.value,
                    "ci_low": f.ci_low,
                    "ci_high": f.ci_high,
                    "baseline": f.baseline,
                    "since": f.since,
                    "fingerprint": f.fingerprint,
                    "numbers": _js(f.numbers),
                    "message": f.message,
                }
                for f in rows
            ],
        )

    _LATEST_COLS = "monitor_id, metric, attribute, group_key, run_id, window_start, window_end, value, ci_low, ci_high, n, n_nan"

    def _refresh_latest(
        self, conn: Connection, run_id: int, mid: int, gone: Sequence[tuple[str, str, str]]
    ) -> None:
        # newer-or-equal window wins; re-running an old window never clobbers a newer latest value
        conn.execute(
            sa.text(
                f"""
                INSERT INTO metric_latest ({self._LATEST_COLS})
                SELECT m.monitor_id, m.metric, m.attribute, m.group_key, m.run_id, m.window_start, r.window_end,
                       m.value, m.ci_low, m.ci_high, m.n, m.n_nan
                FROM metrics m JOIN runs r ON r.run_id = m.run_id
                WHERE m.run_id = :r
                ON CONFLICT (monitor_id, metric, attribute, group_key) DO UPDATE SET
                    run_id = EXCLUDED.run_id, window_start = EXCLUDED.window_start, window_end = EXCLUDED.window_end,
                    value = EXCLUDED.value, ci_low = EXCLUDED.ci_low, ci_high = EXCLUDED.ci_high,
                    n = EXCLUDED.n, n_nan = EXCLUDED.n_nan
                WHERE metric_latest.window_start <= EXCLUDED.window_start
                """
            ),
            {"r": run_id},
        )
        if gone:  # series whose latest row pointed at this run but which it no longer has: fall back
            conn.execute(
                sa.text(
                    f"""
                    INSERT INTO metric_latest ({self._LATEST_COLS})
                    SELECT m.monitor_id, m.metric, m.attribute, m.group_key, m.run_id, m.window_start, r.window_end,
                           m.value, m.ci_low, m.ci_high, m.n, m.n_nan
                    FROM metrics m JOIN runs r ON r.run_id = m.run_id
                    WHERE m.monitor_id = :mid AND m.metric = :metric AND m.attribute = :attribute
                      AND m.group_key = :group
                    ORDER BY m.window_start DESC
                    LIMIT 1
                    ON CONFLICT (monitor_id, metric, attribute, group_key) DO NOTHING
                    """
                ),
                [{"mid": mid, "metric": g[0], "attribute": g[1], "group": g[2]} for g in gone],
            )

    def rebuild_latest_metrics(self) -> int:
        """Recompute ``metric_latest`` from ``metrics`` (after a bulk load); returns the row count."""
        with self._tx() as conn:
            conn.execute(sa.text("DELETE FROM metric_latest"))
            return int(
                conn.execute(
                    sa.text(
                        f"""
                        INSERT INTO metric_latest ({self._LATEST_COLS})
                        SELECT DISTINCT ON (m.monitor_id, m.metric, m.attribute, m.group_key)
                               m.monitor_id, m.metric, m.attribute, m.group_key, m.run_id, m.window_start,
                               r.window_end, m.value, m.ci_low, m.ci_high, m.n, m.n_nan
                        FROM metrics m JOIN runs r ON r.run_id = m.run_id
                        ORDER BY m.monitor_id, m.metric, m.attribute, m.group_key, m.window_start DESC
                        """
                    )
                ).rowcount
            )

    def write_window(self, records: WindowRecords) -> int:
        """Write one window in ONE transaction; returns its ``run_id`` (stable across re-runs).

        The run row is upserted on (monitor, window_start, window_end); the window's metrics, evidence,
        explanation metrics and findings are replaced (delete + insert), never duplicated. If anything
        fails, the transaction rolls back and the earlier state of the window is intact. The monitor
        row is created on first use.
        """
        if not isinstance(records, WindowRecords):
            raise RecordError(f"write_window expects WindowRecords, got {type(records).__name__}")
        run = records.run
        with self._tx() as conn:
            self._lock_monitor(conn, run.monitor)
            mid = self._ensure_monitor(conn, run.monitor)
            run_id = self._upsert_run(conn, mid, run)
            gone = self._clear_results(conn, run_id)
            ws = run.window_start
            self._insert_metrics(conn, run_id, mid, ws, records.metrics)
            self._insert_evidence(conn, run_id, mid, ws, records.evidence)
            self._insert_explanations(conn, run_id, mid, ws, records.explanation_metrics)
            self._insert_findings(conn, run_id, mid, ws, records.findings)
            self._refresh_latest(conn, run_id, mid, gone)
        return run_id

    def mark_run(
        self,
        monitor: str,
        window_start: datetime,
        window_end: datetime,
        status: RunStatus,
        *,
        error: str | None = None,
        model_version: str | None = None,
        spec_fingerprint: str | None = None,
        n_rows: int | None = None,
        timings: Mapping[str, float] | None = None,
        details: Mapping[str, Any] | None = None,
        keep_results: bool | None = None,
    ) -> int:
        """Record a window's status without results (failed, data_invalid, skipped, labels_pending, running).

        A failed window is recorded as failed — its earlier results are removed (``keep_results=False``,
        the default for every status but ``running``), never replaced by zeros. ``running`` keeps the
        previous results until the new ones are written. Fields left ``None`` keep the value an earlier
        attempt stored. Returns the ``run_id``.
        """
        run = RunRecord(
            monitor,
            window_start,
            window_end,
            status=status,
            model_version=model_version,
            spec_fingerprint=spec_fingerprint,
            n_rows=n_rows,
            timings=timings or {},
            error=error,
            details=details or {},
        )
        keep = (status == "running") if keep_results is None else keep_results
        with self._tx() as conn:
            self._lock_monitor(conn, monitor)
            mid = self._ensure_monitor(conn, monitor)
            run_id = self._upsert_run(conn, mid, run, keep_known=True)
            if not keep:
                gone = self._clear_results(conn, run_id)
                self._refresh_latest(conn, run_id, mid, gone)
        return run_id

    def write_findings(self, run_id: int, findings: Sequence[FindingRecord]) -> None:
        """Replace the drift findings of a run (one transaction)."""
        keys = [f.key for f in findings]
        if len(set(keys)) != len(keys):
            raise RecordError(f"write_findings: duplicate finding keys for run {run_id}")
        with self._tx() as conn:
            mid, ws = self._run_key(conn, run_id)
            conn.execute(sa.text("DELETE FROM findings WHERE run_id = :r"), {"r": run_id})
            self._insert_findings(conn, run_id, mid, ws, findings)

    def save_feu_candidates(self, run_id: int, candidates: Sequence[FEUCandidateRecord]) -> None:
        """Replace the FEU candidates of a run (one transaction; at most one ``selected``)."""
        selected = sum(1 for c in candidates if c.selected)
        if selected > 1:
            raise RecordError(ERR_TWO_SELECTED.format(run_id=run_id, count=selected))
        idx = [c.candidate_index for c in candidates]
        if len(set(idx)) != len(idx):
            raise RecordError(f"save_feu_candidates: duplicate candidate_index for run {run_id}")
        with self._tx() as conn:
            self._run_key(conn, run_id)
            conn.execute(sa.text("DELETE FROM feu_candidates WHERE run_id = :r"), {"r": run_id})
            if candidates:
                conn.execute(
                    sa.text(
                        "INSERT INTO feu_candidates (run_id, candidate_index, hyperparameters, metrics, pareto, selected, "
                        "registry_version) VALUES (:r, :i, CAST(:hp AS jsonb), CAST(:m AS jsonb), :pareto, :selected, :rv)"
                    ),
                    [
                        {
                            "r": run_id,
                            "i": c.candidate_index,
                            "hp": _js(c.hyperparameters),
                            "m": _js(c.metrics),
                            "pareto": bool(c.pareto),
                            "selected": bool(c.selected),
                            "rv": c.registry_version,
                        }
                        for c in candidates
                    ],
                )

    def set_feu_registry_version(self, run_id: int, candidate_index: int, registry_version: str) -> bool:
        """Record the registry version under which a candidate was registered."""
        with self._tx() as conn:
            res = conn.execute(
                sa.text(
                    "UPDATE feu_candidates SET registry_version = :v WHERE run_id = :r AND candidate_index = :i"
                ),
                {"v": registry_version, "r": run_id, "i": candidate_index},
            )
            return res.rowcount == 1

    def _run_key(self, conn: Connection, run_id: int) -> tuple[int, datetime]:
        row = conn.execute(
            sa.text("SELECT monitor_id, window_start FROM runs WHERE run_id = :r"), {"r": run_id}
        ).first()
        if row is None:
            raise RecordError(ERR_UNKNOWN_RUN.format(run_id=run_id))
        return int(row[0]), row[1]

    # ------------------------------------------------------------------ reads: runs
    _RUN_SELECT = """
        SELECT mo.name, r.window_start, r.window_end, r.status, r.model_version, r.spec_fingerprint, r.n_rows,
               r.timings, r.error, r.details, r.run_id, r.created_at, r.updated_at
        FROM runs r JOIN monitors mo ON mo.monitor_id = r.monitor_id
    """

    @staticmethod
    def _run(row: Any) -> RunRecord:
        return RunRecord(
            monitor=row[0],
            window_start=row[1],
            window_end=row[2],
            status=row[3],
            model_version=row[4],
            spec_fingerprint=row[5],
            n_rows=row[6],
            timings=row[7] or {},
            error=row[8],
            details=row[9] or {},
            run_id=int(row[10]),
            created_at=_ts(row[11]),
            updated_at=_ts(row[12]),
        )

    def get_run(
        self, monitor: str, window_start: datetime, window_end: datetime | None = None
    ) -> RunRecord | None:
        """The run of a monitor's window (``window_end`` optional when the start is unambiguous)."""
        params: dict[str, Any] = {"m": monitor, "ws": utc(window_start, name="window_start")}
        sql = self._RUN_SELECT + " WHERE mo.name = :m AND r.window_start = :ws"
        if window_end is not None:
            sql += " AND r.window_end = :we"
            params["we"] = utc(window_end, name="window_end")
        with self._read() as conn:
            row = conn.execute(sa.text(sql + " ORDER BY r.window_end DESC LIMIT 1"), params).first()
        return None if row is None else self._run(row)

    def get_run_by_id(self, run_id: int) -> RunRecord | None:
        with self._read() as conn:
            row = conn.execute(sa.text(self._RUN_SELECT + " WHERE r.run_id = :r"), {"r": run_id}).first()
        return None if row is None else self._run(row)

    def runs(
        self,
        monitor: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        statuses: Sequence[str] | None = None,
    ) -> list[RunRecord]:
        """Runs of a monitor with ``since <= window_start < until``, oldest first."""
        sql = self._RUN_SELECT + " WHERE mo.name = :m"
        params: dict[str, Any] = {"m": monitor}
        if since is not None:
            sql += " AND r.window_start >= :since"
            params["since"] = utc(since, name="since")
        if until is not None:
            sql += " AND r.window_start < :until"
            params["until"] = utc(until, name="until")
        if statuses is not None:
            sql += " AND r.status = ANY(:st)"
            params["st"] = list(statuses)
        with self._read() as conn:
            return [
                self._run(r)
                for r in conn.execute(sa.text(sql + " ORDER BY r.window_start, r.window_end"), params)
            ]

    def completed_runs_before(
        self, monitor: str, window_start: datetime, n: int, *, statuses: Sequence[str] = RESULT_STATUSES
    ) -> list[RunRecord]:
        """The ``n`` latest runs that started strictly before ``window_start`` with a completed status.

        Oldest first. Drift decisions use only these, so re-running an old window never sees — and
        never rewrites — the decisions of later windows. Completed means the window's results are
        stored: ``succeeded`` and ``labels_pending`` (everything but the label-based metrics, which a
        monitor with late labels lacks for months; leaving those windows out would keep its drift
        checks in cold start forever).
        """
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    self._RUN_SELECT + " WHERE mo.name = :m AND r.window_start < :ws AND r.status = ANY(:st)"
                    " ORDER BY r.window_start DESC LIMIT :n"
                ),
                {
                    "m": monitor,
                    "ws": utc(window_start, name="window_start"),
                    "st": list(statuses),
                    "n": int(n),
                },
            ).all()
        return [self._run(r) for r in reversed(rows)]

    # ------------------------------------------------------------------ reads: results of one run
    @staticmethod
    def _metric(row: Any) -> MetricRecord:
        return MetricRecord(
            metric=row[0],
            value=row[1],
            attribute=row[2],
            group=row[3],
            ci_low=row[4],
            ci_high=row[5],
            n=row[6],
            n_nan=row[7],
            run_id=int(row[8]),
            window_start=_ts(row[9]),
        )

    _METRIC_COLS = "m.metric, m.value, m.attribute, m.group_key, m.ci_low, m.ci_high, m.n, m.n_nan, m.run_id, m.window_start"

    def metrics_of_run(self, run_id: int) -> list[MetricRecord]:
        """Metrics of a run ordered by (metric, attribute, group)."""
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    f"SELECT {self._METRIC_COLS} FROM metrics m WHERE m.run_id = :r "
                    "ORDER BY m.metric, m.attribute, m.group_key"
                ),
                {"r": run_id},
            )
            return [self._metric(r) for r in rows]

    _EVIDENCE_COLS = (
        "e.method, e.dscore, e.honest_dscore, e.p_value, e.key_attributes, e.rules, e.rules_text, e.tree, "
        "e.group_size, e.group_fraction, e.p_fav_in, e.p_fav_out, e.n, e.group_overlap, e.details, e.run_id, e.window_start"
    )

    @staticmethod
    def _evidence(row: Any) -> EvidenceRecord:
        return EvidenceRecord(
            method=row[0],
            dscore=row[1],
            honest_dscore=row[2],
            p_value=row[3],
            key_attributes=tuple(row[4] or ()),
            rules=row[5],
            rules_text=row[6],
            tree=row[7],
            group_size=row[8],
            group_fraction=row[9],
            p_fav_in=row[10],
            p_fav_out=row[11],
            n=row[12],
            group_overlap=row[13],
            details=row[14] or {},
            run_id=int(row[15]),
            window_start=_ts(row[16]),
        )

    def evidence_of_run(self, run_id: int) -> list[EvidenceRecord]:
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    f"SELECT {self._EVIDENCE_COLS} FROM evidence e WHERE e.run_id = :r ORDER BY e.method"
                ),
                {"r": run_id},
            )
            return [self._evidence(r) for r in rows]

    _EXPL_COLS = (
        "x.family, x.metric, x.value, x.explainer, x.group_key, x.p_value, x.n, x.n_nan, x.group_stability, x.details, "
        "x.run_id, x.window_start"
    )

    @staticmethod
    def _expl(row: Any) -> ExplanationMetricRecord:
        return ExplanationMetricRecord(
            family=row[0],
            metric=row[1],
            value=row[2],
            explainer=row[3],
            group=row[4],
            p_value=row[5],
            n=row[6],
            n_nan=row[7],
            group_stability=row[8],
            details=row[9] or {},
            run_id=int(row[10]),
            window_start=_ts(row[11]),
        )

    def explanation_metrics_of_run(self, run_id: int) -> list[ExplanationMetricRecord]:
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    f"SELECT {self._EXPL_COLS} FROM explanation_metrics x WHERE x.run_id = :r "
                    "ORDER BY x.family, x.metric, x.explainer, x.group_key"
                ),
                {"r": run_id},
            )
            return [self._expl(r) for r in rows]

    _FINDING_COLS = (
        "f.kind, f.metric, f.severity, f.status, f.attribute, f.group_key, f.numbers, f.message, f.run_id, "
        "f.window_start, mo.name, f.value, f.ci_low, f.ci_high, f.baseline, f.since, f.fingerprint"
    )

    @staticmethod
    def _finding(row: Any) -> FindingRecord:
        return FindingRecord(
            kind=row[0],
            metric=row[1],
            severity=row[2],
            status=row[3],
            attribute=row[4],
            group=row[5],
            numbers=row[6] or {},
            message=row[7],
            run_id=int(row[8]),
            window_start=_ts(row[9]),
            monitor=row[10],
            value=row[11],
            ci_low=row[12],
            ci_high=row[13],
            baseline=row[14],
            since=_ts(row[15]),
            fingerprint=row[16],
        )

    def findings_of_run(self, run_id: int) -> list[FindingRecord]:
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    f"SELECT {self._FINDING_COLS} FROM findings f JOIN monitors mo ON mo.monitor_id = f.monitor_id "
                    "WHERE f.run_id = :r ORDER BY f.kind, f.metric, f.attribute, f.group_key"
                ),
                {"r": run_id},
            )
            return [self._finding(r) for r in rows]

    def feu_candidates(self, run_id: int) -> list[FEUCandidateRecord]:
        with self._read() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT candidate_index, hyperparameters, metrics, pareto, selected, registry_version, run_id "
                    "FROM feu_candidates WHERE run_id = :r ORDER BY candidate_index"
                ),
                {"r": run_id},
            )
            return [
                FEUCandidateRecord(
                    candidate_index=r[0],
                    hyperparameters=r[1] or {},
                    metrics=r[2] or {},
                    pareto=r[3],
                    selected=r[4],
                    registry_version=r[5],
                    run_id=int(r[6]),
                )
                for r in rows
            ]

    def read_window(self, run_id: int) -> WindowRecords:
        """Everything a window wrote, as records (for the report)."""
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

    # ------------------------------------------------------------------ reads: history (drift decisions)
    def metric_history(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str = "",
        group: str = "",
        before: datetime | None = None,
        since: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[MetricRecord]:
        """One metric series of a monitor, oldest first: the ``n`` latest points with window_start < ``before``.

        Only runs whose status is in ``statuses`` count (completed windows by default).
        """
        sql = (
            f"SELECT {self._METRIC_COLS} FROM metrics m JOIN monitors mo ON mo.monitor_id = m.monitor_id "
            "JOIN runs r ON r.run_id = m.run_id "
            "WHERE mo.name = :mon AND m.metric = :metric AND m.attribute = :attribute AND m.group_key = :group "
            "AND r.status = ANY(:st)"
        )
        params: dict[str, Any] = {
            "mon": monitor,
            "metric": metric,
            "attribute": attribute,
            "group": group,
            "st": list(statuses),
        }
        return [self._metric(r) for r in self._window_history(sql, "m", params, before=before, since=since, n=n)]

    def evidence_history(
        self,
        monitor: str,
        *,
        method: str = "ie-dt",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[EvidenceRecord]:
        """RUMIE evidence of earlier completed windows, oldest first (the ``n`` latest before ``before``)."""
        sql = (
            f"SELECT {self._EVIDENCE_COLS} FROM evidence e JOIN monitors mo ON mo.monitor_id = e.monitor_id "
            "JOIN runs r ON r.run_id = e.run_id WHERE mo.name = :mon AND e.method = :method AND r.status = ANY(:st)"
        )
        params: dict[str, Any] = {"mon": monitor, "method": method, "st": list(statuses)}
        return [self._evidence(r) for r in self._window_history(sql, "e", params, before=before, n=n)]

    def explanation_history(
        self,
        monitor: str,
        family: str,
        metric: str,
        *,
        explainer: str = "",
        group: str = "",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[ExplanationMetricRecord]:
        """An explanation-metric series of earlier completed windows, oldest first."""
        sql = (
            f"SELECT {self._EXPL_COLS} FROM explanation_metrics x JOIN monitors mo ON mo.monitor_id = x.monitor_id "
            "JOIN runs r ON r.run_id = x.run_id WHERE mo.name = :mon AND x.family = :family AND x.metric = :metric "
            "AND x.explainer = :explainer AND x.group_key = :group AND r.status = ANY(:st)"
        )
        params: dict[str, Any] = {
            "mon": monitor,
            "family": family,
            "metric": metric,
            "explainer": explainer,
            "group": group,
            "st": list(statuses),
        }
        return [self._expl(r) for r in self._window_history(sql, "x", params, before=before, n=n)]

    def _window_history(
        self,
        sql: str,
        alias: str,
        params: dict[str, Any],
        *,
        before: datetime | None = None,
        since: datetime | None = None,
        n: int | None = None,
    ) -> list[Any]:
        """Rows of a per-window series query, oldest first: the ``n`` latest in [since, before)."""
        if before is not None:
            sql += f" AND {alias}.window_start < :before"
            params["before"] = utc(before, name="before")
        if since is not None:
            sql += f" AND {alias}.window_start >= :since"
            params["since"] = utc(since, name="since")
        sql += f" ORDER BY {alias}.window_start DESC"
        if n is not None:
            sql += " LIMIT :n"
            params["n"] = int(n)
        with self._read() as conn:
            rows = conn.execute(sa.text(sql), params).all()
        return list(reversed(rows))

    def gesd_history(
        self,
        monitor: str,
        *,
        explainer: str = "",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[ExplanationMetricRecord]:
        """GESD values (``family="gesd", metric="gesd"``) of earlier completed windows, oldest first."""
        return self.explanation_history(
            monitor, "gesd", "gesd", explainer=explainer, before=before, n=n, statuses=statuses
        )

    def open_findings(
        self, monitor: str, *, before: datetime | None = None, statuses: Sequence[str] = ("open", "ongoing")
    ) -> list[FindingRecord]:
        """Drifts still active: per (kind, metric, attribute, group) the latest decision (of a window
        before ``before``) when its status is in ``statuses``. Drives resolution messages and cooldowns."""
        sql = (
            f"SELECT * FROM (SELECT DISTINCT ON (f.kind, f.metric, f.attribute, f.group_key) {self._FINDING_COLS} "
            "FROM findings f JOIN monitors mo ON mo.monitor_id = f.monitor_id WHERE mo.name = :mon"
        )
        params: dict[str, Any] = {"mon": monitor}
        if before is not None:
            sql += " AND f.window_start < :before"
            params["before"] = utc(before, name="before")
        sql += (
            " ORDER BY f.kind, f.metric, f.attribute, f.group_key, f.window_start DESC) latest"
            " WHERE latest.status = ANY(:st) ORDER BY latest.window_start, latest.kind, latest.metric"
        )
        params["st"] = list(statuses)
        with self._read() as conn:
            return [self._finding(r) for r in conn.execute(sa.text(sql), params)]

    def findings_between(
        self, monitor: str | None, start: datetime, end: datetime, *, status: str | None = None
    ) -> list[FindingRecord]:
        """Findings with ``start <= window_start < end`` (all monitors when ``monitor`` is None)."""
        sql = (
            f"SELECT {self._FINDING_COLS} FROM findings f JOIN monitors mo ON mo.monitor_id = f.monitor_id "
            "WHERE f.window_start >= :start AND f.window_start < :end"
        )
        params: dict[str, Any] = {"start": utc(start, name="start"), "end": utc(end, name="end")}
        if monitor is not None:
            sql += " AND mo.name = :mon"
            params["mon"] = monitor
        if status is not None:
            sql += " AND f.status = :status"
            params["status"] = status
        sql += " ORDER BY f.window_start, mo.name, f.kind, f.metric, f.attribute, f.group_key"
        with self._read() as conn:
            return [self._finding(r) for r in conn.execute(sa.text(sql), params)]

    def history(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str | None = None,
        group: str | None = None,
        since: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Rows of the ``metric_series`` view (value, CI, 7-window rolling mean) for ``fairmon history``.

        ``attribute``/``group`` ``None`` = every series of the metric. Ordered by series then time.
        """
        sql = (
            "SELECT monitor, window_start, window_end, status, metric, attribute, group_key, value, ci_low, ci_high, "
            "n, rolling_mean_7 FROM metric_series WHERE monitor = :mon AND metric = :metric"
        )
        params: dict[str, Any] = {"mon": monitor, "metric": metric}
        if attribute is not None:
            sql += " AND attribute = :attribute"
            params["attribute"] = attribute
        if group is not None:
            sql += " AND group_key = :group"
            params["group"] = group
        if since is not None:
            sql += " AND window_start >= :since"
            params["since"] = utc(since, name="since")
        sql += " ORDER BY attribute, group_key, window_start"
        with self._read() as conn:
            rows = conn.execute(sa.text(sql), params).mappings().all()
        out = []
        for r in rows:
            d = dict(r)
            d["window_start"] = _ts(d["window_start"])
            d["window_end"] = _ts(d["window_end"])
            out.append(d)
        return out

    def metric_series(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str | None = None,
        group: str | None = None,
        since: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Alias of :meth:`history` (the name INTERFACES.md sketched): rows of the ``metric_series`` view."""
        return self.history(monitor, metric, attribute=attribute, group=group, since=since)

    def series(self, monitor: str, metric: str | None = None) -> list[tuple[str, str, str]]:
        """``(metric, attribute, group)`` of every metric series a monitor has (from the latest table)."""
        sql = (
            "SELECT l.metric, l.attribute, l.group_key FROM metric_latest l "
            "JOIN monitors mo ON mo.monitor_id = l.monitor_id WHERE mo.name = :mon"
        )
        params: dict[str, Any] = {"mon": monitor}
        if metric is not None:
            sql += " AND l.metric = :metric"
            params["metric"] = metric
        with self._read() as conn:
            rows = conn.execute(sa.text(sql + " ORDER BY 1, 2, 3"), params)
            return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    # ------------------------------------------------------------------ outbox
    _ALERT_COLS = (
        "a.fingerprint, a.kind, a.payload, a.channel, mo.name, a.run_id, a.window_start, a.severity, a.state, "
        "a.attempts, a.last_error, a.slack_ts, a.thread_ts, a.created_at, a.updated_at, a.sent_at"
    )

    @staticmethod
    def _alert(row: Any) -> AlertRecord:
        return AlertRecord(
            fingerprint=row[0],
            kind=row[1],
            payload=row[2] or {},
            channel=row[3],
            monitor=row[4],
            run_id=None if row[5] is None else int(row[5]),
            window_start=_ts(row[6]),
            severity=row[7],
            state=row[8],
            attempts=int(row[9]),
            last_error=row[10],
            slack_ts=row[11],
            thread_ts=row[12],
            created_at=_ts(row[13]),
            updated_at=_ts(row[14]),
            sent_at=_ts(row[15]),
        )

    def outbox_enqueue(self, alert: AlertRecord) -> bool:
        """Insert the alert if its fingerprint is new; ``False`` (and no change) when it already exists.

        This is what makes a retried task never alert twice: the fingerprint is derived from (monitor,
        window, finding), so a re-run enqueues the same fingerprint and gets ``False``.
        """
        with self._tx() as conn:
            mid = self._ensure_monitor(conn, alert.monitor) if alert.monitor else None
            row = conn.execute(
                sa.text(
                    """
                    INSERT INTO alerts (fingerprint, kind, monitor_id, run_id, window_start, severity, channel, payload,
                                        state, attempts, last_error, slack_ts, thread_ts)
                    VALUES (:fp, :kind, :mid, :run_id, :ws, :severity, :channel, CAST(:payload AS jsonb),
                            :state, :attempts, :last_error, :slack_ts, :thread_ts)
                    ON CONFLICT (fingerprint) DO NOTHING
                    RETURNING alert_id
                    """
                ),
                {
                    "fp": alert.fingerprint,
                    "kind": alert.kind,
                    "mid": mid,
                    "run_id": alert.run_id,
                    "ws": alert.window_start,
                    "severity": alert.severity,
                    "channel": alert.channel,
                    "payload": _js(alert.payload),
                    "state": alert.state,
                    "attempts": alert.attempts,
                    "last_error": alert.last_error,
                    "slack_ts": alert.slack_ts,
                    "thread_ts": alert.thread_ts,
                },
            ).first()
        return row is not None

    def outbox_get(self, fingerprint: str) -> AlertRecord | None:
        with self._read() as conn:
            row = conn.execute(
                sa.text(
                    f"SELECT {self._ALERT_COLS} FROM alerts a LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id "
                    "WHERE a.fingerprint = :fp"
                ),
                {"fp": fingerprint},
            ).first()
        return None if row is None else self._alert(row)

    def outbox_pending(
        self, limit: int = 100, *, stale_after_s: float = 600.0, monitor: str | None = None
    ) -> list[AlertRecord]:
        """Alerts to deliver: ``pending`` ones plus ``sending`` ones whose claim is older than
        ``stale_after_s`` (a worker died mid-send), oldest first; only ``monitor``'s when given."""
        sql = (
            f"SELECT {self._ALERT_COLS} FROM alerts a LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id "
            "WHERE (a.state = 'pending' OR (a.state = 'sending' AND a.updated_at < now() - make_interval(secs => :stale)))"
        )
        params: dict[str, Any] = {"stale": float(stale_after_s), "n": int(limit)}
        if monitor is not None:
            sql += " AND mo.name = :mon"
            params["mon"] = monitor
        with self._read() as conn:
            rows = conn.execute(sa.text(sql + " ORDER BY a.created_at, a.alert_id LIMIT :n"), params)
            return [self._alert(r) for r in rows]

    def outbox_transition(
        self,
        fingerprint: str,
        from_state: AlertState,
        to_state: AlertState,
        *,
        slack_ts: str | None = None,
        error: str | None = None,
        expected_attempts: int | None = None,
        release: bool = False,
    ) -> bool:
        """Compare-and-set the alert's state; ``True`` only for the caller whose expectation held.

        Moving to ``sending`` increments ``attempts`` (the claim); ``sent`` stamps ``sent_at``;
        ``slack_ts`` / ``error`` are recorded when given. Two workers racing for the same pending alert:
        exactly one gets ``True``. ``expected_attempts`` additionally pins the attempt count (for
        reclaiming a stale ``sending`` claim safely). ``release`` (``sending`` → ``pending``) gives the
        claim back uncounted: nothing reached Slack (a bad token or channel).
        """
        allowed = ALLOWED_TRANSITIONS.get(from_state)
        if allowed is None or to_state not in allowed:
            raise RecordError(
                ERR_TRANSITION.format(
                    from_state=from_state, to_state=to_state, allowed=", ".join(allowed or ()) or "none"
                )
            )
        sql = """
            UPDATE alerts SET
                state = :to_state,
                attempts = GREATEST(attempts + CASE WHEN :to_state = 'sending' THEN 1
                                                    WHEN :release THEN -1 ELSE 0 END, 0),
                slack_ts = COALESCE(:slack_ts, slack_ts),
                last_error = COALESCE(:error, last_error),
                sent_at = CASE WHEN :to_state = 'sent' THEN now() ELSE sent_at END,
                updated_at = now()
            WHERE fingerprint = :fp AND state = :from_state
        """
        params: dict[str, Any] = {
            "to_state": to_state,
            "from_state": from_state,
            "fp": fingerprint,
            "slack_ts": slack_ts,
            "error": error,
            "release": bool(release and from_state == "sending"),
        }
        if expected_attempts is not None:
            sql += " AND attempts = :attempts"
            params["attempts"] = int(expected_attempts)
        with self._tx() as conn:
            return conn.execute(sa.text(sql), params).rowcount == 1

    def outbox_claim(self, fingerprint: str, *, stale_after_s: float = 600.0) -> bool:
        """Atomically claim an alert for sending: ``pending`` → ``sending``, or re-claim a ``sending``
        alert whose claim is older than ``stale_after_s`` (its worker died). ``attempts`` + 1.

        Exactly one of several concurrent claimers gets ``True``.
        """
        with self._tx() as conn:
            res = conn.execute(
                sa.text(
                    """
                    UPDATE alerts SET state = 'sending', attempts = attempts + 1, updated_at = now()
                    WHERE fingerprint = :fp
                      AND (state = 'pending'
                           OR (state = 'sending' AND updated_at < now() - make_interval(secs => :stale)))
                    """
                ),
                {"fp": fingerprint, "stale": float(stale_after_s)},
            )
            return res.rowcount == 1

    def outbox_mark(
        self, fingerprint: str, state: AlertState, *, slack_ts: str | None = None, error: str | None = None
    ) -> bool:
        """Set the state whatever it was (admin/compat); prefer :meth:`outbox_transition`."""
        with self._tx() as conn:
            res = conn.execute(
                sa.text(
                    """
                    UPDATE alerts SET state = :state,
                        attempts = attempts + CASE WHEN :state = 'sending' THEN 1 ELSE 0 END,
                        slack_ts = COALESCE(:slack_ts, slack_ts), last_error = COALESCE(:error, last_error),
                        sent_at = CASE WHEN :state = 'sent' THEN now() ELSE sent_at END, updated_at = now()
                    WHERE fingerprint = :fp
                    """
                ),
                {"state": state, "slack_ts": slack_ts, "error": error, "fp": fingerprint},
            )
            return res.rowcount == 1

    def set_thread_ts(self, fingerprint: str, thread_ts: str) -> bool:
        """Remember the Slack thread an alert's follow-ups (FEU candidates, resolution) go to."""
        with self._tx() as conn:
            res = conn.execute(
                sa.text("UPDATE alerts SET thread_ts = :t, updated_at = now() WHERE fingerprint = :fp"),
                {"t": thread_ts, "fp": fingerprint},
            )
            return res.rowcount == 1

    def alerts(self, monitor: str | None = None, *, since: datetime | None = None) -> list[AlertRecord]:
        """Alert history (all states), oldest first."""
        sql = f"SELECT {self._ALERT_COLS} FROM alerts a LEFT JOIN monitors mo ON mo.monitor_id = a.monitor_id WHERE TRUE"
        params: dict[str, Any] = {}
        if monitor is not None:
            sql += " AND mo.name = :mon"
            params["mon"] = monitor
        if since is not None:
            sql += " AND a.created_at >= :since"
            params["since"] = utc(since, name="since")
        with self._read() as conn:
            return [
                self._alert(r)
                for r in conn.execute(sa.text(sql + " ORDER BY a.created_at, a.alert_id"), params)
            ]


def open_store(db_url: str | None = None, *, upgrade: bool = False) -> Store:
    """Engine (``--db`` / ``FAIRMON_DATABASE_URL`` / embedded) → optional upgrade → :class:`Store`.

    ``upgrade=True`` is for the demo and first-run tools; production tasks leave it off so a database
    behind the code fails fast with :class:`~fairmon.errors.SchemaNotAtHeadError`.
    """
    from fairmon.store.engine import get_engine
    from fairmon.store.migrations import upgrade as _upgrade

    engine = get_engine(db_url)
    if upgrade:
        _upgrade(engine)
    return Store(engine)
