"""Whether a window's run is still alive: heartbeats, the steps left after ``persist``, stale runs.

Why: a process that dies mid-window (an OOM kill, a Postgres crash, ``kill -9`` of ``fairmon run``)
leaves nothing behind that would ever finish its run. Before ``persist`` the run is ``running``; after
it, the run already holds its result status while drift, the alerts and FEU are still to come, so a
death there looked exactly like a completed window — ``succeeded``, and no alert ever sent. The
pipeline therefore records the next step a stored window still has to run (:meth:`RunLiveness.advance_run`)
under one of two keys, and the monitor's next run sweeps both kinds of stale run
(:meth:`RunLiveness.fail_stale_runs`):

* ``details.next_step`` — a step the window's alerts depend on (drift, diagnose, report, alert): a
  stale one fails the run (results kept) with :data:`ERR_STALE_UNFINISHED`, and a later success of
  that very step restores the status;
* ``details.later_step`` — a step after the alerts went out (FEU, its follow-up): a stale one leaves
  the status alone (the window and its alerts are complete) and records ``details.unfinished``
  (step, error, since when), which a later success of that step removes.

The store does not know the step names: it reads which key is there.
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

__all__ = ["ERR_STALE_RUN", "ERR_STALE_UNFINISHED", "ERR_STALE_LATER", "ERR_STALE_AGE", "LATER_STEP", "RunLiveness"]

#: ``error`` and ``details.error`` of a ``running`` run that :meth:`RunLiveness.fail_stale_runs` failed
ERR_STALE_RUN = "stale: no progress for {seconds:.0f} s (process crashed?)"
#: ... and of a stored window whose alerting steps stopped (``step``: the one that never finished)
ERR_STALE_UNFINISHED = (
    "stale: results stored, then no progress for {seconds:.0f} s before step {step!r} finished (process "
    "crashed?); the window's drift decision and alerts may not have been made: re-run the window"
)
#: ``details.unfinished.error`` of a stored window whose steps after the alerts stopped (status kept)
ERR_STALE_LATER = (
    "stale: no progress for {seconds:.0f} s before step {step!r} finished (process crashed?); the window "
    "and its alerts are complete, its FEU candidates or follow-up are not: request them with fairmon feu"
)
ERR_STALE_AGE = "fail_stale_runs: older_than_s must be a number of seconds >= 0 (got {value!r})"
#: the run-details key naming a step after the alerts that a stored window still has to run
LATER_STEP = "later_step"
#: the run-details key a stale ``later_step`` becomes
UNFINISHED = "unfinished"

_D = runs.c.details


def _has(key: str) -> sa.ColumnElement[bool]:
    has: sa.ColumnElement[bool] = _D.has_key(key)  # the JSONB ``?`` operator
    return has


def _attempt_holds(attempt_id: str | None) -> list[sa.ColumnElement[bool]]:
    if attempt_id is None:
        return []
    return [sa.or_(runs.c.attempt_id.is_(None), runs.c.attempt_id == attempt_id)]


#: a stored window that still has steps to run (it is alive while they make progress)
_STEPS_LEFT = sa.and_(runs.c.status.in_(RESULT_STATUSES), sa.or_(_has(NEXT_STEP), _has(LATER_STEP)))


class RunLiveness(StoreBase):
    """:meth:`heartbeat_run`, :meth:`advance_run`, :meth:`record_unfinished` and :meth:`fail_stale_runs`."""

    def heartbeat_run(self, run_id: int, attempt_id: str | None = None) -> bool:
        """Record progress of a ``running`` run, or of a stored window with steps left (its
        ``updated_at``), so it is not taken for stale.

        Call it between long steps and when a step after ``persist`` starts (a task that waited in a
        queue); :meth:`fail_stale_runs` sweeps runs without progress. Returns whether a run was touched
        (``False`` once it finished or was failed as stale, or when ``attempt_id`` is given and another
        attempt holds the run).

        Examples
        --------
        >>> store.heartbeat_run(run_id)  # doctest: +SKIP
        True
        """
        alive = sa.or_(runs.c.status == "running", _STEPS_LEFT)
        stmt = (sa.update(runs).where(runs.c.run_id == run_id, alive, *_attempt_holds(attempt_id))
                .values(updated_at=sa.func.now()))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def advance_run(
        self, run_id: int, finished: str, next_step: str | None, attempt_id: str | None = None, *,
        later: bool = False,
    ) -> bool:
        """Step ``finished`` (after ``persist``) is done: record the step the window still has to run,
        ``next_step`` (``details.next_step``, or ``details.later_step`` with ``later``; ``None``: the
        window is complete), and the progress.

        Only when the run records ``finished`` as its step to run (under either key, or as the step a
        sweep found unfinished, whose note it then removes): a step re-run on a complete window (an
        Airflow task cleared on its own) adds nothing. Whatever the run's status (a step that failed once
        and is retried advances too). Returns whether the run was updated.

        Examples
        --------
        >>> store.advance_run(run_id, "drift", "diagnose")  # doctest: +SKIP
        True
        """
        recorded = sa.or_(_D[NEXT_STEP].astext == finished, _D[LATER_STEP].astext == finished,
                          _D[UNFINISHED]["step"].astext == finished)
        cleared: Any = _D.op("-", return_type=_D.type)(sa.literal(NEXT_STEP))
        cleared = cleared.op("-", return_type=_D.type)(sa.literal(LATER_STEP))
        cleared = cleared.op("-", return_type=_D.type)(sa.literal(UNFINISHED))
        if next_step is not None:
            cleared = cleared.op("||", return_type=_D.type)(
                sa.bindparam("step", {LATER_STEP if later else NEXT_STEP: next_step}, type_=_D.type))
        stmt = (sa.update(runs).where(runs.c.run_id == run_id, recorded, *_attempt_holds(attempt_id))
                .values(details=cleared, updated_at=sa.func.now()))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def record_unfinished(self, run_id: int, step: str, error: str, attempt_id: str | None = None) -> bool:
        """A step after the alerts (``details.later_step``) failed: the window and its alerts are complete,
        so its status stays; ``details.unfinished`` (``step``, ``error``) says what is missing, and the
        sweep leaves it alone. A later success of that step (a task retry, ``fairmon feu``) removes it
        (:meth:`advance_run`). Returns whether the run was updated (only a stored run holding
        ``later_step`` = ``step``).

        Examples
        --------
        >>> store.record_unfinished(run_id, "feu", "feu: MethodError: every candidate failed")  # doctest: +SKIP
        True
        """
        note = {UNFINISHED: {"step": step, "error": error}}
        details = (_D.op("-", return_type=_D.type)(sa.literal(LATER_STEP))).op("||", return_type=_D.type)(
            sa.bindparam("note", jsonable(note), type_=_D.type))
        stmt = (sa.update(runs)
                .where(runs.c.run_id == run_id, runs.c.status.in_(RESULT_STATUSES), _D[LATER_STEP].astext == step,
                       *_attempt_holds(attempt_id))
                .values(details=details, updated_at=sa.func.now()))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def _sweep(self, conn: Connection, row: sa.RowMapping) -> bool:
        """Fail (or, for a ``later_step``, annotate) one stale run; False when it moved meanwhile."""
        d = row["details"] or {}
        seconds = float(row["age_s"])
        stored = row["status"] in RESULT_STATUSES
        extra: dict[str, Any]
        values: dict[str, Any]
        if stored and d.get(NEXT_STEP) is None:  # only a later step left: the window stays what it is
            step = d.get(LATER_STEP)
            note = {"step": step, "error": ERR_STALE_LATER.format(seconds=seconds, step=step),
                    "stale_since": row["updated_at"]}
            values = {"details": (_D.op("-", return_type=_D.type)(sa.literal(LATER_STEP))).op(
                "||", return_type=_D.type)(sa.bindparam("extra", jsonable({UNFINISHED: note}), type_=_D.type))}
        else:
            step = d.get(NEXT_STEP) if stored else None
            reason = ERR_STALE_RUN.format(seconds=seconds) if step is None else ERR_STALE_UNFINISHED.format(
                seconds=seconds, step=step)
            held = stored_results_status(row["status"], d)
            extra = {"error": reason, "stale_since": row["updated_at"], **_kept_details("failed", held)}
            if step is not None:
                extra["failed_step"] = step  # a later success of that very step restores the status
            # without rows, an older attempt's model version and row count would describe nothing here
            unknown = {"model_version": None, "n_rows": None} if held is None else {}
            values = {"status": "failed", "error": reason, **unknown,
                      "details": _D.op("||", return_type=_D.type)(
                          sa.bindparam("extra", jsonable(extra), type_=_D.type))}
        # compare-and-set on the progress seen: a step that finished since the SELECT wins
        done = conn.execute(
            sa.update(runs)
            .where(runs.c.run_id == int(row["run_id"]), runs.c.updated_at == row["updated_at"])
            .values(**values, updated_at=sa.func.now())
        )
        return done.rowcount == 1

    def fail_stale_runs(self, monitor: str, older_than_s: float) -> list[RunRecord]:
        """Sweep the monitor's runs that stopped making progress ``older_than_s`` seconds ago.

        A run is stale when its ``updated_at`` (set by every status mark, window write,
        :meth:`heartbeat_run` and :meth:`advance_run`) is older than ``older_than_s`` and it is
        ``running`` or a stored window with a step left: its process died (a Postgres crash
        mid-write, an OOM kill) and nothing else will ever finish it. A ``running`` run, or a stored one
        whose ``next_step`` is left, becomes ``failed`` with ``error`` = ``details.error`` =
        ``"stale: no progress for N s (process crashed?)"`` (N the measured age) — for a stored window
        :data:`ERR_STALE_UNFINISHED`, naming the step, which also becomes ``details.failed_step`` —
        and ``details.stale_since`` its last progress; result rows stay, marked as :meth:`mark_run` marks
        them. A stored window with only a ``later_step`` left keeps its status and gets
        ``details.unfinished`` (:data:`ERR_STALE_LATER`). Call it when a run of the monitor starts.
        Returns the runs it swept, as stored now, oldest window first.

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
            alive = sa.or_(runs.c.status == "running", _STEPS_LEFT)
            stale = (
                conn.execute(
                    sa.select(runs.c.run_id, runs.c.status, runs.c.updated_at, runs.c.details, age.label("age_s"))
                    .where(runs.c.monitor_id == mid, alive, runs.c.updated_at < cutoff)
                    .order_by(runs.c.window_start, runs.c.window_end)
                )
                .mappings()
                .all()
            )
            ids = [int(row["run_id"]) for row in stale if self._sweep(conn, row)]
            if not ids:
                return []
            swept = conn.execute(
                run_select().where(runs.c.run_id.in_(ids)).order_by(runs.c.window_start, runs.c.window_end)
            ).mappings()
            return [run_from_row(r) for r in swept]
