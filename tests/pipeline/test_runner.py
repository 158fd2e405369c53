"""Runner semantics: windows for backfills, step errors recorded as ``failed`` with the text (never
zeros), the CLI's exit status, rule membership for the group-overlap measure."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "pipeline") not in sys.path:
    sys.path.insert(0, str(_TESTS / "pipeline"))

from pipeline_demo_setup import prepare_demo  # noqa: E402

from fairmon.config import MonitorSpec, load_spec  # noqa: E402
from fairmon.errors import ConfigError  # noqa: E402
from fairmon.pipeline import run_step, window_for, windows_between  # noqa: E402
from fairmon.pipeline.runner import ERR_UNKNOWN_STEP  # noqa: E402

SPEC = {
    "spec_version": 1,
    "identity": {"name": "m"},
    "model": {"registry_uri": "r"},
    "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["a"], "sensitive": ["a"]},
    "schedule": {"start_date": "2026-01-01", "cron": "0 6 * * *", "window": "2d"},
}


def test_window_for_uses_the_schedule_and_window_length() -> None:
    spec = MonitorSpec.model_validate(SPEC)
    w = window_for(spec, "2026-01-05T12:00:00+00:00")  # tick 06:00 on the 5th → interval ends 06:00 on the 6th
    assert w.end == datetime(2026, 1, 6, 6, tzinfo=UTC)
    assert w.start == datetime(2026, 1, 4, 6, tzinfo=UTC)  # two-day window ending there


def test_windows_between_in_order_and_bad_range() -> None:
    spec = MonitorSpec.model_validate(SPEC)
    ws = windows_between(spec, "2026-01-01", "2026-01-04")
    assert [w.end.day for w in ws] == [2, 3, 4]  # ticks at 06:00 on the 1st..3rd (the 4th's is after 00:00)
    assert ws == sorted(ws, key=lambda w: w.start)
    with pytest.raises(ConfigError):
        windows_between(spec, "2026-01-04", "2026-01-01")


def test_unknown_step_is_a_clear_error() -> None:
    spec = MonitorSpec.model_validate(SPEC)
    with pytest.raises(ConfigError) as err:
        run_step("nope", spec, {"logical_date": "2026-01-02"})
    assert str(err.value).startswith(ERR_UNKNOWN_STEP.format(step="nope", steps="resolve_window")[:40])


@pytest.mark.postgres
@pytest.mark.slow
def test_step_failure_is_recorded_as_failed_with_the_error(tmp_path: Path, fresh_database_url: str) -> None:
    from fairmon.cli import main
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2)
    shutil.rmtree(tmp_path / "demo" / "registry")  # the model snapshot is gone
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    day = manifest["windows"][0]["start"][:10]
    code = main(["run", "--monitor", str(spec), "--logical-date", day, "--db", fresh_database_url, "--json"])
    assert code == 1
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, error, details FROM runs")).one()
        n = c.execute(sa.text("SELECT (SELECT count(*) FROM metrics) + (SELECT count(*) FROM evidence)")).scalar_one()
    eng.dispose()
    assert run.status == "failed" and n == 0
    assert run.error.startswith("pull_snapshot: SnapshotError:") and run.details["failed_step"] == "pull_snapshot"


@pytest.mark.postgres
@pytest.mark.slow
def test_an_artifact_location_that_cannot_be_opened_fails_the_window_with_one_line(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An fsspec backend that is not installed used to escape as a bare ImportError (a traceback), and
    recording the failure needed the same artifacts, so the window stayed 'running' until it went stale."""
    from fairmon.pipeline import run_window
    from fairmon.pipeline.artifacts import ERR_LOCATION
    from fairmon.store import open_store

    if importlib.util.find_spec("boxfs") is not None:  # pragma: no cover - only where boxfs is installed
        pytest.skip("boxfs is installed")
    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    monkeypatch.setenv("FAIRMON_ARTIFACT_LOCATION", "box://bucket/fairmon")
    out = run_window(spec, manifest["windows"][0]["start"][:10], db_url=fresh_database_url, notify=False)
    expected = ERR_LOCATION.format(location="box://bucket/fairmon", error="")
    assert out.status == "failed" and out.error is not None and out.error.startswith(f"ConfigError: {expected}")
    assert not any(r.exc_info for r in caplog.records)  # a clear error, no traceback
    run, n = _run_row_and_result_count(fresh_database_url)
    assert run.status == "failed" and run.error.startswith(f"resolve_window: ConfigError: {expected}") and n == 0


def _run_row_and_result_count(db_url: str) -> tuple[object, int]:
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, error, details FROM runs")).one()
        n = c.execute(sa.text("SELECT (SELECT count(*) FROM metrics) + (SELECT count(*) FROM evidence)")).scalar_one()
    eng.dispose()
    return run, int(n)


@pytest.mark.postgres
@pytest.mark.slow
def test_an_feu_failure_after_the_alerts_keeps_the_window_and_says_what_is_unfinished(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review (session 24): FEU failing marked an alerted window failed, taking it out of the drift history
    and the baselines. After the alerts, a failure keeps the status and records details.unfinished; the
    step's retry (or fairmon feu) removes it."""
    from fairmon.pipeline import run_window, steps
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    day = manifest["windows"][0]["start"][:10]
    real = steps.STEPS["feu"]

    def broken(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("out of GPU memory")

    monkeypatch.setitem(steps.STEPS, "feu", broken)
    out = run_window(spec, day, db_url=fresh_database_url, notify=False)
    assert out.status == "failed" and out.error == "RuntimeError: out of GPU memory"  # this run failed
    run, n = _run_row_and_result_count(fresh_database_url)
    assert run.status == "succeeded" and run.error is None and n > 0  # ... the window did not
    assert run.details["unfinished"] == {"step": "feu", "error": "feu: RuntimeError: out of GPU memory"}
    assert "later_step" not in run.details and "failed_step" not in run.details
    monkeypatch.setitem(steps.STEPS, "feu", real)
    run_step("feu", spec, window_for(load_spec(spec), day), db_url=fresh_database_url, notify=False, attempt=2)
    run, _ = _run_row_and_result_count(fresh_database_url)
    assert run.status == "succeeded" and "unfinished" not in run.details and run.details["later_step"] == "followup"


@pytest.mark.postgres
@pytest.mark.slow
def test_a_failure_after_persist_keeps_the_results_and_a_successful_retry_restores_the_status(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Losing a computed window to, say, a failing drift query or Slack outage would be data loss: the
    run says failed (and where), the rows stay, and the retry that succeeds puts the status back."""
    from fairmon.pipeline import run_window, steps
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    day = manifest["windows"][0]["start"][:10]
    assert run_window(spec, day, db_url=fresh_database_url, notify=False).status == "succeeded"
    _, stored = _run_row_and_result_count(fresh_database_url)
    assert stored > 0
    window = window_for(load_spec(spec), day)

    real_drift, real_pull = steps.STEPS["drift"], steps.STEPS["pull_data"]

    def broken(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("history query timed out")

    monkeypatch.setitem(steps.STEPS, "drift", broken)
    with pytest.raises(RuntimeError):
        run_step("drift", spec, window, db_url=fresh_database_url, notify=False, attempt=2)
    run, n = _run_row_and_result_count(fresh_database_url)
    assert run.status == "failed" and run.error.startswith("drift: RuntimeError: history query timed out")
    assert run.details["failed_step"] == "drift" and run.details["results_kept"] is True
    assert n == stored  # nothing computed was thrown away
    assert run.details["prediction_source"] == "model"  # what persist recorded is kept with the results

    monkeypatch.setitem(steps.STEPS, "drift", real_drift)
    run_step("drift", spec, window, db_url=fresh_database_url, notify=False, attempt=3)
    run, n = _run_row_and_result_count(fresh_database_url)
    assert run.status == "succeeded" and run.error is None and n == stored
    assert run.details["recovered_step"] == "drift" and run.details["prediction_source"] == "model"
    assert "failed_step" not in run.details and "results_kept" not in run.details

    # a re-run failing *before* persist (a source that timed out) keeps the computed window too
    monkeypatch.setitem(steps.STEPS, "pull_data", broken)
    assert run_window(spec, day, db_url=fresh_database_url, notify=False).status == "failed"  # a new attempt
    run, n = _run_row_and_result_count(fresh_database_url)
    assert run.status == "failed" and run.details["failed_step"] == "pull_data" and n == stored
    assert run.details["results_kept"] is True and run.details["persisted_status"] == "succeeded"
    assert run.details["prediction_source"] == "model"  # carried by the new attempt with the rows it keeps
    monkeypatch.setitem(steps.STEPS, "pull_data", real_pull)
    assert run_window(spec, day, db_url=fresh_database_url, notify=False).status == "succeeded"
    run, n = _run_row_and_result_count(fresh_database_url)
    assert n == stored and "results_kept" not in run.details and "stored_status" not in run.details


@pytest.mark.postgres
@pytest.mark.slow
def test_backfill_with_status_reruns_only_the_windows_stored_with_it(tmp_path: Path, fresh_database_url: str) -> None:
    """How late labels (labels_pending) or an outage (failed) get recomputed: only those windows re-run."""
    from fairmon.pipeline import backfill
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    first, last = manifest["windows"][0]["start"][:10], manifest["windows"][-1]["start"][:10]
    assert [o.status for o in backfill(spec, first, last, db_url=fresh_database_url)] == ["succeeded"] * 3
    eng = sa.create_engine(fresh_database_url)
    with eng.begin() as c:  # pretend the second window's labels had been missing
        c.execute(sa.text("UPDATE runs SET status = 'labels_pending' WHERE window_start = "
                          "(SELECT min(window_start) + interval '1 day' FROM runs)"))
    again = backfill(spec, first, last, db_url=fresh_database_url, only_statuses=["labels_pending"])
    assert [o.window["start"][:10] for o in again] == [manifest["windows"][1]["start"][:10]]
    assert again[0].status == "succeeded"
    with eng.connect() as c:
        assert c.execute(sa.text("SELECT count(*) FROM runs WHERE status = 'succeeded'")).scalar_one() == 3
    eng.dispose()
    with pytest.raises(ConfigError, match="unknown run status 'pending'"):
        backfill(spec, first, last, db_url=fresh_database_url, only_statuses=["pending"])
