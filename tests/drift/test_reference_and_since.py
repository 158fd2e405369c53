"""Reference baselines on a non-midnight schedule.

The pipeline passes ``decide`` a bounded history; the reference window comes from the store
(``reference=``). These tests pin the library side; the store side
is in ``tests/pipeline/test_drift_history.py``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from fairmon.config import DriftSpec, MonitorSpec
from fairmon.drift import Finding, WindowSummary, baseline_note, decide, reference_window
from fairmon.drift.spec import settings_from_spec
from fairmon.pipeline import window_for

NY = ZoneInfo("America/New_York")
SPEC = {
    "spec_version": 1,
    "identity": {"name": "ref"},
    "model": {"registry_uri": "r"},
    "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["a"], "sensitive": ["a"]},
    "schedule": {"start_date": "2025-12-30", "cron": "0 3 * * *", "timezone": "America/New_York"},
}


def _rows(dp: float) -> list[dict]:
    return [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": dp,
             "ci_low": dp - 0.02, "ci_high": dp + 0.02, "n": 5000, "status": "ok"}]


def _settings():  # type: ignore[no-untyped-def]
    drift = DriftSpec.model_validate({"baseline": {"kind": "reference", "window": date(2026, 1, 1)},
                                      "persistence": {"m": 1, "n": 1}, "allowed_ranges": {}})
    return settings_from_spec(drift, tz=NY)


def _window(day: str, dp: float, *, status: str = "completed") -> WindowSummary:
    """The window of the Airflow run on ``day`` (03:00 New York, i.e. 08:00 UTC) with one dp_difference."""
    w = window_for(MonitorSpec.model_validate(SPEC), f"{day}T03:00:00-05:00")
    return WindowSummary("ref", w.start, w.end, metrics=_rows(dp), status=status)


def _days(first: int, n: int) -> list[str]:
    return [(date(2025, 12, 31) + timedelta(days=first + i)).isoformat() for i in range(n)]


def _changes(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.kind == "significant_change"]


def test_reference_is_the_window_containing_the_date_on_a_3am_new_york_schedule() -> None:
    s = _settings()
    dec31, jan1, jan2 = (_window(d, dp) for d, dp in zip(_days(0, 3), (0.10, 0.03, 0.10), strict=True))
    assert jan1.window_start == datetime(2026, 1, 1, 8, tzinfo=UTC)  # not midnight, in no timezone
    # the Dec 31 window also covers the first three hours of Jan 1; the reference is the one starting on it
    assert reference_window([dec31, jan1, jan2], s.baseline) is jan1
    found = _changes(decide(jan2, [dec31, jan1], **s.kwargs()))
    assert [(f.status, f.numbers["test"]) for f in found] == [("open", "z")]
    assert found[0].baseline == pytest.approx(0.03)  # Jan 1's value, not Dec 31's 0.10
    assert baseline_note(jan2, s.baseline, history=[dec31, jan1])["status"] == "compared"


def test_the_reference_window_and_earlier_ones_are_a_cold_start_not_an_error() -> None:
    s = _settings()
    dec31, jan1 = _window(_days(0, 1)[0], 0.30), _window(_days(1, 1)[0], 0.30)
    # when Dec 31 is decided, the scheduled reference window (Jan 1) has not run yet
    not_yet = WindowSummary("ref", jan1.window_start, jan1.window_end, status="not run yet")
    assert _changes(decide(dec31, [], reference=not_yet, **s.kwargs())) == []
    assert _changes(decide(jan1, [dec31], **s.kwargs())) == []
    first = baseline_note(dec31, s.baseline, reference=not_yet)
    itself = baseline_note(jan1, s.baseline, history=[dec31])
    assert (first["status"], itself["status"]) == ("cold_start", "cold_start")
    assert "precedes the reference window" in first["reason"] and "2026-01-01 (America/New_York)" in first["reason"]
    assert "is the reference window" in itself["reason"]
    assert itself["reference_window"]["start"] == jan1.window_start.isoformat()


def test_a_reference_older_than_the_history_is_still_the_baseline() -> None:
    s = _settings()
    ws = [_window(d, 0.03) for d in _days(0, 30)]
    now = _window(_days(30, 1)[0], 0.10)
    history = ws[-11:]  # what the pipeline loads; the Jan 1 window is long gone from it
    assert reference_window(history, s.baseline) is None
    found = _changes(decide(now, history, reference=ws[1], **s.kwargs()))
    assert [(f.status, f.baseline) for f in found] == [("open", pytest.approx(0.03))]
    assert baseline_note(now, s.baseline, reference=ws[1], history=history)["status"] == "compared"


def test_a_missing_or_failed_reference_is_said_clearly_and_tests_nothing() -> None:
    s = _settings()
    failed = _window(_days(1, 1)[0], 0.03, status="failed")
    later = [_window(d, 0.03) for d in _days(2, 3)]
    now = _window(_days(5, 1)[0], 0.30)
    assert _changes(decide(now, [failed, *later], **s.kwargs())) == []  # no silent trailing fallback
    note = baseline_note(now, s.baseline, history=[failed, *later])
    assert note["status"] == "missing" and f"starting {failed.window_start.isoformat()}: failed" in note["reason"]
    assert "monitor ref" in note["reason"] and "2026-01-01 (America/New_York)" in note["reason"]
    none = baseline_note(now, s.baseline, history=later)
    assert none["status"] == "missing" and "no window contains it" in none["reason"]
