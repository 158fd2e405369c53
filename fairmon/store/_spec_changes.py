"""spec_changed events: a window computed under a different spec than the series' previous window.

Why: re-running a window (or continuing a series) with an edited spec silently wrote another spec
fingerprint into an existing series (findings 1 -> 0, no mark anywhere; issue 20). The pipeline calls
:meth:`SpecChanges.spec_change_of` when a window's run starts; a change is stored in
``spec_changes`` (one row per run), shown as a marker in the report's trends and as
``metric_series.spec_changed``, and printed by ``fairmon run`` / ``backfill``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from fairmon.store._base import StoreBase
from fairmon.store._tables import monitors, runs, spec_changes

__all__ = ["SpecChange", "SpecChanges"]


@dataclass(frozen=True)
class SpecChange:
    """The spec of ``window_start`` differs from the one ``previous_window_start`` was computed with.

    Examples
    --------
    >>> from datetime import UTC
    >>> c = SpecChange("demo", datetime(2026, 1, 4, tzinfo=UTC), datetime(2026, 1, 3, tzinfo=UTC),
    ...                "a1b2c3d4e5f6aaaa", "0f9e8d7c6b5abbbb")
    >>> c.text
    'spec_changed: demo window 2026-01-04 uses spec 0f9e8d7c6b5a, the series had a1b2c3d4e5f6 (window 2026-01-03)'
    """

    monitor: str
    window_start: datetime
    previous_window_start: datetime
    previous_fingerprint: str
    spec_fingerprint: str

    @property
    def text(self) -> str:
        """One line for logs and the CLI."""
        return (
            f"spec_changed: {self.monitor} window {self.window_start:%Y-%m-%d} uses spec "
            f"{self.spec_fingerprint[:12]}, the series had {self.previous_fingerprint[:12]} "
            f"(window {self.previous_window_start:%Y-%m-%d})"
        )


class SpecChanges(StoreBase):
    """Detect and store spec_changed events."""

    def spec_change_of(self, monitor: str, window_start: datetime, fingerprint: str) -> SpecChange | None:
        """``fingerprint`` against the series' latest run at or before ``window_start`` (this window's
        earlier run included): the change, or None for the same spec or a first window.

        Call it before the window's own run row takes the new fingerprint (the pipeline does, when
        the run starts), then :meth:`record_spec_change` with the run's id.
        """
        r = runs.c
        stmt = (
            sa.select(r.window_start, r.spec_fingerprint)
            .join(monitors, monitors.c.monitor_id == r.monitor_id)
            .where(monitors.c.name == monitor, r.window_start <= window_start, r.spec_fingerprint.is_not(None))
            .order_by(r.window_start.desc())
            .limit(1)
        )
        with self._read(monitor) as conn:
            prev = conn.execute(stmt).first()
        if prev is None or prev.spec_fingerprint == fingerprint:
            return None
        return SpecChange(monitor, window_start, prev.window_start, str(prev.spec_fingerprint), fingerprint)

    @staticmethod
    def _store_change(conn: sa.Connection, run_id: int, mid: int, change: SpecChange) -> None:
        values = {
            "monitor_id": mid,
            "window_start": change.window_start,
            "previous_window_start": change.previous_window_start,
            "previous_fingerprint": change.previous_fingerprint,
            "spec_fingerprint": change.spec_fingerprint,
        }
        stmt = pg_insert(spec_changes).values(run_id=run_id, **values)
        conn.execute(stmt.on_conflict_do_update(index_elements=["run_id"], set_={**values, "recorded_at": sa.func.now()}))

    def record_spec_change(self, run_id: int, change: SpecChange) -> None:
        """Store ``change`` against the window's run ``run_id`` (one row per run: the latest change)."""
        with self._tx(change.monitor) as conn:
            mid = self._lock_monitor(conn, change.monitor)
            self._store_change(conn, run_id, mid, change)

    def forget_spec_change(self, monitor: str, run_id: int) -> None:
        """Remove ``run_id``'s spec_changed event: the window was rerun under the series' spec again."""
        with self._tx(monitor) as conn:
            self._lock_monitor(conn, monitor)
            conn.execute(sa.delete(spec_changes).where(spec_changes.c.run_id == run_id))

    def spec_changes(self, monitor: str) -> list[SpecChange]:
        """The monitor's spec_changed events, oldest window first."""
        sc = spec_changes.c
        stmt = (
            sa.select(sc.window_start, sc.previous_window_start, sc.previous_fingerprint, sc.spec_fingerprint)
            .join(monitors, monitors.c.monitor_id == sc.monitor_id)
            .where(monitors.c.name == monitor)
            .order_by(sc.window_start)
        )
        with self._read(monitor) as conn:
            return [SpecChange(monitor, r.window_start, r.previous_window_start, str(r.previous_fingerprint),
                               str(r.spec_fingerprint)) for r in conn.execute(stmt)]
