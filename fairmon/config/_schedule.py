"""The ``schedule`` section (and the date ranges other sections use): when windows run, how long they are.

Examples
--------
>>> Schedule(start_date="2026-01-01", window="12h").window
datetime.timedelta(seconds=43200)
"""

from __future__ import annotations

import datetime as dt
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import field_validator, model_validator

from fairmon.config._messages import ERR_TIMEZONE, excerpt
from fairmon.config._parsers import Duration, SpecSection, validate_cron

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


class Schedule(SpecSection):
    """When windows run and how long they are.

    ``cron`` fires at the *end* of each window (Airflow's ``CronDataIntervalTimetable`` semantics: the
    run for ``[start, end)`` starts at ``end``); ``window`` is the window length (``1d`` default);
    ``timezone`` an IANA name; ``start_date`` the first window start; ``catchup`` whether Airflow
    backfills missed windows.
    """

    cron: str = "0 0 * * *"
    window: Duration = dt.timedelta(days=1)
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
    def _positive(cls, v: dt.timedelta) -> dt.timedelta:
        if v <= dt.timedelta(0):
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
    def run_timeout_s(self) -> int:
        """The longest a window's run may take: ``RUN_TIMEOUT_SHARE`` of the window, in seconds.

        >>> Schedule(start_date=dt.date(2026, 1, 1), window=dt.timedelta(hours=1)).run_timeout_s
        3240
        """
        return int(RUN_TIMEOUT_SHARE * self.window.total_seconds())

