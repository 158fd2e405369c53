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
    if isinstance(value, datetime):  # a subclass (Airflow's pendulum DateTime) as a plain datetime
        dt = value if type(value) is datetime else datetime.fromisoformat(value.isoformat())
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
    dt = parse_date(logical_date, timezone=timezone).astimezone(UTC)
    if not croniter.is_valid(cron):
        raise ConfigError(ERR_BAD_CRON.format(cron=cron, monitor=monitor))
    start, end = _interval_at(cron, dt, tz)
    return Window(monitor, start, end)


# Cron ticks across clock changes, as Airflow's CronDataIntervalTimetable cuts them (airflow/timetables/
# _cron.py, CronMixin), so `fairmon run --logical-date`, a backfill and the drift reference name the same
# windows as the DAG's data intervals: a tick is found on the wall clock (naive local time) and placed in
# time, a repeated time at its second occurrence, a skipped one at the instant it would have been; a cron
# that fires every hour steps by the wall-clock distance from the current instant instead (each of the
# repeated hours is a tick of its own, none is skipped). croniter's own aware arithmetic repeats or
# drops ticks there.


def _placed(wall: datetime, tz: ZoneInfo) -> datetime:
    """A wall-clock time as an instant (UTC): a repeated time's second occurrence, a skipped time's
    instant read with the offset before the change (Airflow's ``make_aware``, pendulum's rule)."""
    first, second = wall.replace(tzinfo=tz, fold=0), wall.replace(tzinfo=tz, fold=1)
    ambiguous = (first.utcoffset() or timedelta(0)) > (second.utcoffset() or timedelta(0))
    return (second if ambiguous else first).astimezone(UTC)


def _hourly(cron: str) -> bool:
    """Whether the cron fires in every hour (Airflow's ``_covers_every_hour``)."""
    return bool(croniter(cron).expanded[1] == ["*"])


def _tick(cron: str, current: datetime, tz: ZoneInfo, *, forward: bool) -> datetime:
    """The first tick after ``current`` (``forward``) or the last one before it (an aware instant), in UTC."""
    naive = current.astimezone(tz).replace(tzinfo=None)
    it = croniter(cron, naive)
    step = it.get_next if forward else it.get_prev
    scheduled: datetime = step(datetime)
    if _hourly(cron):  # absolute time: each repeated hour is a tick
        return current.astimezone(UTC) + (scheduled - naive)
    tick = _placed(scheduled, tz)
    # a skipped time is placed after its wall reading, a repeated one at its second occurrence: a tick
    # may land on the wrong side of ``current``, and the next one is taken
    while tick <= current if forward else tick >= current:
        tick = _placed(step(datetime), tz)
    return tick


def _interval_at(cron: str, instant: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """``[tick, next tick)`` holding ``instant``: the latest tick at or before it and the one after."""
    start = _tick(cron, instant + timedelta(seconds=1), tz, forward=False)  # a tick exactly at instant counts
    end = _tick(cron, start, tz, forward=True)
    while end <= instant:
        start, end = end, _tick(cron, end, tz, forward=True)
    return start, end


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
    *end*; its start is the interval's when the window is ``interval`` or its length is the cron period
    (the default), else ``end - schedule.window`` (calendar days on the schedule timezone's wall clock; :func:`window_start`)
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


def window_start(interval: Window, length: timedelta | None, *, cron: str, timezone: str) -> datetime:
    """The start of the window of ``length`` that ends where the schedule ``interval`` ends.

    - ``None`` (``schedule.window: interval``): the interval's own start, whatever its length.
    - the interval spans ``length`` between its ticks' wall-clock times in ``timezone`` (the default: a
      daily cron, ``window: 1d``): the interval's own start — the previous tick, or Airflow's
      ``data_interval_start`` — so consecutive windows tile the timeline whatever the clocks do (a
      Berlin day is 23 hours on the night clocks spring forward, 25 when they fall back).
    - a whole number of days otherwise (a 7-day rolling window on a daily cron): that many calendar
      days before the end tick's wall-clock time.
    - anything else: ``end - length`` in absolute time (an hourly window is an hour, also on the nights
      the clocks change).

    A tick's wall-clock time is the cron's, also for a tick in the hour the clocks skip (02:30 on the
    spring night is placed at 03:30 summer time; it still counts as 02:30). An absolute
    ``end - length`` everywhere made consecutive daily windows of a daylight-saving timezone overlap by
    an hour, or leave an hour in none, so rows there were counted twice or never. In UTC every rule
    gives ``end - length``.

    >>> from fairmon.window import window_from_logical_date
    >>> day = window_from_logical_date("m", "2026-03-29T12:00:00+02:00", cron="0 0 * * *", timezone="Europe/Berlin")
    >>> (day.end - window_start(day, timedelta(days=1), cron="0 0 * * *", timezone="Europe/Berlin")) / timedelta(hours=1)
    23.0
    """
    if length is None:
        return interval.start
    if timezone == "UTC":
        return interval.end - length
    tz = ZoneInfo(timezone)
    start_wall, end_wall = _tick_wall(interval.start, cron, tz), _tick_wall(interval.end, cron, tz)
    if end_wall - start_wall == length:
        return interval.start
    if length % timedelta(days=1) == timedelta(0):
        return _placed(end_wall - length, tz)
    return interval.end - length


def _tick_wall(instant: datetime, cron: str, tz: ZoneInfo) -> datetime:
    """The wall-clock time of the tick placed at ``instant``: its local reading, or the cron time up to an
    hour before it that a skipped hour moved there (an instant that is no tick: its reading)."""
    reading = instant.astimezone(tz).replace(tzinfo=None)
    nominal: datetime = croniter(cron, reading + timedelta(seconds=1)).get_prev(datetime)
    return nominal if reading - nominal <= timedelta(hours=1) and _placed(nominal, tz) == instant else reading


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
    zone, cron = ZoneInfo(tz), spec.schedule.cron
    tick, after = _interval_at(cron, lo.astimezone(UTC), zone)
    if tick < lo:
        tick = after
    while tick <= hi:
        out.append(window_for(spec, tick))
        tick = _tick(cron, tick, zone, forward=True)
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
