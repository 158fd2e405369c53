"""The drift step against the store: a reference window older than the loaded history, a schedule that
does not start at midnight in a non-UTC timezone, and drifts that outlast the history.

Windows go through the real steps (resolve_window → persist → drift → alert) with a synthetic outcome
artifact in place of the compute steps, so dozens of windows take seconds.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fairmon.config import MonitorSpec
from fairmon.pipeline import run_step, window_for
from fairmon.pipeline.context import RunContext
from fairmon.store import open_store

pytestmark = pytest.mark.postgres


def _spec(tmp: Path, *, cron: str, timezone: str, drift: dict[str, Any]) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1,
        "identity": {"name": "hist"},
        "model": {"registry_uri": str(tmp / "registry")},
        "data": {"files": {"pattern": str(tmp / "d" / "{start:%Y-%m-%d}.csv")}},
        "columns": {"features": ["a", "sex"], "sensitive": ["sex"]},
        "schedule": {"start_date": "2025-12-01", "cron": cron, "timezone": timezone},
        "drift": drift,
        "alerts": {"slack_channel": "#fairness"},
        "execution": {"artifact_location": str(tmp / "artifacts")},
    })


def _row(metric: str, value: float) -> dict[str, Any]:
    return {"metric": metric, "attribute": "sex", "group": None, "value": value, "ci_low": value - 0.02,
            "ci_high": value + 0.02, "n": 5000, "n_nan": 0, "status": "ok"}


def _run(spec: MonitorSpec, when: str, rows: list[dict[str, Any]], db_url: str) -> dict[str, Any]:
    """One window through the storing steps; returns the drift result and the rendered alerts."""
    window = window_for(spec, when)
    ctx = RunContext(spec, window, db_url=db_url, notify=True)
    try:
        run_step("resolve_window", spec, window, context=ctx)
        ctx.artifacts.put_json("outcome", {"rows": rows})
        for step in ("persist", "drift", "alert"):
            run_step(step, spec, window, context=ctx)
        return {"drift": ctx.artifacts.get_json("drift"), "alert": ctx.artifacts.get_json("alert")}
    finally:
        ctx.close()


def _statuses(db_url: str) -> set[str]:
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        out = set(c.execute(sa.text("SELECT DISTINCT status FROM runs")).scalars())
    eng.dispose()
    return out


def _day(first: date, i: int) -> str:
    return f"{first + timedelta(days=i):%Y-%m-%d}T03:00:00"  # the 03:00 New York tick of that day


def test_reference_window_on_a_3am_new_york_schedule_outlives_the_history(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path, cron="0 3 * * *", timezone="America/New_York",
                 drift={"baseline": {"kind": "reference", "window": "2026-01-01"}, "allowed_ranges": {},
                        "persistence": {"m": 1, "n": 1}})
    first = date(2025, 12, 31)
    values = [0.10, 0.03] + [0.03] * 14 + [0.10]  # Dec 31, Jan 1 (the reference), Jan 2..15, Jan 16
    out = [_run(spec, _day(first, i), [_row("dp_difference", v)], fresh_database_url) for i, v in enumerate(values)]
    assert _statuses(fresh_database_url) == {"succeeded"}  # no window failed on its baseline

    notes = [o["drift"]["baseline"] for o in out]
    assert notes[0]["status"] == "cold_start" and "precedes the reference window" in notes[0]["reason"]
    assert notes[1]["status"] == "cold_start" and "is the reference window" in notes[1]["reason"]
    assert notes[1]["reference_window"]["start"] == "2026-01-01T08:00:00+00:00"  # 03:00 in New York
    assert {n["status"] for n in notes[2:]} == {"compared"}
    assert [f for o in out[:-1] for f in o["drift"]["findings"]] == []

    last = out[-1]["drift"]
    assert last["history"] < len(values) - 2  # the Jan 1 window is no longer in the loaded history
    (f,) = last["findings"]
    assert (f["kind"], f["status"], f["numbers"]["test"]) == ("significant_change", "open", "z")
    assert f["baseline"] == pytest.approx(0.03)  # Jan 1's value (Dec 31 had 0.10)


def test_a_reference_window_not_run_or_failed_is_reported_not_fatal(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path, cron="0 3 * * *", timezone="America/New_York",
                 drift={"baseline": {"kind": "reference", "window": "2026-01-01"}, "allowed_ranges": {},
                        "persistence": {"m": 1, "n": 1}})
    first = date(2026, 1, 1)
    with caplog.at_level(logging.WARNING, logger="fairmon.pipeline.judge"):
        for i in (2, 3, 4):
            out = _run(spec, _day(first, i), [_row("dp_difference", 0.03)], fresh_database_url)
    note = out["drift"]["baseline"]
    assert note["status"] == "missing"
    assert "monitor hist" in note["reason"] and "2026-01-01 (America/New_York)" in note["reason"]
    assert "2026-01-01T08:00:00+00:00: not run yet" in note["reason"]
    assert note["reason"] in caplog.text

    store = open_store(fresh_database_url)
    ref = window_for(spec, _day(first, 0))
    store.mark_run("hist", ref.start, ref.end, "failed", error="pull_data: timeout")
    store.engine.dispose()
    out = _run(spec, _day(first, 5), [_row("dp_difference", 0.30)], fresh_database_url)
    note = out["drift"]["baseline"]
    assert note["status"] == "missing" and "2026-01-01T08:00:00+00:00: failed" in note["reason"]
    assert out["drift"]["findings"] == []  # no silent fallback to the trailing history
    assert _statuses(fresh_database_url) == {"succeeded", "failed"}  # only the one marked failed


def test_a_drift_longer_than_the_history_keeps_its_start_and_thread(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the history capped below the drift's length, the start and the thread come from the store."""
    import fairmon.drift.history as history

    monkeypatch.setattr(history, "MAX_HISTORY_WINDOWS", 20)
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path, cron="0 0 * * *", timezone="UTC", drift={})  # defaults: dp_ratio in [0.8, 1]
    ratios = [0.9] * 2 + [0.6] * 30 + [0.9] * 2  # below the four-fifths rule from day 2 to day 31
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    out = [_run(spec, f"{t0 + timedelta(days=i):%Y-%m-%d}", [_row("dp_ratio", r)], fresh_database_url)
           for i, r in enumerate(ratios)]

    def finding(i: int) -> dict[str, Any]:
        (f,) = [x for x in out[i]["drift"]["findings"] if x["kind"] == "ci_outside_range"]
        return f

    opened = finding(3)  # persistence 2 of 3: opens on day 3
    assert (opened["status"], opened["since"]) == ("open", (t0 + timedelta(days=3)).isoformat())
    assert out[31]["drift"]["history"] == 20  # the opening window is long out of the loaded history
    capped = out[31]["drift"]["baseline"]["history_capped"]
    assert "capped at 20 windows" in capped and (t0 + timedelta(days=3)).isoformat() in capped
    assert "history_capped" not in out[3]["drift"]["baseline"]
    assert {finding(i)["since"] for i in range(4, 32)} == {opened["since"]}
    resolved = finding(33)
    assert (resolved["status"], resolved["since"]) == ("resolved", opened["since"])

    (open_alert,) = out[3]["alert"]["rendered"]
    (resolved_alert,) = out[33]["alert"]["rendered"]
    assert resolved_alert["text"].startswith("[warning] fairmon hist: Resolved")
    assert resolved_alert["thread_of"] == open_alert["fingerprint"]  # threaded under the opening alert


def test_a_30_window_shift_stays_ongoing_under_a_trailing_baseline_and_resolves_in_its_thread(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A significant-change drift longer than the default history (7 + 3 + 3 + 2 windows): the store
    query reaches back before the drift's start, so the baseline stays the pre-drift level — before,
    the drifted windows became the baseline and the finding stopped, unresolved, 13 windows in."""
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path, cron="0 0 * * *", timezone="UTC", drift={})  # trailing 7, persistence 2 of 3
    wiggle = [0.004, -0.003, 0.0, 0.002, -0.004, 0.003, -0.001]
    dp = [0.05 + wiggle[i % 7] for i in range(10)] + [0.15 + wiggle[i % 7] for i in range(30)] + [0.05] * 3
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    out = [_run(spec, f"{t0 + timedelta(days=i):%Y-%m-%d}", [_row("dp_difference", v)], fresh_database_url)
           for i, v in enumerate(dp)]

    def status(i: int) -> str | None:
        fs = [f for f in out[i]["drift"]["findings"] if f["kind"] == "significant_change"]
        return fs[0]["status"] if fs else None

    assert [status(i) for i in range(10)] == [None] * 10
    assert (status(10), status(11)) == ("pending", "open")
    assert [status(i) for i in range(12, 41)] == ["ongoing"] * 29  # 2 of the last 3 still shifted at 40
    assert out[39]["drift"]["history"] == 39  # back to 15 windows before the drift's start
    assert "history_capped" not in out[39]["drift"]["baseline"]
    (last,) = [f for f in out[39]["drift"]["findings"] if f["kind"] == "significant_change"]
    assert last["baseline"] == pytest.approx(0.05, abs=0.005)  # still the pre-drift level
    assert status(41) == "resolved" and status(42) is None
    (open_alert,) = out[11]["alert"]["rendered"]
    (resolved_alert,) = out[41]["alert"]["rendered"]
    assert "Resolved" in resolved_alert["text"]
    assert resolved_alert["thread_of"] == open_alert["fingerprint"]  # threaded under the opening alert
