"""Run bookkeeping: monitors, the run row of a window, status marks, heartbeats and stale runs.

Why here, together: a status mark is the run-row upsert plus (for a failed window) the removal of the
window's results and the ``metric_latest`` rows that pointed at them — the same two helpers a window
write uses (:mod:`fairmon.store._windows` builds on this class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from fairmon.store._base import StoreBase
from fairmon.store._rows import jsonable, run_from_row, run_select
from fairmon.store._tables import (
    attribution_gaps,
    evidence,
    explanation_metrics,
    findings,
    metric_latest,
    metrics,
    model_rescores,
    monitors,
    runs,
)
from fairmon.store.records import RecordError, RunRecord, RunStatus

__all__ = [
    "ERR_STALE_RUN",
    "ERR_STALE_AGE",
    "ERR_EMPTY_MONITOR",
    "LATEST_COLUMNS",
    "RunWrites",
    "latest_source",
]

#: ``error`` and ``details.error`` of a run that :meth:`RunWrites.fail_stale_runs` marked failed
ERR_STALE_RUN = "stale: no progress for {seconds:.0f} s (process crashed?)"
ERR_STALE_AGE = "fail_stale_runs: older_than_s must be a number of seconds >= 0 (got {value!r})"
ERR_EMPTY_MONITOR = "upsert_monitor: name is empty"
_KNOWN = ("model_version", "spec_fingerprint", "n_rows")
LATEST_COLUMNS = (
    "monitor_id",
    "metric",
    "attribute",
    "group_key",
    "run_id",
    "window_start",
    "window_end",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_nan",
)
_LATEST_VALUES = ("run_id", "window_start", "window_end", "value", "ci_low", "ci_high", "n", "n_nan")


def latest_source() -> sa.Select[Any]:
    """``metrics ⋈ runs`` in the column order of ``metric_latest`` (``window_end`` from the run)."""
    m = metrics.c
    return sa.select(
        m.monitor_id,
        m.metric,
        m.attribute,
        m.group_key,
        m.run_id,
        m.window_start,
        runs.c.window_end,
        m.value,
        m.ci_low,
        m.ci_high,
        m.n,
        m.n_nan,
    ).select_from(metrics.join(runs, runs.c.run_id == m.run_id))


class RunWrites(StoreBase):
    """Monitors and run rows: :meth:`upsert_monitor`, :meth:`mark_run`, :meth:`fail_stale_runs`, …"""

    # ------------------------------------------------------------------ monitors
    def upsert_monitor(
        self,
        name: str,
        *,
        owner: str | None = None,
        tags: Sequence[str] = (),
        spec: Mapping[str, Any] | None = None,
        spec_fingerprint: str | None = None,
    ) -> int:
        """Create or update a monitor's identity row; returns its ``monitor_id``.

        Examples
        --------
        >>> store.upsert_monitor("demo", owner="ml-team", tags=["credit"])  # doctest: +SKIP
        1
        """
        if not name:
            raise RecordError(ERR_EMPTY_MONITOR)
        stmt = pg_insert(monitors).values(
            name=name, owner=owner, tags=list(tags), spec=jsonable(spec), spec_fingerprint=spec_fingerprint
        )
        new = stmt.excluded
        upsert = stmt.on_conflict_do_update(
            index_elements=["name"],
            set_={
                "owner": sa.func.coalesce(new.owner, monitors.c.owner),
                "tags": new.tags,
                "spec": sa.func.coalesce(new.spec, monitors.c.spec),
                "spec_fingerprint": sa.func.coalesce(new.spec_fingerprint, monitors.c.spec_fingerprint),
                "updated_at": sa.func.now(),
            },
        ).returning(monitors.c.monitor_id)
        with self._tx(name) as conn:
            return int(conn.execute(upsert).scalar_one())

    def monitors(self) -> list[str]:
        """Names of every monitor, sorted.

        Examples
        --------
        >>> store.monitors()  # doctest: +SKIP
        ['demo', 'german-credit']
        """
        with self._read() as conn:
            return [
                str(n) for n in conn.execute(sa.select(monitors.c.name).order_by(monitors.c.name)).scalars()
            ]

    # ------------------------------------------------------------------ the run row
    def _upsert_run(self, conn: Connection, mid: int, run: RunRecord, *, keep_known: bool = False) -> int:
        stmt = pg_insert(runs).values(
            monitor_id=mid,
            window_start=run.window_start,
            window_end=run.window_end,
            status=run.status,
            model_version=run.model_version,
            spec_fingerprint=run.spec_fingerprint,
            n_rows=run.n_rows,
            timings=jsonable(run.timings),
            error=run.error,
            details=jsonable(run.details),
            attempt_id=run.attempt_id,
        )
        new = stmt.excluded
        # a status mark keeps what an earlier attempt knew (model version, ...)
        known = {c: sa.func.coalesce(new[c], runs.c[c]) if keep_known else new[c] for c in _KNOWN}
        upsert = stmt.on_conflict_do_update(
            constraint="runs_monitor_window_key",
            set_={
                "status": new.status,
                **known,
                "timings": new.timings,
                "error": new.error,
                "details": new.details,
                "updated_at": sa.func.now(),
            },
        ).returning(runs.c.run_id)
        return int(conn.execute(upsert).scalar_one())

    def _clear_results(self, conn: Connection, run_id: int) -> list[tuple[str, str, str]]:
        # one round trip: every result table of the run, and the latest rows that pointed at it
        ctes = [
            sa.delete(t).where(t.c.run_id == run_id).cte(f"del_{t.name}")
            for t in (metrics, evidence, explanation_metrics, findings, attribution_gaps, model_rescores)
        ]
        stmt = (
            sa.delete(metric_latest)
            .where(metric_latest.c.run_id == run_id)
            .returning(metric_latest.c.metric, metric_latest.c.attribute, metric_latest.c.group_key)
            .add_cte(*ctes)
        )
        return [
            (str(r["metric"]), str(r["attribute"]), str(r["group_key"]))
            for r in conn.execute(stmt).mappings()
        ]

    def _refresh_latest(
        self, conn: Connection, run_id: int, mid: int, gone: Sequence[tuple[str, str, str]]
    ) -> None:
        # newer-or-equal window wins; re-running an old window never clobbers a newer latest value
        stmt = pg_insert(metric_latest).from_select(
            LATEST_COLUMNS, latest_source().where(metrics.c.run_id == run_id)
        )
        conn.execute(
            stmt.on_conflict_do_update(
                constraint="metric_latest_pkey",
                set_={c: stmt.excluded[c] for c in _LATEST_VALUES},
                where=metric_latest.c.window_start <= stmt.excluded.window_start,
            )
        )
        if gone:  # series whose latest row pointed at this run but which it no longer has: fall back
            m = metrics.c
            fallback = (
                latest_source()
                .where(
                    m.monitor_id == mid,
                    m.metric == sa.bindparam("g_metric"),
                    m.attribute == sa.bindparam("g_attribute"),
                    m.group_key == sa.bindparam("g_group"),
                )
                .order_by(m.window_start.desc())
                .limit(1)
            )
            conn.execute(
                pg_insert(metric_latest)
                .from_select(LATEST_COLUMNS, fallback)
                .on_conflict_do_nothing(constraint="metric_latest_pkey"),
                [{"g_metric": g[0], "g_attribute": g[1], "g_group": g[2]} for g in gone],
            )

    # ------------------------------------------------------------------ status marks
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
        attempt_id: str | None = None,
    ) -> int:
        """Record a window's status without results (failed, data_invalid, skipped, labels_pending, running).

        A failed window is recorded as failed — its earlier results are removed (``keep_results=False``,
        the default for every status but ``running``), never replaced by zeros. ``running`` keeps the
        previous results until the new ones are written. Fields left ``None`` keep the value an earlier
        attempt stored. Every mark is progress: it sets the run's ``updated_at``. Returns the ``run_id``.
        With ``attempt_id`` the mark is that attempt's: refused (:class:`~fairmon.errors.AttemptSupersededError`,
        nothing written) when a newer attempt holds the run.

        Examples
        --------
        >>> store.mark_run("demo", start, end, "failed", error="RuntimeError: worker lost")  # doctest: +SKIP
        7
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
        with self._tx(monitor) as conn:
            mid = self._lock_monitor(conn, monitor)
            self._check_lease(conn, mid, monitor, run.window_start, run.window_end, attempt_id)
            run_id = self._upsert_run(conn, mid, run, keep_known=True)
            if not keep:
                gone = self._clear_results(conn, run_id)
                self._refresh_latest(conn, run_id, mid, gone)
        return run_id

    def heartbeat_run(self, run_id: int, attempt_id: str | None = None) -> bool:
        """Record progress of a ``running`` run (its ``updated_at``), so it is not taken for stale.

        Call it between long steps; :meth:`fail_stale_runs` fails runs without progress. Returns
        whether a running run was touched (``False`` once it finished or was failed as stale, or when
        ``attempt_id`` is given and another attempt holds the run).

        Examples
        --------
        >>> store.heartbeat_run(run_id)  # doctest: +SKIP
        True
        """
        cond = [runs.c.run_id == run_id, runs.c.status == "running"]
        if attempt_id is not None:
            cond.append(sa.or_(runs.c.attempt_id.is_(None), runs.c.attempt_id == attempt_id))
        stmt = sa.update(runs).where(*cond).values(updated_at=sa.func.now())
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def _fail_stale(self, conn: Connection, mid: int, row: sa.RowMapping) -> None:
        run_id = int(row["run_id"])
        reason = ERR_STALE_RUN.format(seconds=float(row["age_s"]))
        extra = jsonable({"error": reason, "stale_since": row["updated_at"]})
        details = runs.c.details
        conn.execute(
            sa.update(runs)
            .where(runs.c.run_id == run_id)
            .values(
                status="failed",
                error=reason,
                details=details.op("||", return_type=details.type)(
                    sa.bindparam("extra", extra, type_=details.type)
                ),
                updated_at=sa.func.now(),
            )
        )
        self._refresh_latest(conn, run_id, mid, self._clear_results(conn, run_id))

    def fail_stale_runs(self, monitor: str, older_than_s: float) -> list[RunRecord]:
        """Mark the monitor's ``running`` runs without progress for ``older_than_s`` seconds ``failed``.

        A run is stale when its ``updated_at`` (set by every status mark, window write and
        :meth:`heartbeat_run`) is older than ``older_than_s``: its process died (a Postgres crash
        mid-write, an OOM kill) and nothing else will ever finish it. Each becomes ``failed`` with
        ``error`` and ``details.error`` = ``"stale: no progress for N s (process crashed?)"`` (N the
        measured age) and ``details.stale_since`` its last progress; like any failed window it keeps
        no result rows. Call it when a run of the monitor starts. Returns the runs it failed, as
        stored now, oldest window first.

        Examples
        --------
        >>> [r.error for r in store.fail_stale_runs("demo", 3600)]  # doctest: +SKIP
        ['stale: no progress for 21600 s (process crashed?)']
        """
        if not older_than_s >= 0:
            raise RecordError(ERR_STALE_AGE.format(value=older_than_s))
        with self._tx(monitor) as conn:
            known = conn.execute(sa.select(monitors.c.monitor_id).where(monitors.c.name == monitor)).scalar()
            if known is None:
                return []  # no such monitor: nothing to fail, and no row created for it
            mid = self._lock_monitor(conn, monitor)
            cutoff = sa.func.now() - sa.func.make_interval(0, 0, 0, 0, 0, 0, float(older_than_s))
            age = sa.func.extract("epoch", sa.func.now() - runs.c.updated_at)
            stale = (
                conn.execute(
                    sa.select(runs.c.run_id, runs.c.updated_at, age.label("age_s"))
                    .where(runs.c.monitor_id == mid, runs.c.status == "running", runs.c.updated_at < cutoff)
                    .order_by(runs.c.window_start, runs.c.window_end)
                )
                .mappings()
                .all()
            )
            for row in stale:
                self._fail_stale(conn, mid, row)
            ids = [int(r["run_id"]) for r in stale]
            if not ids:
                return []
            failed = conn.execute(
                run_select().where(runs.c.run_id.in_(ids)).order_by(runs.c.window_start, runs.c.window_end)
            ).mappings()
            return [run_from_row(r) for r in failed]
