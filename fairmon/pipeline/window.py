"""The monitoring window ``[start, end)`` a run computes, derived from the schedule — never from now().

A scheduled Airflow run hands us its data interval; the CLI hands us a logical date. Both resolve to the
same :class:`Window`, so ``fairmon run --logical-date D`` and the DAG run whose data interval starts at
``D`` compute exactly the same rows.

Convention for a logical date (the one Airflow uses for scheduled runs of a
``CronDataIntervalTimetable``): the window is the schedule interval that *starts* at the logical date,
i.e. ``[tick, next tick)`` where ``tick`` is the latest cron tick at or before the date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fairmon.errors import ConfigError

__all__ = ["Window", "resolve_window", "window_from_logical_date", "parse_date"]

ERR_ZERO_WIDTH = (
    "data interval [{start}, {end}) of monitor {monitor!r} is empty; schedule the DAG with "
    "CronDataIntervalTimetable (a plain cron string gives zero-width intervals on Airflow 3)"
)
ERR_BAD_DATE = "cannot parse date {value!r}; use ISO 8601 such as 2026-01-03 or 2026-01-03T00:00:00+00:00"
ERR_NO_WINDOW = "give either a data interval (start and end) or a logical date to resolve a window"


@dataclass(frozen=True)
class Window:
    """A half-open monitoring window ``[start, end)`` of one monitor, in UTC.

    Examples
    --------
    >>> w = Window("demo", datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 4, tzinfo=UTC))
    >>> w.key
    '2026-01-03T000000Z'
    >>> Window.from_dict(w.to_dict()) == w
    True
    """

    monitor: str
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _as_utc(self.start))
        object.__setattr__(self, "end", _as_utc(self.end))
        if self.end <= self.start:
            raise ConfigError(ERR_ZERO_WIDTH.format(start=self.start, end=self.end, monitor=self.monitor))

    @property
    def key(self) -> str:
        """Path-safe key of the window (its UTC start), used for artifact locations."""
        return self.start.strftime("%Y-%m-%dT%H%M%SZ")

    def to_dict(self) -> dict[str, str]:
        """Small JSON-able form (what goes through XCom)."""
        return {"monitor": self.monitor, "start": self.start.isoformat(), "end": self.end.isoformat()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Window:
        return cls(str(d["monitor"]), parse_date(d["start"]), parse_date(d["end"]))


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(value.timestamp(), tz=UTC)


def parse_date(value: str | datetime, *, timezone: str = "UTC") -> datetime:
    """Parse an ISO date/datetime; a naive value is read in ``timezone``. Returns an aware datetime."""
    if isinstance(value, datetime):
        dt = value
    else:
        try:
            dt = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise ConfigError(ERR_BAD_DATE.format(value=value)) from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=ZoneInfo(timezone))
    return dt


def window_from_logical_date(
    monitor: str, logical_date: str | datetime, *, cron: str, timezone: str = "UTC"
) -> Window:
    """The schedule interval starting at the latest cron tick at or before ``logical_date``.

    Examples
    --------
    >>> w = window_from_logical_date("demo", "2026-01-03", cron="0 0 * * *")
    >>> (w.start.isoformat(), w.end.isoformat())
    ('2026-01-03T00:00:00+00:00', '2026-01-04T00:00:00+00:00')
    """
    from croniter import croniter  # small, pure python; ships with Airflow and is imported lazily

    dt = parse_date(logical_date, timezone=timezone).astimezone(ZoneInfo(timezone))
    if not croniter.is_valid(cron):
        raise ConfigError(f"invalid cron expression {cron!r} in schedule of monitor {monitor!r}")
    # a tick exactly at dt counts as "at or before": step 1 s past it and walk back
    it = croniter(cron, dt + timedelta(seconds=1))
    start = it.get_prev(datetime)
    end = croniter(cron, start).get_next(datetime)
    return Window(monitor, start, end)


def resolve_window(
    monitor: str,
    *,
    cron: str,
    timezone: str = "UTC",
    data_interval_start: str | datetime | None = None,
    data_interval_end: str | datetime | None = None,
    logical_date: str | datetime | None = None,
) -> Window:
    """Resolve the run's window: the data interval when given (Airflow), else from the logical date.

    A zero-width data interval (``"@daily"`` on Airflow 3 with a trigger timetable) is an error rather
    than a silent empty window.

    Examples
    --------
    >>> resolve_window("demo", cron="0 0 * * *", data_interval_start="2026-01-02",
    ...                data_interval_end="2026-01-03").key
    '2026-01-02T000000Z'
    """
    if data_interval_start is not None and data_interval_end is not None:
        start = parse_date(data_interval_start, timezone=timezone)
        end = parse_date(data_interval_end, timezone=timezone)
        if end <= start:
            raise ConfigError(ERR_ZERO_WIDTH.format(start=start, end=end, monitor=monitor))
        return Window(monitor, start, end)
    if logical_date is not None:
        return window_from_logical_date(monitor, logical_date, cron=cron, timezone=timezone)
    raise ConfigError(ERR_NO_WINDOW)
