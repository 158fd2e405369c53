"""The monitor's writer lock: a row lock the read-only analyst role cannot take, with lock and
statement timeouts that end in a StoreError naming the monitor (issue 15 item 4)."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from store_seed import day, window

from fairmon.errors import ConfigError, StoreError
from fairmon.store import Store, _base, _settings
from fairmon.store._settings import StoreTimeouts

pytestmark = pytest.mark.postgres

ANALYST_LOCKS = (
    "SELECT monitor_id FROM monitors WHERE name = 'demo' FOR UPDATE",
    "SELECT monitor_id FROM monitors WHERE name = 'demo' FOR NO KEY UPDATE",
    "SELECT monitor_id FROM monitors WHERE name = 'demo' FOR SHARE",
    "SELECT monitor_id FROM monitors WHERE name = 'demo' FOR KEY SHARE",
    "LOCK TABLE monitors IN SHARE MODE",
    "LOCK TABLE runs IN SHARE MODE",
)


def _as_analyst(conn: sa.Connection) -> None:
    conn.execute(sa.text("SET ROLE fairmon_analyst"))


def test_analyst_cannot_take_the_lock_nor_block_writes(engine) -> None:  # type: ignore[no-untyped-def]
    store = Store(engine, timeouts=StoreTimeouts(lock_s=1.0))
    store.write_window(window("demo", 0))
    with engine.connect() as analyst:
        _as_analyst(analyst)
        for sql in ANALYST_LOCKS:
            with pytest.raises(sa.exc.ProgrammingError, match="permission denied") as info:
                analyst.execute(sa.text(sql))
            assert info.value.orig.pgcode == "42501"  # type: ignore[union-attr]
            analyst.rollback()
            _as_analyst(analyst)
        # the attack of issue 15: the old advisory lock, held for the session, plus an open read
        analyst.execute(sa.text("SELECT pg_advisory_lock(hashtext('fairmon.monitor:' || 'demo'))"))
        assert analyst.execute(sa.text("SELECT count(*) FROM runs")).scalar() == 1
        t0 = time.monotonic()
        store.write_window(window("demo", 1))
        store.mark_run("demo", day(2), day(3), "failed", error="boom")
        assert time.monotonic() - t0 < 1.0  # never waited on the analyst
    assert [r.status for r in store.runs("demo")] == ["succeeded", "succeeded", "failed"]


def test_held_row_lock_fails_writer_after_lock_timeout(engine) -> None:  # type: ignore[no-untyped-def]
    store = Store(engine, timeouts=StoreTimeouts(lock_s=0.5))
    store.write_window(window("demo", 0))
    with engine.connect() as holder:
        holder.execute(sa.text("SELECT 1 FROM monitors WHERE name = 'demo' FOR UPDATE"))
        for write in (
            lambda: store.write_window(window("demo", 1)),
            lambda: store.mark_run("demo", day(1), day(2), "running"),
        ):
            t0 = time.monotonic()
            with pytest.raises(StoreError) as info:
                write()
            assert 0.4 < time.monotonic() - t0 < 10
            assert str(info.value) == _base.ERR_LOCK_TIMEOUT.format(what="monitor 'demo'", seconds=0.5)
            assert info.value.retryable is True
        holder.rollback()
    store.write_window(window("demo", 1))  # the lock is free again: the write goes through
    assert len(store.runs("demo")) == 2


def test_a_statement_over_the_timeout_fails_with_its_limit(engine, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    store = Store(engine, timeouts=StoreTimeouts(statement_s=0.2))

    def slow(self, conn, run_id, mid, ws, rows):  # type: ignore[no-untyped-def]
        conn.execute(sa.text("SELECT pg_sleep(2)"))

    monkeypatch.setattr(Store, "_insert_evidence", slow)
    with pytest.raises(StoreError) as info:
        store.write_window(window("demo", 0))
    assert str(info.value) == _base.ERR_STATEMENT_TIMEOUT.format(what="monitor 'demo'", seconds=0.2)
    assert store.get_run("demo", day(0)) is None  # rolled back


def test_timeouts_come_from_the_environment(engine, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    assert Store(engine).timeouts == StoreTimeouts(lock_s=30.0, statement_s=300.0)
    monkeypatch.setenv(_settings.ENV_LOCK_TIMEOUT_S, "1.5")
    monkeypatch.setenv(_settings.ENV_STATEMENT_TIMEOUT_S, "0")
    store = Store(engine)
    assert store.timeouts == StoreTimeouts(lock_s=1.5, statement_s=0.0)
    with store._read() as conn:  # every transaction sets them locally
        assert conn.execute(sa.text("SHOW lock_timeout")).scalar() == "1500ms"
        assert conn.execute(sa.text("SHOW statement_timeout")).scalar() == "0"
    with engine.connect() as conn:  # ...and only locally
        assert conn.execute(sa.text("SHOW lock_timeout")).scalar() == "0"
    monkeypatch.setenv(_settings.ENV_LOCK_TIMEOUT_S, "soon")
    with pytest.raises(ConfigError) as info:
        Store(engine)
    assert str(info.value) == _settings.ERR_TIMEOUT_VALUE.format(
        name="FAIRMON_DB_LOCK_TIMEOUT_S", value="soon"
    )
