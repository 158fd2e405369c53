"""A window left 'running' by a crashed worker is marked failed (stale) by the monitor's next run, and
a running window's finished steps count as progress (issue 15 item 12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from fairmon.config import MonitorSpec
from fairmon.pipeline import runs
from fairmon.pipeline.context import RunContext
from fairmon.store import get_engine, upgrade
from fairmon.window import Window

pytestmark = pytest.mark.postgres

SPEC = MonitorSpec.model_validate({
    "spec_version": 1,
    "identity": {"name": "m"},
    "model": {"registry_uri": "r"},
    "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["a"], "extra": ["s"], "sensitive": ["s"], "decision": "d"},
    "schedule": {"start_date": "2026-01-01"},
    "execution": {"task_timeout_s": 60},
})


def _ctx(url: str, day: int) -> RunContext:
    start = datetime(2026, 1, day, tzinfo=UTC)
    return RunContext(SPEC, Window("m", start, start + timedelta(days=1)), db_url=url)


def _age(url: str, day: int, seconds: int) -> None:
    with sa.create_engine(url).begin() as conn:
        conn.execute(sa.text("UPDATE runs SET updated_at = now() - make_interval(secs => :s) WHERE window_start = :w"),
                     {"s": seconds, "w": datetime(2026, 1, day, tzinfo=UTC)})


def test_next_run_fails_a_stale_window_and_progress_keeps_a_live_one(fresh_database_url: str) -> None:
    upgrade(get_engine(fresh_database_url))
    crashed, live, now = _ctx(fresh_database_url, 2), _ctx(fresh_database_url, 3), _ctx(fresh_database_url, 4)
    runs.start_run(crashed)
    runs.start_run(live)
    limit = runs.stale_after_s(now)
    assert limit == 4 * 60
    _age(fresh_database_url, 2, int(limit) + 30)  # the worker died: no progress for longer than a step may run
    _age(fresh_database_url, 3, int(limit) + 30)
    runs.heartbeat(live)  # ... but this one just finished a step
    runs.start_run(now)
    got = {r.window_start.day: r for r in now.store.runs("m")}
    assert got[2].status == "failed" and "stale: no progress" in (got[2].error or "")
    assert got[3].status == "running" and got[4].status == "running"
    for c in (crashed, live, now):
        c.close()
