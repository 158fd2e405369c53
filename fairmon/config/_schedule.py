"""The ``schedule`` section (and the date ranges other sections use): when windows run, how long they are.

Examples
--------
>>> Schedule(start_date="2026-01-01", window="12h").window
datetime.timedelta(seconds=43200)
>>> Schedule(start_date="2026-01-01", cron="0 0 1 * *", window="interval").interval_lengths
(datetime.timedelta(days=28), datetime.timedelta(days=31))
"""

from __future__ import annotations

import datetime as dt
from functools import cached_property
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter  # small, pure python; ships with Airflow
from pydantic import field_validator, model_validator

from fairmon.config._messages import ERR_TIMEZONE, excerpt
from fairmon.config._parsers import WINDOW_INTERVAL, SpecSection, WindowLength, format_duration, validate_cron

__all__ = ["DateRange", "RUN_TIMEOUT_SHARE", "Schedule"]

class DateRange(SpecSection):
    """A closed-open date range ``[start, end)``."""

    start: dt.date
    end: dt.date

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.end <= self.start:
            raise ValueError(f"end: must be after start ({self.start}), got {self.end}")
        return self


#: a window's run must time out before the next window's run is due (``max_active_runs=1``): this
#: share of the schedule interval at most
RUN_TIMEOUT_SHARE: Final = 0.9
#: the schedule intervals sampled for their shortest and longest length: a year of daily ticks,
#: eight years of monthly ones (covers leap years), or four years, whichever ends first
_SAMPLED_TICKS: Final = 400
_SAMPLED_SPAN: Final = dt.timedelta(days=4 * 366)


class Schedule(SpecSection):
    """When windows run and how long they are.

    ``cron`` fires at the *end* of each window (Airflow's ``CronDataIntervalTimetable`` semantics: the
    run for ``[start, end)`` starts at ``end``); ``window`` is the window length (``1d`` default;
    longer than the interval: a rolling window) or ``interval``, the schedule interval itself (the
    one choice that tiles a monthly cron's 28- to 31-day intervals); ``timezone`` an IANA name;
    ``start_date`` the first window start; ``catchup`` whether Airflow backfills missed windows.
    """

    cron: str = "0 0 * * *"
    window: WindowLength = dt.timedelta(days=1)
    timezone: str = "UTC"
    start_date: dt.date
    end_date: dt.date | None = None
    catchup: bool = False

    @field_validator("cron")
    @classmethod
    def _cron(cls, v: str) -> str:
        return validate_cron(v)

    @field_validator("window")
    @classmethod
    def _positive(cls, v: dt.timedelta | None) -> dt.timedelta | None:
        if v is not None and v <= dt.timedelta(0):
            raise ValueError(f"must be positive, got {v}")
        return v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(ERR_TIMEZONE.format(value=excerpt(v))) from None
        return v

    @model_validator(mode="after")
    def _end_after_start(self) -> Schedule:
        if self.end_date is not None and self.end_date <= self.start_date:
            raise ValueError(f"end_date: must be after start_date ({self.start_date}), got {self.end_date}")
        return self

    @property
    def window_label(self) -> str:
        """The window as a spec writes it: ``interval`` or its length (``7d``)."""
        return WINDOW_INTERVAL if self.window is None else format_duration(self.window)

    @cached_property
    def interval_lengths(self) -> tuple[dt.timedelta, dt.timedelta]:
        """The shortest and longest schedule interval (wall clock), over the ticks from ``start_date``.

        Sampled: up to ``_SAMPLED_TICKS`` ticks within ``_SAMPLED_SPAN`` (enough for every cron whose
        pattern repeats within four years; wall-clock lengths, so a day is 24 hours also on the nights
        the clocks change).
        """
        it = croniter(self.cron, dt.datetime.combine(self.start_date, dt.time()) - dt.timedelta(seconds=1))
        ticks = [it.get_next(dt.datetime)]
        while len(ticks) < _SAMPLED_TICKS and ticks[-1] - ticks[0] < _SAMPLED_SPAN:
            ticks.append(it.get_next(dt.datetime))
        gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)] or [dt.timedelta(days=1)]
        return min(gaps), max(gaps)

    @property
    def run_timeout_s(self) -> int:
        """The longest a window's run may take: ``RUN_TIMEOUT_SHARE`` of the shortest schedule interval, in
        seconds (the next window's run is due one interval later, whatever the window's length).

        >>> Schedule(start_date=dt.date(2026, 1, 1), cron="0 * * * *", window="1d").run_timeout_s
        3240
        """
        return int(RUN_TIMEOUT_SHARE * self.interval_lengths[0].total_seconds())

