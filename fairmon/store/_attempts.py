"""Attempts of a window and the owner of a monitor name: who may write a window, which file a monitor is.

Why: a window's run row is keyed by (monitor, window), so two attempts of one window (an Airflow zombie
next to its retry, a backfill next to the schedule) would otherwise write the same row and read the same
artifacts in whatever order they run. :meth:`AttemptWrites.begin_attempt` hands every attempt its own id
and makes it the run's holder (a lease taken over explicitly by the newer attempt); every later write of
the older attempt is refused (:class:`~fairmon.errors.AttemptSupersededError`), so it stops without
touching what the newer one does. Likewise a monitor name belongs to one spec file
(:meth:`AttemptWrites.claim_monitor`): a second file with the same ``identity.name`` is refused unless the
operator takes the monitor over.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from fairmon.errors import ConfigError
from fairmon.store._rows import jsonable
from fairmon.store._runs import RunWrites, _kept_details
from fairmon.store._tables import monitors, runs
from fairmon.store.records import stored_results_status

__all__ = ["ERR_MONITOR_OWNED", "AttemptWrites", "new_attempt_id"]

ERR_MONITOR_OWNED = (
    "monitor {name!r} belongs to spec file {owner}; {path} declares the same identity.name. Rename one "
    "of them, or take the monitor over explicitly (fairmon run --take-over-monitor)"
)


def new_attempt_id() -> str:
    """A fresh attempt id: 16 hex digits (a folder name).

    >>> len(new_attempt_id()), new_attempt_id() != new_attempt_id()
    (16, True)
    """
    return uuid.uuid4().hex[:16]


class AttemptWrites(RunWrites):
    """:meth:`begin_attempt` (the window's lease) and :meth:`claim_monitor` (the name's owning file)."""

    def begin_attempt(
        self,
        monitor: str,
        window_start: datetime,
        window_end: datetime,
        *,
        attempt_id: str | None = None,
        spec_fingerprint: str | None = None,
        details: Mapping[str, Any] | None = None,
        carry: Sequence[str] = (),
    ) -> tuple[int, str, str | None]:
        """Start an attempt of the window: the run becomes ``running`` and held by a new attempt id.

        Earlier results stay until the new attempt writes its own. When the run holds them, the new
        details say so (``stored_status``: the status they were written with) and carry the ``carry``
        keys of the old details that describe them; its ``spec_fingerprint`` keeps describing them too
        (this attempt's goes to ``details.attempt_spec_fingerprint`` when it differs) — decided in the
        same transaction that takes the run over, so a concurrent write cannot slip in between.
        Whatever attempt held the run before is superseded: its later writes are refused. Returns
        ``(run_id, attempt_id, previous attempt_id or None)``.

        Examples
        --------
        >>> run_id, attempt, previous = store.begin_attempt("demo", start, end)  # doctest: +SKIP
        """
        attempt = attempt_id or new_attempt_id()
        with self._tx(monitor) as conn:
            mid = self._lock_monitor(conn, monitor)
            key = (runs.c.monitor_id == mid, runs.c.window_start == window_start, runs.c.window_end == window_end)
            before = conn.execute(
                sa.select(runs.c.attempt_id, runs.c.status, runs.c.details, runs.c.spec_fingerprint).where(*key)
            ).first()
            previous = None if before is None else before.attempt_id
            new_details = dict(details or {})
            held = None if before is None else stored_results_status(before.status, before.details)
            fingerprint = spec_fingerprint
            if before is not None and held is not None:
                old = dict(before.details or {})
                new_details = {**{k: old[k] for k in carry if k in old}, **new_details,
                               **_kept_details("running", held)}
                if before.spec_fingerprint is not None:
                    if spec_fingerprint is not None and spec_fingerprint != before.spec_fingerprint:
                        new_details["attempt_spec_fingerprint"] = spec_fingerprint
                    fingerprint = before.spec_fingerprint
            stmt = pg_insert(runs).values(
                monitor_id=mid, window_start=window_start, window_end=window_end, status="running",
                spec_fingerprint=fingerprint, details=jsonable(new_details), attempt_id=attempt,
            )
            new = stmt.excluded
            run_id = conn.execute(
                stmt.on_conflict_do_update(
                    constraint="runs_monitor_window_key",
                    set_={
                        "status": new.status,
                        "spec_fingerprint": sa.func.coalesce(new.spec_fingerprint, runs.c.spec_fingerprint),
                        "error": None,
                        "details": new.details,
                        "attempt_id": new.attempt_id,
                        "updated_at": sa.func.now(),
                    },
                ).returning(runs.c.run_id)
            ).scalar_one()
        return int(run_id), attempt, (None if previous is None else str(previous))

    def current_attempt(self, monitor: str, window_start: datetime, window_end: datetime) -> str | None:
        """The attempt holding the window's run (None: no run, or one written before attempts existed).

        Examples
        --------
        >>> store.current_attempt("demo", start, end)  # doctest: +SKIP
        '3f2a9c0d1e4b5a6f'
        """
        with self._read(monitor) as conn:
            return conn.execute(
                sa.select(runs.c.attempt_id)
                .select_from(runs.join(monitors, monitors.c.monitor_id == runs.c.monitor_id))
                .where(monitors.c.name == monitor, runs.c.window_start == window_start,
                       runs.c.window_end == window_end)
            ).scalar()

    def claim_monitor(self, name: str, spec_path: str, *, take_over: bool = False) -> str | None:
        """Record ``spec_path`` as the file owning monitor ``name``; returns the previous owner.

        A monitor with no recorded file (new, or stored before owners were recorded) is claimed; one
        owned by another file raises :class:`~fairmon.errors.ConfigError` naming both files unless
        ``take_over`` (the operator moved or replaced the spec on purpose).

        Examples
        --------
        >>> store.claim_monitor("demo", "/srv/monitors/demo.yaml")  # doctest: +SKIP
        """
        with self._tx(name) as conn:
            self._lock_monitor(conn, name)
            owner = conn.execute(sa.select(monitors.c.spec_path).where(monitors.c.name == name)).scalar()
            if owner is not None and owner != spec_path and not take_over:
                raise ConfigError(ERR_MONITOR_OWNED.format(name=name, owner=owner, path=spec_path))
            if owner != spec_path:
                conn.execute(
                    sa.update(monitors).where(monitors.c.name == name)
                    .values(spec_path=spec_path, updated_at=sa.func.now())
                )
        return None if owner is None else str(owner)

    def release_monitor(self, name: str, spec_path: str) -> bool:
        """Give up ``spec_path``'s ownership of monitor ``name`` (its windows stay): the next spec file
        to run it claims it. Only the owning file releases; returns whether it did.

        The demo releases the name when it ends: otherwise ``monitors/demo.yaml`` under Airflow, on the
        same database, was refused on every task (an on-call tryout, session 24).

        Examples
        --------
        >>> store.release_monitor("demo", "/srv/demo-output/demo.yaml")  # doctest: +SKIP
        True
        """
        with self._tx(name) as conn:
            done = conn.execute(
                sa.update(monitors).where(monitors.c.name == name, monitors.c.spec_path == spec_path)
                .values(spec_path=None, updated_at=sa.func.now())
            )
        return done.rowcount == 1
