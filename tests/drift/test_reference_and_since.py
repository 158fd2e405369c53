"""Reference baselines on a non-midnight schedule, and the start of drifts older than the history.

The pipeline passes ``decide`` a bounded history; the reference window and the start of a long drift
come from the store (``reference=``, ``open_since=``). These tests pin the library side; the store side
is in ``tests/pipeline/test_drift_history.py``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from fairmon.alerts.render import AlertContext, render_finding
from fairmon.config import DriftSpec, MonitorSpec
from fairmon.drift import Finding, WindowSummary, baseline_note, decide, finding_fingerprint, reference_window
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


# ------------------------------------------------------------------------------------------ since

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _day(i: int, ratio: float) -> WindowSummary:
    rows = [{"metric": "dp_ratio", "attribute": "sex", "group": None, "value": ratio, "ci_low": ratio - 0.02,
             "ci_high": ratio + 0.02, "n": 5000, "status": "ok"}]
    return WindowSummary("m", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=rows)


def _range(findings: list[Finding]) -> Finding:
    (f,) = [x for x in findings if x.kind == "ci_outside_range"]
    return f


def test_a_long_drift_keeps_the_start_the_store_recorded_and_its_thread() -> None:
    s = settings_from_spec()
    n = s.baseline.trailing_n + s.policy.persistence_n + s.policy.cooldown_windows + 2  # the pipeline's history
    ws = [_day(i, 0.9) for i in range(2)] + [_day(i, 0.6) for i in range(2, 32)] + [_day(i, 0.9) for i in range(32, 35)]
    opened = _range(decide(ws[3], ws[:3], **s.kwargs()))  # 2 of 3 windows below 0.8 → opens at day 3
    assert (opened.status, opened.since) == ("open", ws[3].window_start)
    stored = {opened.key: opened.since}

    late = _range(decide(ws[31], ws[31 - n:31], **s.kwargs()))  # the replay alone dates it too late
    assert late.since > opened.since
    ongoing = _range(decide(ws[31], ws[31 - n:31], open_since=stored, **s.kwargs()))
    assert (ongoing.status, ongoing.since) == ("ongoing", opened.since)

    resolved = _range(decide(ws[33], ws[33 - n:33], open_since=stored, **s.kwargs()))
    assert (resolved.status, resolved.since, resolved.notify) == ("resolved", opened.since, True)
    assert resolved.message.endswith(f"drifting since {opened.since:%Y-%m-%d}")
    msg = render_finding(resolved, AlertContext("m", resolved.window_start))
    assert msg.thread_of == opened.fingerprint == finding_fingerprint("m", opened.since, opened.key, "open")


def test_a_stored_start_never_moves_a_drift_later() -> None:
    s = settings_from_spec()
    ws = [_day(0, 0.9)] + [_day(i, 0.6) for i in range(1, 6)]
    f = _range(decide(ws[5], ws[:5], open_since={"ci_outside_range:dp_ratio:sex": ws[4].window_start},
                      **s.kwargs()))
    assert (f.status, f.since) == ("ongoing", ws[2].window_start)


def test_a_long_noisy_shift_stays_ongoing_under_a_trailing_baseline_until_the_metric_returns() -> None:
    """30 windows shifted by +0.05 (noisy: some do not violate on their own) under the default trailing
    baseline (7 windows, persistence 2 of 3): the quiet windows inside the drift stay out of the
    baseline, so the drift is ongoing throughout and resolves only when the metric comes back.
    (Before, those windows joined the baseline and the drift ended at window 37 with the shift in place.)
    """
    import numpy as np

    from fairmon.drift import replay

    rng = np.random.default_rng(5)
    values = ([0.05 + 0.005 * rng.standard_normal() for _ in range(10)]
              + [0.10 + 0.02 * rng.standard_normal() for _ in range(30)]
              + [0.05 + 0.005 * rng.standard_normal() for _ in range(5)])
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    ws = [WindowSummary("m", t0 + timedelta(days=i), t0 + timedelta(days=i + 1), metrics=_rows(v))
          for i, v in enumerate(values)]
    settings = settings_from_spec()
    assert settings.baseline.mode == "trailing" and settings.baseline.trailing_n == 7
    out = replay(ws, **settings.kwargs())

    def status(i: int) -> str | None:
        return next((f.status for f in out[i] if f.kind == "significant_change"), None)

    assert [status(i) for i in range(10)] == [None] * 10
    assert (status(10), status(11)) == ("pending", "open")
    assert {status(i) for i in range(12, 41)} == {"ongoing"}  # the last shifted window is 39; 2 of 3 at 40
    # the shift has quiet windows that the old baseline rule let in
    assert any(f.numbers.get("p_value") is None for i in range(12, 40) for f in out[i]
               if f.kind == "significant_change")
    (resolved,) = [f for f in out[41] if f.kind == "significant_change"]
    assert resolved.status == "resolved" and resolved.notify
    assert resolved.since == ws[11].window_start
    assert [status(i) for i in range(42, 45)] == [None] * 3
    assert decide(ws[41], ws[:41], **settings.kwargs()) == out[41]
