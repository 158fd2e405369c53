"""A window whose data is late: where it is awaited, and the skipped run with its reason (issue 20)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

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
