"""Windows tile the timeline in the schedule's timezone across daylight-saving changes: no hour is in
two windows (spring forward) and none in no window (fall back)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fairmon.config import MonitorSpec
from fairmon.pipeline.late import data_location
from fairmon.sources import load_window
from fairmon.window import window_for, window_from_interval, windows_between


def _spec(timezone: str, cron: str = "0 0 * * *") -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a"], "sensitive": ["a"]},
        "schedule": {"start_date": "2026-01-01", "cron": cron, "timezone": timezone},
    })


@pytest.mark.parametrize(("first", "last", "hours"), [
    ("2026-03-27", "2026-03-31", [24, 24, 23, 24, 24]),  # Berlin springs forward on 29 March
    ("2026-10-23", "2026-10-27", [24, 24, 25, 24, 24]),  # and falls back on 25 October
])
def test_daily_windows_tile_across_a_daylight_saving_change(first: str, last: str, hours: list[int]) -> None:
    windows = windows_between(_spec("Europe/Berlin"), first, last)
    assert [(w.end - w.start) / timedelta(hours=1) for w in windows] == hours
    assert all(a.end == b.start for a, b in zip(windows, windows[1:], strict=False))  # no gap, no overlap


def test_an_airflow_data_interval_is_the_window_on_the_short_night() -> None:
    spec = _spec("Europe/Berlin")
    start, end = datetime(2026, 3, 28, 23, tzinfo=UTC), datetime(2026, 3, 29, 22, tzinfo=UTC)  # local midnights
    w = window_from_interval(spec, {"data_interval_start": start.isoformat(), "data_interval_end": end.isoformat()})
    assert (w.start, w.end) == (start, end)
    assert window_for(spec, "2026-03-29T00:00:00+01:00") == w


def test_a_two_day_window_counts_local_days() -> None:
    spec = _spec("America/New_York").model_copy(update={"schedule": _spec("America/New_York").schedule.model_copy(
        update={"window": timedelta(days=2)})})
    w = window_for(spec, "2026-03-09T12:00:00-04:00")  # clocks sprang forward on 8 March
    assert (w.start, w.end) == (datetime(2026, 3, 8, 5, tzinfo=UTC), datetime(2026, 3, 10, 4, tzinfo=UTC))  # 47 h


def test_a_partition_is_named_by_the_schedules_local_day(tmp_path: Path) -> None:
    """A Berlin day starts at 23:00 UTC the day before: its file is the local day's, not that UTC date's."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "2026-01-03.csv").write_text("a\n1\n")
    spec = _spec("Europe/Berlin")
    w = window_for(spec, "2026-01-03T12:00:00+01:00")
    assert w.start == datetime(2026, 1, 2, 23, tzinfo=UTC)
    assert load_window(spec, w.start, w.end, base_dir=tmp_path).to_dict("list") == {"a": [1]}
    assert data_location(spec, w) is not None and data_location(spec, w).endswith("d/2026-01-03.csv")  # type: ignore[union-attr]


@pytest.mark.parametrize(("timezone", "cron", "length", "first", "last"), [
    ("Europe/Berlin", "0 * * * *", timedelta(hours=1), "2026-03-28T22:00:00+00:00", "2026-03-29T04:00:00+00:00"),
    ("Europe/Berlin", "0 * * * *", timedelta(hours=1), "2026-10-24T22:00:00+00:00", "2026-10-25T04:00:00+00:00"),
    ("Europe/Berlin", "*/30 * * * *", timedelta(minutes=30), "2026-10-25T00:00:00+00:00", "2026-10-25T02:30:00+00:00"),
    ("Europe/Berlin", "30 2 * * *", timedelta(days=1), "2026-03-27", "2026-03-31"),  # a tick in the skipped hour
    ("Europe/Berlin", "30 2 * * *", timedelta(days=1), "2026-10-23", "2026-10-27"),  # and in the repeated one
    ("America/Santiago", "0 0 * * *", timedelta(days=1), "2026-09-03", "2026-09-08"),  # clocks jump at midnight
    ("America/Santiago", "0 0 * * *", timedelta(days=1), "2026-04-02", "2026-04-07"),
])
def test_windows_tile_whatever_the_cron_and_the_clock_change(
    timezone: str, cron: str, length: timedelta, first: str, last: str
) -> None:
    """A reviewer's cases: wall-clock subtraction alone gave hourly windows of zero width or two hours
    overlapping, and croniter's aware ticks repeated a window on the autumn night."""
    spec = _spec(timezone, cron)
    spec = spec.model_copy(update={"schedule": spec.schedule.model_copy(update={"window": length})})
    windows = windows_between(spec, first, last)
    assert len(windows) >= 4 and all(w.end > w.start for w in windows)
    assert all(a.end == b.start for a, b in zip(windows, windows[1:], strict=False))


def test_an_hourly_airflow_interval_in_the_skipped_hour_is_taken_as_it_is() -> None:
    spec = _spec("Europe/Berlin", "0 * * * *")
    spec = spec.model_copy(update={"schedule": spec.schedule.model_copy(update={"window": timedelta(hours=1)})})
    start, end = datetime(2026, 3, 29, 0, tzinfo=UTC), datetime(2026, 3, 29, 1, tzinfo=UTC)
    w = window_from_interval(spec, {"data_interval_start": start.isoformat(), "data_interval_end": end.isoformat()})
    assert (w.start, w.end) == (start, end)


def _monthly(window: str) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a"], "sensitive": ["a"]},
        "schedule": {"start_date": "2024-01-01", "cron": "0 0 1 * *", "window": window},
    })


def test_interval_windows_are_the_calendar_months_of_a_monthly_cron() -> None:
    """No fixed length tiles 28- to 31-day intervals: ``window: 30d`` put 31 January in January's and
    February's window and 1 March in none; ``window: interval`` is each month, also in Airflow's form."""
    fixed = windows_between(_monthly("30d"), "2024-01-01", "2024-03-01")
    assert [(a.end - b.start).days for a, b in zip(fixed, fixed[1:], strict=False)] == [1, -1]  # overlap, gap
    months = windows_between(_monthly("interval"), "2024-01-01", "2024-12-01")
    assert [w.start.month for w in months] == list(range(1, 13)) and all(w.start.day == 1 for w in months)
    assert all(a.end == b.start for a, b in zip(months, months[1:], strict=False))
    feb = {"data_interval_start": "2024-02-01T00:00:00+00:00", "data_interval_end": "2024-03-01T00:00:00+00:00"}
    assert window_from_interval(_monthly("interval"), feb) == months[1]
    spec = _monthly("interval")
    assert spec.schedule.window is None and spec.schedule.window_label == "interval"
    assert spec.model_dump(mode="json")["schedule"]["window"] == "interval"  # spec show / fingerprint
    assert MonitorSpec.model_validate(spec.model_dump(mode="json")).fingerprint == spec.fingerprint
    assert spec.schedule.run_timeout_s == int(0.9 * 28 * 86400)  # February is due soonest
