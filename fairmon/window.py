"""Window maths: the monitoring window ``[start, end)`` a run computes, derived from the schedule — never
from now().

A scheduled Airflow run hands us its data interval; the CLI hands us a logical date. Both resolve to the
same :class:`Window`, so ``fairmon run --logical-date D`` and the DAG run whose data interval starts at
``D`` compute exactly the same rows. The pipeline, drift (the reference window), validation and the
report all take their windows from here.

Convention for a logical date (the one Airflow uses for scheduled runs of a
``CronDataIntervalTimetable``): the window is the schedule interval that *starts* at the logical date,
i.e. ``[tick, next tick)`` where ``tick`` is the latest cron tick at or before the date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from croniter import croniter  # small, pure python; ships with Airflow

from fairmon.config import MonitorSpec
from fairmon.errors import ConfigError

__all__ = [
    "Window",
    "resolve_window",
    "window_from_logical_date",
    "parse_date",
    "window_for",
    "window_start",
    "window_from_interval",
    "windows_between",
    "reference_day",
    "scheduled_windows_on",
    "ERR_ZERO_WIDTH",
    "ERR_BAD_DATE",
    "ERR_NO_WINDOW",
    "ERR_BAD_CRON",
    "ERR_BACKFILL_ORDER",
]

ERR_ZERO_WIDTH = (
    "data interval [{start}, {end}) of monitor {monitor!r} is empty; schedule the DAG with "
    "CronDataIntervalTimetable (a plain cron string gives zero-width intervals on Airflow 3)"
)
ERR_BAD_DATE = "cannot parse date {value!r}; use ISO 8601 such as 2026-01-03 or 2026-01-03T00:00:00+00:00"
ERR_NO_WINDOW = "give either a data interval (start and end) or a logical date to resolve a window"
ERR_BAD_CRON = "invalid cron expression {cron!r} in schedule of monitor {monitor!r}"
ERR_BACKFILL_ORDER = "backfill end {end} is before start {start}"


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
        """The inverse of :meth:`to_dict`."""
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
    tz = ZoneInfo(timezone)
    dt = parse_date(logical_date, timezone=timezone).astimezone(tz)
    if not croniter.is_valid(cron):
        raise ConfigError(ERR_BAD_CRON.format(cron=cron, monitor=monitor))
    # Ticks are cut on the wall clock (naive local times) and then placed in time: croniter's own
    # handling of aware times repeats or skips ticks around a daylight-saving change. A tick exactly
    # at dt counts as "at or before": step 1 s past it and walk back.
    wall = dt.replace(tzinfo=None)
    start_wall = croniter(cron, wall + timedelta(seconds=1)).get_prev(datetime)
    start = _placed(start_wall, tz)
    ahead = croniter(cron, start_wall)
    end = _placed(ahead.get_next(datetime), tz)
    while end <= start:  # a tick in the hour clocks skip lands where the next one does: take a later one
        end = _placed(ahead.get_next(datetime), tz)
    return Window(monitor, start, end)


def _placed(wall: datetime, tz: ZoneInfo) -> datetime:
    """A wall-clock tick as an instant: the first of a repeated time; a time the clocks skip is read with
    the offset before the change (the instant it would have been, which is after the change)."""
    return wall.replace(tzinfo=tz, fold=0).astimezone(UTC)


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


def window_for(spec: MonitorSpec, logical_date: str | datetime) -> Window:
    """The window of ``logical_date`` under the spec's schedule.

    The schedule interval starting at the latest cron tick at or before the date gives the window's
    *end*; its start is the interval's when the window length is the cron period (the default), else
    ``end - schedule.window`` (calendar days on the schedule timezone's wall clock; :func:`window_start`)
    — the same rule :func:`window_from_interval` applies to an Airflow data interval.

    Examples
    --------
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"}})
    >>> window_for(spec, "2026-01-03T12:00:00+00:00").key
    '2026-01-03T000000Z'
    """
    interval = window_from_logical_date(
        spec.name, logical_date, cron=spec.schedule.cron, timezone=spec.schedule.timezone
    )
    return Window(spec.name, window_start(interval, spec.schedule.window, cron=spec.schedule.cron,
                                          timezone=spec.schedule.timezone), interval.end)


def window_from_interval(spec: MonitorSpec, d: dict[str, Any]) -> Window:
    """The window of an Airflow data interval (``data_interval_start/end``) or a ``logical_date``.

    Examples
    --------
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"}})
    >>> window_from_interval(spec, {"data_interval_start": "2026-01-02", "data_interval_end": "2026-01-03"}).key
    '2026-01-02T000000Z'
    """
    interval = resolve_window(
        spec.name,
        cron=spec.schedule.cron,
        timezone=spec.schedule.timezone,
        data_interval_start=d.get("data_interval_start"),
        data_interval_end=d.get("data_interval_end"),
        logical_date=d.get("logical_date"),
    )
    if "data_interval_end" not in d:
        return window_for(spec, d["logical_date"])
    return Window(spec.name, window_start(interval, spec.schedule.window, cron=spec.schedule.cron,
                                          timezone=spec.schedule.timezone), interval.end)


def window_start(interval: Window, length: timedelta, *, cron: str, timezone: str) -> datetime:
    """The start of the window of ``length`` that ends where the schedule ``interval`` ends.

    - ``length`` is the cron's period (the default: a daily cron, ``window: 1d``): the interval's own
      start — the previous tick, or Airflow's ``data_interval_start`` — so consecutive windows tile the
      timeline whatever the clocks do (a Berlin day is 23 hours on the night clocks spring forward, 25
      when they fall back; an hourly schedule skips the hour that does not exist).
    - a whole number of days otherwise (a 7-day rolling window on a daily cron): that many calendar
      days back on the wall clock of ``timezone``.
    - anything else: ``end - length`` in absolute time.

    An absolute ``end - length`` everywhere made consecutive daily windows of a daylight-saving
    timezone overlap by an hour, or leave an hour in none, so rows there were counted twice or never.
    In UTC every rule gives ``end - length``.

    >>> from fairmon.window import window_from_logical_date
    >>> day = window_from_logical_date("m", "2026-03-29T12:00:00+02:00", cron="0 0 * * *", timezone="Europe/Berlin")
    >>> (day.end - window_start(day, timedelta(days=1), cron="0 0 * * *", timezone="Europe/Berlin")) / timedelta(hours=1)
    23.0
    """
    if timezone == "UTC":
        return interval.end - length
    if length == _period(cron):
        return interval.start
    if length % timedelta(days=1) == timedelta(0):
        local = interval.end.astimezone(ZoneInfo(timezone))
        return (local - length).astimezone(interval.end.tzinfo)
    return interval.end - length


def _period(cron: str) -> timedelta | None:
    """The cron's period on the wall clock when its ticks are evenly spaced (daily, hourly, every 30
    minutes, weekly), else None (weekdays only, monthly)."""
    it = croniter(cron, datetime(2026, 1, 5))  # naive: wall-clock ticks, no daylight saving
    ticks = [it.get_next(datetime) for _ in range(15)]
    gaps = {b - a for a, b in zip(ticks, ticks[1:], strict=False)}
    return gaps.pop() if len(gaps) == 1 else None


def windows_between(spec: MonitorSpec, start: str | datetime, end: str | datetime) -> list[Window]:
    """Windows whose logical dates (cron ticks) lie in ``[start, end]``, oldest first.

    Examples
    --------
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"}})
    >>> [w.key for w in windows_between(spec, "2026-01-01", "2026-01-03")]
    ['2026-01-01T000000Z', '2026-01-02T000000Z', '2026-01-03T000000Z']
    """
    tz = spec.schedule.timezone
    lo, hi = parse_date(start, timezone=tz), parse_date(end, timezone=tz)
    if hi < lo:
        raise ConfigError(ERR_BACKFILL_ORDER.format(end=hi.isoformat(), start=lo.isoformat()))
    out: list[Window] = []
    zone = ZoneInfo(tz)
    it = croniter(spec.schedule.cron, lo.astimezone(zone).replace(tzinfo=None) - timedelta(seconds=1))
    while True:
        tick = _placed(it.get_next(datetime), zone)
        if tick > hi:
            break
        w = window_for(spec, tick)
        if not out or w.start > out[-1].start:  # two wall-clock ticks can be one instant (a skipped hour)
            out.append(w)
    return out


def reference_day(reference_start: datetime) -> tuple[datetime, datetime]:
    """``[start, end)`` of a reference date: from ``reference_start`` to the next midnight in its
    timezone (23 or 25 hours on a daylight-saving change).

    Examples
    --------
    >>> s, e = reference_day(datetime(2026, 1, 2, tzinfo=UTC))
    >>> e - s
    datetime.timedelta(days=1)
    """
    start = reference_start
    return start, datetime.combine(start.date() + timedelta(days=1), time(), tzinfo=start.tzinfo)


def scheduled_windows_on(spec: MonitorSpec, day_start: datetime, day_end: datetime) -> list[Window]:
    """The scheduled windows that may hold ``[day_start, day_end)``: the window of the last tick at or
    before ``day_start`` (it may span it) and the windows of every tick in the day.

    Examples
    --------
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"}})
    >>> [w.key for w in scheduled_windows_on(spec, *reference_day(datetime(2026, 1, 2, tzinfo=UTC)))]
    ['2026-01-02T000000Z', '2026-01-02T000000Z', '2026-01-03T000000Z']
    """
    return [window_for(spec, day_start), *windows_between(spec, day_start, day_end)]
