"""`fairmon run --logical-date`, a backfill and the drift reference name the same windows as the DAG:
fairmon's cron ticks equal Airflow's CronDataIntervalTimetable's across clock changes (a reviewer found
them apart on the autumn night: a 02:30 cron's window keys differed, an hourly window spanned two of
Airflow's, so a drift reference looked up by its exact bounds was "not run yet")."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

import pendulum
import pytest
from airflow.timetables.interval import CronDataIntervalTimetable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_window_dst import _spec  # noqa: E402

from fairmon.window import window_from_interval, window_from_logical_date, windows_between  # noqa: E402

CASES = [
    ("Europe/Berlin", "30 2 * * *", timedelta(days=1), "2026-10-20", "2026-10-30"),
    ("Europe/Berlin", "30 2 * * *", timedelta(days=1), "2026-03-25", "2026-04-02"),
    ("Europe/Berlin", "0 * * * *", timedelta(hours=1), "2026-10-24T20:00:00+00:00", "2026-10-25T06:00:00+00:00"),
    ("Europe/Berlin", "0 * * * *", timedelta(hours=1), "2026-03-28T20:00:00+00:00", "2026-03-29T06:00:00+00:00"),
    ("Europe/Berlin", "*/30 * * * *", timedelta(minutes=30), "2026-10-24T23:00:00+00:00", "2026-10-25T03:00:00+00:00"),
    ("Europe/Berlin", "0 */2 * * *", timedelta(hours=2), "2026-10-24T18:00:00+00:00", "2026-10-25T08:00:00+00:00"),
    ("America/Santiago", "0 0 * * *", timedelta(days=1), "2026-09-01", "2026-09-10"),
    ("America/Santiago", "0 0 * * *", timedelta(days=1), "2026-04-01", "2026-04-08"),
    ("Australia/Lord_Howe", "30 1 * * *", timedelta(days=1), "2026-04-01", "2026-04-08"),
    ("America/New_York", "0 3 * * *", timedelta(days=1), "2026-03-05", "2026-03-12"),
]


@pytest.mark.airflow
@pytest.mark.parametrize(("timezone", "cron", "length", "first", "last"), CASES)
def test_windows_are_the_timetables_data_intervals(
    timezone: str, cron: str, length: timedelta, first: str, last: str
) -> None:
    spec = _spec(timezone, cron)
    spec = spec.model_copy(update={"schedule": spec.schedule.model_copy(update={"window": length})})
    windows = windows_between(spec, first, last)
    timetable = CronDataIntervalTimetable(cron, timezone)
    start = pendulum.instance(windows[0].start)
    for w in windows:
        end = timetable._get_next(start)  # the DAG's next data interval boundary
        assert (w.start, w.end) == (start, end), (w, start, end)
        # the DAG hands its data interval over; the CLI finds the same window from any instant in it
        assert window_from_interval(spec, {"data_interval_start": start.isoformat(),
                                           "data_interval_end": end.isoformat()}) == w
        middle = start + (end - start) / 2
        assert window_from_logical_date("m", middle, cron=cron, timezone=timezone) == w.__class__(
            "m", w.start, w.end)
        start = end


def test_every_instant_is_in_the_window_of_its_logical_date() -> None:
    """A tick in the skipped hour is placed after it: an instant just before must not get a window that
    starts after it (a reviewer's case: 03:10 summer time under a 02:30 cron)."""
    for timezone, cron, day in (("Europe/Berlin", "30 2 * * *", "2026-03-28"), ("Europe/Berlin", "30 2 * * *", "2026-10-24"),
                                ("Europe/Berlin", "*/30 * * * *", "2026-10-24"), ("America/Santiago", "0 0 * * *", "2026-09-04"),
                                ("Australia/Lord_Howe", "30 1 * * *", "2026-04-04")):
        t0 = datetime.fromisoformat(f"{day}T00:00:00+00:00")
        for k in range(0, 72 * 4):
            t = t0 + timedelta(minutes=15 * k)
            w = window_from_logical_date("m", t, cron=cron, timezone=timezone)
            assert w.start <= t < w.end, (timezone, cron, t, w)
