"""A window whose data is late: where it is awaited, and the skipped run with its reason (issue 20)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from fairmon.config import load_spec
from fairmon.pipeline.late import SKIP_KIND_LATE, data_location, data_ready, skip_reason, skip_window
from fairmon.window import Window

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]
W = Window("demo", dt.datetime(2026, 1, 3, tzinfo=dt.UTC), dt.datetime(2026, 1, 4, tzinfo=dt.UTC))


def test_a_missing_partition_is_not_ready_and_the_window_is_stored_skipped(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlalchemy as sa

    from fairmon.store import open_store

    monkeypatch.setenv("FAIRMON_DEMO_DIR", str(tmp_path))
    spec = load_spec(REPO / "monitors" / "demo.yaml")
    where = data_location(spec, W)
    assert where == str(tmp_path / "stream" / "2026-01-03.csv") and not data_ready(spec, W)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    reason = skip_reason(spec, W, waited_s=42)
    assert where in reason and "42 s" in reason and "max_lateness_s=3600" in reason
    run_id = skip_window(spec, {"start": W.start.isoformat(), "end": W.end.isoformat()}, reason, db_url=fresh_database_url)
    assert skip_window(spec, W, reason, db_url=fresh_database_url) == run_id  # a retry: the same run
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        rows = c.execute(sa.text("SELECT status, error, details FROM runs")).all()
    eng.dispose()
    assert [(r[0], r[1]) for r in rows] == [("skipped", reason)]
    assert rows[0][2]["skip"] == {"kind": SKIP_KIND_LATE, "reason": reason}
    (tmp_path / "stream").mkdir()
    (tmp_path / "stream" / "2026-01-03.csv").write_text("a\n1\n")
    assert data_ready(spec, W)


def test_a_skip_after_resolve_window_is_written_by_the_dag_runs_attempt(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sensor skips with resolve_window's dict: no new attempt supersedes the DAG run's (issue 15 x 20)."""
    from fairmon.pipeline import run_step
    from fairmon.store import open_store

    monkeypatch.setenv("FAIRMON_DEMO_DIR", str(tmp_path))
    spec = load_spec(REPO / "monitors" / "demo.yaml")
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    out = run_step("resolve_window", REPO / "monitors" / "demo.yaml", {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    run_id = skip_window(spec, out, skip_reason(spec, W, waited_s=5), db_url=fresh_database_url)
    assert run_id == out["run_id"]
    store = open_store(fresh_database_url)
    try:
        assert store.current_attempt("demo", W.start, W.end) == out["attempt_id"]
        assert store.get_run("demo", W.start, W.end).status == "skipped"  # type: ignore[union-attr]
    finally:
        store.engine.dispose()


SQL_SPEC = """\
spec_version: 1
identity: {{name: late_sql}}
model: {{registry_uri: registry}}
data:
  sql:
    query: "SELECT * FROM events WHERE ts >= :start AND ts < :end"
    url_env: FAIRMON_TEST_LATE_SOURCE_URL
{ready}  max_lateness_s: 600
  poke_interval_s: 1
columns: {{features: [x, s], sensitive: [s]}}
schedule: {{start_date: 2026-01-01}}
"""


def _sql_source(url: str, tmp_path: Path, ready: str = "") -> tuple[Any, dict[str, str], Any]:
    """A SQL-source spec on a real Postgres table ``events`` (and ``watermarks``); its env; an engine."""
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    with eng.begin() as c:
        c.execute(sa.text("CREATE TABLE events (ts timestamptz, x int, s text)"))
        c.execute(sa.text("CREATE TABLE watermarks (loaded_until timestamptz)"))
    path = tmp_path / "late_sql.yaml"
    path.write_text(SQL_SPEC.format(ready=f"    ready_query: {ready!r}\n" if ready else ""))
    return load_spec(path), {"FAIRMON_TEST_LATE_SOURCE_URL": url}, eng


def _insert(eng: Any, sql: str, **params: Any) -> None:
    import sqlalchemy as sa

    with eng.begin() as c:
        c.execute(sa.text(sql), params)


def test_a_sql_window_is_ready_once_the_source_has_rows_at_or_after_its_end(
    tmp_path: Path, fresh_database_url: str
) -> None:
    spec, env, eng = _sql_source(fresh_database_url, tmp_path)
    try:
        assert data_location(spec, W) is None and not data_ready(spec, W, env=env)  # empty source
        _insert(eng, "INSERT INTO events VALUES (:t, 1, 'F')", t=W.start + dt.timedelta(hours=23))
        assert not data_ready(spec, W, env=env)  # the window's own rows only: more may still arrive
        _insert(eng, "INSERT INTO events VALUES (:t, 1, 'F')", t=W.end + dt.timedelta(days=3))
        assert data_ready(spec, W, env=env)  # after a gap (a weekend): a later row still means it landed
        _insert(eng, "DELETE FROM events WHERE ts > :t", t=W.end)
        assert not data_ready(spec, W, env=env)
        _insert(eng, "INSERT INTO events VALUES (:t, 1, 'M')", t=W.end)
        assert data_ready(spec, W, env=env) and data_ready(spec, W, engine=fresh_database_url)
        reason = skip_reason(spec, W, waited_s=600)
        assert "rows at or after 2026-01-04T00:00:00+00:00" in reason and "max_lateness_s=600" in reason
    finally:
        eng.dispose()


def test_a_ready_query_decides_readiness_by_its_first_value(tmp_path: Path, fresh_database_url: str) -> None:
    spec, env, eng = _sql_source(fresh_database_url, tmp_path, "SELECT max(loaded_until) >= :end FROM watermarks")
    try:
        _insert(eng, "INSERT INTO events VALUES (:t, 1, 'F')", t=W.end + dt.timedelta(hours=1))
        assert not data_ready(spec, W, env=env)  # NULL (no watermark yet): not ready, whatever the rows say
        _insert(eng, "INSERT INTO watermarks VALUES (:t)", t=W.end - dt.timedelta(hours=1))
        assert not data_ready(spec, W, env=env)  # false
        _insert(eng, "INSERT INTO watermarks VALUES (:t)", t=W.end)
        assert data_ready(spec, W, env=env)
        assert "ready_query" in skip_reason(spec, W, waited_s=1)
    finally:
        eng.dispose()


def test_a_ready_query_runs_under_the_source_statement_timeout(tmp_path: Path, fresh_database_url: str) -> None:
    from fairmon.errors import DatasetError

    spec, env, eng = _sql_source(fresh_database_url, tmp_path,
                                 "SELECT count(*) > 0 FROM pg_sleep(5) WHERE CAST(:end AS timestamptz) IS NOT NULL")
    eng.dispose()
    with pytest.raises(DatasetError, match="ran longer than 0.2 s") as info:
        data_ready(spec, W, env={**env, "FAIRMON_SOURCE_STATEMENT_TIMEOUT_S": "0.2"})
    assert info.value.retryable  # the sensor checks again at the next poke
    (tmp_path / "broken.yaml").write_text(SQL_SPEC.format(
        ready="    ready_query: 'SELECT ok FROM no_such_table WHERE :end IS NOT NULL'\n"))
    broken = load_spec(tmp_path / "broken.yaml")
    with pytest.raises(DatasetError, match="no_such_table") as info:
        data_ready(broken, W, env=env)
    assert not info.value.retryable


def test_a_ready_query_must_use_the_window() -> None:
    from fairmon.config import SqlSource

    with pytest.raises(ValueError, match=r"ready_query must use the window"):
        SqlSource(query="SELECT * FROM t WHERE ts >= :start AND ts < :end", ready_query="SELECT true")


def test_the_sensor_trigger_waits_for_a_sql_window(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deferred trigger polls the library's check: not ready, then ready once a row at the end lands."""
    import asyncio

    sensor = pytest.importorskip("fairmon_airflow.sensor")
    spec, env, eng = _sql_source(fresh_database_url, tmp_path)
    monkeypatch.setenv("FAIRMON_TEST_LATE_SOURCE_URL", fresh_database_url)
    deadline = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)).isoformat()
    trigger = sensor.DataReadyTrigger("rows", deadline, 0.2, str(tmp_path / "late_sql.yaml"),
                                      W.start.isoformat(), W.end.isoformat())
    assert sensor.DataReadyTrigger(**trigger.serialize()[1]).spec_path == trigger.spec_path

    async def land_then_wait() -> dict[str, Any]:
        async def land() -> None:
            await asyncio.sleep(0.6)
            await asyncio.to_thread(_insert, eng, "INSERT INTO events VALUES (:t, 1, 'F')", t=W.end)

        lander = asyncio.create_task(land())
        async for event in trigger.run():
            await lander
            return dict(event.payload)
        raise AssertionError("no event")

    try:
        assert asyncio.run(asyncio.wait_for(land_then_wait(), timeout=20)) == {"ready": True, "path": "rows"}
        gone = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=0.3)).isoformat()
        never = sensor.DataReadyTrigger("rows", gone, 0.1, str(tmp_path / "late_sql.yaml"),
                                        (W.start + dt.timedelta(days=1)).isoformat(), (W.end + dt.timedelta(days=1)).isoformat())

        async def first() -> dict[str, Any]:
            async for event in never.run():
                return dict(event.payload)
            raise AssertionError("no event")

        assert asyncio.run(asyncio.wait_for(first(), timeout=20)) == {"ready": False, "path": "rows"}
    finally:
        eng.dispose()


def test_the_trigger_reads_the_source_connection_with_the_async_lookup(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the triggerer a sync connection lookup is unreliable (Airflow 3 routes it through the supervisor):
    the trigger must find the spec's Airflow connection with the async lookup, or it would fall back to
    ``data.sql.url_env`` (unset in a deployment) and fail instead of waiting."""
    import asyncio

    import sqlalchemy as sa

    sensor = pytest.importorskip("fairmon_airflow.sensor")
    from airflow.sdk import BaseHook

    _, _, eng = _sql_source(fresh_database_url, tmp_path)
    monkeypatch.delenv("FAIRMON_TEST_LATE_SOURCE_URL", raising=False)
    url = sa.make_url(fresh_database_url)
    monkeypatch.setenv("AIRFLOW_CONN_FAIRMON_SOURCE", url.set(drivername="postgresql").render_as_string(False))

    def no_sync_lookup(conn_id: str) -> Any:
        raise RuntimeError(f"sync get_connection({conn_id!r}) called in the triggerer")

    monkeypatch.setattr(BaseHook, "get_connection", classmethod(lambda cls, conn_id: no_sync_lookup(conn_id)))
    _insert(eng, "INSERT INTO events VALUES (:t, 1, 'F')", t=W.end)
    trigger = sensor.DataReadyTrigger("rows", (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=20)).isoformat(), 0.2,
                                      str(tmp_path / "late_sql.yaml"), W.start.isoformat(), W.end.isoformat())

    async def first() -> dict[str, Any]:
        async for event in trigger.run():
            return dict(event.payload)
        raise AssertionError("no event")

    try:
        assert asyncio.run(asyncio.wait_for(first(), timeout=20)) == {"ready": True, "path": "rows"}
    finally:
        eng.dispose()
