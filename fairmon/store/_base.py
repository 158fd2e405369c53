"""Plumbing every part of the store shares: transactions with timeouts, the monitor's writer lock.

Why a row lock and not an advisory lock: any role that may connect can take an advisory lock, so the
read-only analyst role could stall every write of a monitor with one ``pg_advisory_lock`` call.
``SELECT … FOR NO KEY UPDATE`` on the monitor's row needs the UPDATE privilege, which the analyst
lacks; it serialises the writers of one monitor (no deadlocks on ``metric_latest`` and the run row)
without blocking the foreign-key checks of plain inserts (alerts of that monitor). Every transaction
sets ``lock_timeout`` and ``statement_timeout`` (:class:`~fairmon.store._settings.StoreTimeouts`),
so a writer never waits forever; when one expires the error names the monitor and the timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection, Engine

from fairmon._sqlstate import LOCK_NOT_AVAILABLE, QUERY_CANCELED
from fairmon.errors import AttemptSupersededError, StoreError
from fairmon.store._settings import StoreTimeouts
from fairmon.store._tables import monitors, runs
from fairmon.store.engine import translate_errors
from fairmon.store.migrations import require_head
from fairmon.store.records import RecordError

__all__ = [
    "ERR_UNKNOWN_RUN",
    "ERR_LOCK_TIMEOUT",
    "ERR_STATEMENT_TIMEOUT",
    "ERR_SUPERSEDED",
    "StoreBase",
]

ERR_UNKNOWN_RUN = "no run with id {run_id}"
ERR_LOCK_TIMEOUT = (
    "{what}: gave up waiting for a lock after lock_timeout {seconds:g} s (another writer or a stuck "
    "session holds it; the limit is FAIRMON_DB_LOCK_TIMEOUT_S)"
)
ERR_STATEMENT_TIMEOUT = (
    "{what}: a statement ran longer than statement_timeout {seconds:g} s and was cancelled "
    "(the limit is FAIRMON_DB_STATEMENT_TIMEOUT_S)"
)
ERR_SUPERSEDED = (
    "monitor {monitor!r} window {window}: attempt {attempt} was superseded by attempt {holder} (a newer run "
    "of the window started); this attempt writes nothing more"
)


def _what(monitor: str | None) -> str:
    return f"monitor {monitor!r}" if monitor else "fairmon store"


class StoreBase:
    """Engine, timeouts, transactions and the monitor lock; the concern mixins build on it."""

    engine: Engine
    timeouts: StoreTimeouts

    def __init__(
        self, engine: Engine, *, check_schema: bool = True, timeouts: StoreTimeouts | None = None
    ) -> None:
        self.engine = engine
        self.timeouts = StoreTimeouts.from_env() if timeouts is None else timeouts
        if check_schema:
            require_head(engine)

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def _timeout_errors(self, monitor: str | None) -> Iterator[None]:
        """Map Postgres' lock / statement timeouts to a :class:`StoreError` naming monitor and limit."""
        try:
            yield
        except sa_exc.DBAPIError as exc:
            pgcode = getattr(exc.orig, "pgcode", None)
            if pgcode == LOCK_NOT_AVAILABLE:
                text = ERR_LOCK_TIMEOUT.format(what=_what(monitor), seconds=self.timeouts.lock_s)
            elif pgcode == QUERY_CANCELED and "statement timeout" in str(exc.orig):
                text = ERR_STATEMENT_TIMEOUT.format(what=_what(monitor), seconds=self.timeouts.statement_s)
            else:
                raise
            err = StoreError(text)
            err.retryable = True  # the lock holder or the load may be gone on the next attempt
            raise err from exc

    def _set_timeouts(self, conn: Connection) -> None:
        settings = self.timeouts.settings()
        conn.execute(
            sa.select(
                sa.func.set_config("lock_timeout", settings["lock_timeout"], True),
                sa.func.set_config("statement_timeout", settings["statement_timeout"], True),
            )
        )

    @contextmanager
    def _tx(self, monitor: str | None = None) -> Iterator[Connection]:
        """One write transaction (commit on success, rollback on error) with the store's timeouts."""
        with translate_errors(self.engine), self._timeout_errors(monitor), self.engine.begin() as conn:
            self._set_timeouts(conn)
            yield conn

    @contextmanager
    def _read(self, monitor: str | None = None) -> Iterator[Connection]:
        """A read-only connection (its implicit transaction rolls back) with the store's timeouts."""
        with translate_errors(self.engine), self._timeout_errors(monitor), self.engine.connect() as conn:
            self._set_timeouts(conn)
            yield conn

    # ------------------------------------------------------------------ monitors
    @staticmethod
    def _lock_monitor(conn: Connection, name: str) -> int:
        """Take the monitor's writer lock (its row, held until commit); returns its ``monitor_id``.

        Why: two writers of the same monitor (an Airflow retry overlapping a zombie attempt, a
        backfill next to the scheduled run) upsert the same ``metric_latest`` rows and the same run
        row in whatever order their statements reach them; under load Postgres then reports a
        deadlock and one window fails. Windows of one monitor are written one after another anyway,
        so one row lock per monitor costs nothing and removes the lock-order race. The row is
        created first, so the lock exists for a monitor's very first window too.
        """
        lock = sa.select(monitors.c.monitor_id).where(monitors.c.name == name).with_for_update(key_share=True)
        mid = conn.execute(lock).scalar()
        if mid is None:  # first write of this monitor (the insert is not tried every time: it burns an id)
            conn.execute(
                pg_insert(monitors).values(name=name).on_conflict_do_nothing(index_elements=["name"])
            )
            mid = conn.execute(lock).scalar_one()
        return int(mid)

    @staticmethod
    def _ensure_monitor(conn: Connection, name: str) -> int:
        """The monitor's id, creating its row on first use (no lock: for rows that only reference it)."""
        mid = conn.execute(sa.select(monitors.c.monitor_id).where(monitors.c.name == name)).scalar()
        if mid is None:
            stmt = pg_insert(monitors).values(name=name)
            mid = conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["name"], set_={"name": stmt.excluded.name}
                ).returning(monitors.c.monitor_id)
            ).scalar_one()
        return int(mid)

    @staticmethod
    def _run_key(conn: Connection, run_id: int) -> tuple[int, datetime]:
        """``(monitor_id, window_start)`` of a run; :class:`RecordError` when there is no such run."""
        row = (
            conn.execute(sa.select(runs.c.monitor_id, runs.c.window_start).where(runs.c.run_id == run_id))
            .mappings()
            .first()
        )
        if row is None:
            raise RecordError(ERR_UNKNOWN_RUN.format(run_id=run_id))
        return int(row["monitor_id"]), row["window_start"]

    def _check_run_lease(self, conn: Connection, run_id: int, mid: int, ws: datetime, attempt_id: str | None) -> None:
        """:meth:`_check_lease` for a write keyed by ``run_id`` (row-locks the run; no-op without an attempt)."""
        if attempt_id is None:
            return
        row = conn.execute(
            sa.select(runs.c.window_end, monitors.c.name)
            .select_from(runs.join(monitors, monitors.c.monitor_id == runs.c.monitor_id))
            .where(runs.c.run_id == run_id).with_for_update(of=runs)
        ).one()
        self._check_lease(conn, mid, str(row.name), ws, row.window_end, attempt_id)

    @staticmethod
    def _check_lease(
        conn: Connection, mid: int, monitor: str, window_start: datetime, window_end: datetime,
        attempt_id: str | None,
    ) -> None:
        """Refuse a write of ``attempt_id`` to a run another attempt holds (:class:`AttemptSupersededError`).

        Call it holding the monitor's writer lock: an attempt takes a run over under the same lock, so
        the check and the write that follows it see the same holder. ``None`` (a write that is not an
        attempt's, e.g. a bulk load) and a run without a holder pass.
        """
        if attempt_id is None:
            return
        holder = conn.execute(
            sa.select(runs.c.attempt_id).where(
                runs.c.monitor_id == mid, runs.c.window_start == window_start, runs.c.window_end == window_end
            )
        ).scalar()
        if holder is not None and holder != attempt_id:
            raise AttemptSupersededError(
                ERR_SUPERSEDED.format(monitor=monitor, window=window_start.isoformat(), attempt=attempt_id,
                                      holder=holder)
            )
