"""Whether a window's run is still alive: heartbeats, the steps left after ``persist``, stale runs.

Why: a process that dies mid-window (an OOM kill, a Postgres crash, ``kill -9`` of ``fairmon run``)
leaves nothing behind that would ever finish its run. Before ``persist`` the run is ``running``; after
it, the run already holds its result status while drift, the alerts and FEU are still to come, so a
death there looked exactly like a completed window — ``succeeded``, and no alert ever sent. The
pipeline therefore records the next step a stored window still has to run (``details.next_step``,
:meth:`RunLiveness.advance_run`; absent once its last step finished), and the monitor's next run fails
both kinds of stale run with a reason (:meth:`RunLiveness.fail_stale_runs`). The store does not know the
step names: it only reads whether ``next_step`` is there.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fairmon.store._base import StoreBase
from fairmon.store._rows import jsonable, run_from_row, run_select
from fairmon.store._runs import _kept_details
from fairmon.store._tables import monitors, runs
from fairmon.store.records import NEXT_STEP, RESULT_STATUSES, RecordError, RunRecord, stored_results_status

__all__ = ["ERR_STALE_RUN", "ERR_STALE_UNFINISHED", "ERR_STALE_AGE", "RunLiveness"]

#: ``error`` and ``details.error`` of a ``running`` run that :meth:`RunLiveness.fail_stale_runs` failed
ERR_STALE_RUN = "stale: no progress for {seconds:.0f} s (process crashed?)"
#: ... and of a stored window whose steps after ``persist`` stopped (``step``: the one that never finished)
ERR_STALE_UNFINISHED = (
    "stale: results stored, then no progress for {seconds:.0f} s before step {step!r} finished (process "
    "crashed?); the window's later steps (drift, alerts, FEU) may not have run: re-run the window"
)
ERR_STALE_AGE = "fail_stale_runs: older_than_s must be a number of seconds >= 0 (got {value!r})"

_HAS_NEXT_STEP = runs.c.details.has_key(NEXT_STEP)  # noqa: W601 - the JSONB ``?`` operator, not dict.has_key


def _attempt_holds(attempt_id: str | None) -> list[sa.ColumnElement[bool]]:
    if attempt_id is None:
        return []
    return [sa.or_(runs.c.attempt_id.is_(None), runs.c.attempt_id == attempt_id)]


class RunLiveness(StoreBase):
    """:meth:`heartbeat_run`, :meth:`advance_run` and :meth:`fail_stale_runs`."""

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
        stmt = (sa.update(runs).where(runs.c.run_id == run_id, runs.c.status == "running", *_attempt_holds(attempt_id))
                .values(updated_at=sa.func.now()))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def advance_run(self, run_id: int, next_step: str | None, attempt_id: str | None = None) -> bool:
        """A step after ``persist`` finished: record the step the window still has to run
        (``details.next_step``; ``None`` removes it: the window is complete) and the progress.

        Whatever the run's status (a step that failed once and is retried advances too). Returns
        whether the run was updated (``False`` when ``attempt_id`` is given and another attempt holds it).

        Examples
        --------
        >>> store.advance_run(run_id, "alert")  # doctest: +SKIP
        True
        """
        d = runs.c.details
        if next_step is None:
            details: Any = d.op("-", return_type=d.type)(sa.literal(NEXT_STEP))
        else:
            details = sa.func.coalesce(d, sa.text("'{}'::jsonb")).op("||", return_type=d.type)(
                sa.bindparam("step", {NEXT_STEP: next_step}, type_=d.type))
        stmt = (sa.update(runs).where(runs.c.run_id == run_id, *_attempt_holds(attempt_id))
                .values(details=details, updated_at=sa.func.now()))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def _fail_stale(self, conn: Connection, row: sa.RowMapping) -> None:
        d = row["details"] or {}
        step = d.get(NEXT_STEP) if row["status"] in RESULT_STATUSES else None
        seconds = float(row["age_s"])
        reason = ERR_STALE_RUN.format(seconds=seconds) if step is None else ERR_STALE_UNFINISHED.format(
            seconds=seconds, step=step)
        held = stored_results_status(row["status"], d)
        extra = {"error": reason, "stale_since": row["updated_at"], **_kept_details("failed", held)}
        if step is not None:
            extra["failed_step"] = step  # a later success of that very step restores the status
        # without rows, an older attempt's model version and row count would describe nothing here
        unknown = {"model_version": None, "n_rows": None} if held is None else {}
        details = runs.c.details
        conn.execute(
            sa.update(runs)
            .where(runs.c.run_id == int(row["run_id"]))
            .values(
                status="failed",
                error=reason,
                **unknown,
                details=details.op("||", return_type=details.type)(
                    sa.bindparam("extra", jsonable(extra), type_=details.type)
                ),
                updated_at=sa.func.now(),
            )
        )

    def fail_stale_runs(self, monitor: str, older_than_s: float) -> list[RunRecord]:
        """Mark the monitor's runs that stopped making progress ``older_than_s`` seconds ago ``failed``.

        A run is stale when its ``updated_at`` (set by every status mark, window write,
        :meth:`heartbeat_run` and :meth:`advance_run`) is older than ``older_than_s`` and it is either
        ``running`` or a stored window with a step still to run (``details.next_step``): its process
        died (a Postgres crash mid-write, an OOM kill) and nothing else will ever finish it. Each
        becomes ``failed`` with ``error`` = ``details.error`` = ``"stale: no progress for N s (process
        crashed?)"`` (N the measured age) — for a stored window :data:`ERR_STALE_UNFINISHED`, naming
        the step, which also becomes ``details.failed_step`` — and ``details.stale_since`` its last
        progress; result rows stay, marked as :meth:`mark_run` marks them. Call it when a run of the
        monitor starts. Returns the runs it failed, as stored now, oldest window first.

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
            alive = sa.or_(runs.c.status == "running", sa.and_(runs.c.status.in_(RESULT_STATUSES), _HAS_NEXT_STEP))
            stale = (
                conn.execute(
                    sa.select(runs.c.run_id, runs.c.status, runs.c.updated_at, runs.c.details, age.label("age_s"))
                    .where(runs.c.monitor_id == mid, alive, runs.c.updated_at < cutoff)
                    .order_by(runs.c.window_start, runs.c.window_end)
                )
                .mappings()
                .all()
            )
            for row in stale:
                self._fail_stale(conn, row)
            ids = [int(r["run_id"]) for r in stale]
            if not ids:
                return []
            failed = conn.execute(
                run_select().where(runs.c.run_id.in_(ids)).order_by(runs.c.window_start, runs.c.window_end)
            ).mappings()
            return [run_from_row(r) for r in failed]
