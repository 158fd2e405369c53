"""Run bookkeeping: monitors, the run row of a window and its status marks (heartbeats and stale runs:
:mod:`fairmon.store._liveness`).

Why here, together: a status mark and a window write upsert the same run row, and both keep the
window's result rows consistent with it — a write replaces them (:mod:`fairmon.store._windows` builds
on this class), a mark never removes them: a window computed once is not lost to a failed re-run, a
crash or data that went missing later; the run says whose rows it holds (``details.results_kept``,
``details.persisted_status``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from fairmon.store._base import StoreBase
from fairmon.store._rows import jsonable
from fairmon.store._tables import (
    attribution_gaps,
    evidence,
    explanation_metrics,
    feu_baselines,
    feu_candidates,
    findings,
    metric_latest,
    metrics,
    model_rescores,
    monitors,
    runs,
)
from fairmon.store.records import RESULT_STATUSES, RecordError, RunRecord, RunStatus, stored_results_status

__all__ = [
    "ERR_EMPTY_MONITOR",
    "LATEST_COLUMNS",
    "RunWrites",
    "latest_source",
]

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


def _kept_details(status: str, stored: str | None) -> dict[str, Any]:
    """What a mark with ``status`` records about the result rows the run holds (written as ``stored``)."""
    if stored is None or status in RESULT_STATUSES:
        return {}
    if status == "running":
        return {"stored_status": stored}
    return {"results_kept": True, "persisted_status": stored}


class RunWrites(StoreBase):
    """Monitors and run rows: :meth:`upsert_monitor`, :meth:`delete_monitor`, :meth:`mark_run`, …"""

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

    def delete_monitor(self, name: str, *, owned_by: str | None = None) -> int | None:
        """Delete a monitor and everything stored for it (runs, results, findings, alerts, FEU rows: the
        schema cascades); returns the number of its runs that were deleted (0: no such monitor).

        With ``owned_by`` (a spec file's absolute path) only a monitor that file owns (``monitors.spec_path``,
        :meth:`claim_monitor`) is deleted; one another file owns is left as it is and ``None`` returned.
        For a demo or a test that must start from nothing; never called by the pipeline.

        Examples
        --------
        >>> store.delete_monitor("demo", owned_by="/home/me/demo-output/demo.yaml")  # doctest: +SKIP
        10
        """
        with self._tx(name) as conn:
            row = conn.execute(
                sa.select(monitors.c.monitor_id, monitors.c.spec_path).where(monitors.c.name == name)
            ).first()
            if row is None:
                return 0
            if owned_by is not None and row.spec_path is not None and row.spec_path != owned_by:
                return None
            n = int(conn.execute(
                sa.select(sa.func.count()).select_from(runs).where(runs.c.monitor_id == row.monitor_id)).scalar_one())
            conn.execute(sa.delete(monitors).where(monitors.c.monitor_id == row.monitor_id))
            return n

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
        # one round trip: every result table of the run (FEU's candidates and baselines too: they were
        # computed from the rows being replaced, and a re-run that no longer drifts computes none), and
        # the latest rows that pointed at it
        tables = (metrics, evidence, explanation_metrics, findings, attribution_gaps, model_rescores,
                  feu_candidates, feu_baselines)
        ctes = [sa.delete(t).where(t.c.run_id == run_id).cte(f"del_{t.name}") for t in tables]
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
        attempt_id: str | None = None,
    ) -> int:
        """Record a window's status without writing results (failed, data_invalid, skipped, labels_pending, running).

        A failed window is recorded as failed, never as zeros. A mark never removes result rows: a run
        that holds an earlier attempt's rows keeps them, and the mark says so — ``details.results_kept``
        and ``details.persisted_status`` (the status they were written with) for a failed, data_invalid
        or skipped mark, ``details.stored_status`` for ``running`` — so a computed window is not lost to
        a re-run that fails, crashes or finds its data gone, and a reader can tell kept rows from a
        completed window. Only the next window write replaces them. While the run holds rows its model
        version, row count and spec fingerprint describe them (a differing one of this attempt goes to
        ``details.attempt_model_version`` / ``attempt_n_rows`` / ``attempt_spec_fingerprint``); fields
        left ``None`` keep the stored value then, and are unknown (NULL) on a failed run that holds
        none. Every mark is progress: it sets the run's ``updated_at``. Returns the ``run_id``. With
        ``attempt_id`` the mark is that attempt's: refused (:class:`~fairmon.errors.AttemptSupersededError`,
        nothing written) when a newer attempt holds the run.

        Examples
        --------
        >>> store.mark_run("demo", start, end, "failed", error="RuntimeError: worker lost")  # doctest: +SKIP
        7
        """
        with self._tx(monitor) as conn:
            mid = self._lock_monitor(conn, monitor)
            self._check_lease(conn, mid, monitor, window_start, window_end, attempt_id)
            before = conn.execute(
                sa.select(runs.c.status, runs.c.details, runs.c.model_version, runs.c.n_rows,
                          runs.c.spec_fingerprint).where(
                    runs.c.monitor_id == mid, runs.c.window_start == window_start, runs.c.window_end == window_end)
            ).first()
            held = None if before is None else stored_results_status(before.status, before.details)
            kept = _kept_details(status, held)
            if before is not None and "results_kept" in kept:  # the run's model, rows and spec describe the kept rows
                mine = {"attempt_model_version": model_version, "attempt_n_rows": n_rows,
                        "attempt_spec_fingerprint": spec_fingerprint}
                stored = (before.model_version, before.n_rows, before.spec_fingerprint)
                kept |= {k: v for (k, v), old in zip(mine.items(), stored, strict=True) if v is not None and v != old}
                model_version = n_rows = spec_fingerprint = None
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
                details={**(details or {}), **kept},
            )
            # fields left None keep what an earlier attempt stored only when they describe rows the run holds
            return self._upsert_run(conn, mid, run, keep_known=held is not None or status == "running")
