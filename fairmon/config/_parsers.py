"""Small parsers and shared field types of the spec sections: durations, cron, scalars, the base model.

Why apart from the sections: they are reused by several sections and by callers (the DAG factory
checks a cron with :func:`validate_cron`), and they need nothing but the standard library and
pydantic, which keeps the DAG parse path light.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    WrapSerializer,
)

from fairmon.config._messages import ERR_CRON, ERR_DUPLICATES, ERR_DURATION, ERR_SCALAR, excerpt

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_DURATION_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_ISO_DURATION_RE = re.compile(
    r"^P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def parse_duration(value: Any) -> dt.timedelta:
    """Parse a window length: ``'1d'``, ``'12h'``, ``'30m'``, ``'1w'``, ``'90s'`` or ISO 8601 ``'P1D'``.

    Why: window lengths in YAML are easier to read as ``1d`` than as seconds; ISO durations are what
    the canonical JSON (and so the fingerprint) stores.

    Examples
    --------
    >>> parse_duration("1d")
    datetime.timedelta(days=1)
    >>> parse_duration("PT12H")
    datetime.timedelta(seconds=43200)
    """
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, str):
        m = _DURATION_RE.match(value)
        if m:
            return dt.timedelta(**{_DURATION_UNITS[m.group(2)]: float(m.group(1))})
        m = _ISO_DURATION_RE.match(value.strip())
        if m and any(m.groupdict().values()):
            parts = {k: float(v) for k, v in m.groupdict().items() if v}
            return dt.timedelta(**parts)
    raise ValueError(ERR_DURATION.format(value=excerpt(value)))


_CRON_PRESETS = {"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"}
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    (
        "month",
        1,
        12,
        {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
    ),
    ("day of week", 0, 7, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}),
)


def _cron_value(token: str, name: str, lo: int, hi: int, names: dict[str, int]) -> int:
    if token.lower() in names:
        return names[token.lower()]
    if not token.isdigit():
        raise ValueError(f"{name} field: {token!r} is not a number")
    v = int(token)
    if not lo <= v <= hi:
        raise ValueError(f"{name} field: {v} is outside {lo}-{hi}")
    return v


def validate_cron(expr: str) -> str:
    """Check a 5-field cron expression (or an ``@daily``-style preset) without third-party packages.

    Why: a bad schedule should fail when the spec is loaded, not when the scheduler first parses it;
    and the DAG parse path must stay light (no croniter import here).

    Examples
    --------
    >>> validate_cron("0 2 * * mon-fri")
    '0 2 * * mon-fri'
    """
    text = expr.strip()
    if text.startswith("@"):
        if text.lower() in _CRON_PRESETS:
            return text
        raise ValueError(
            ERR_CRON.format(expr=excerpt(expr), reason=f"unknown preset; use one of {sorted(_CRON_PRESETS)}")
        )
    parts = text.split()
    if len(parts) != 5:
        raise ValueError(ERR_CRON.format(expr=excerpt(expr), reason=f"expected 5 fields, got {len(parts)}"))
    try:
        for part, (name, lo, hi, names) in zip(parts, _CRON_FIELDS):
            for item in part.split(","):
                rng, _, step = item.partition("/")
                if step and (not step.isdigit() or int(step) == 0):
                    raise ValueError(f"{name} field: bad step {step!r}")
                if rng == "*":
                    continue
                a, sep, b = rng.partition("-")
                va = _cron_value(a, name, lo, hi, names)
                if sep:
                    vb = _cron_value(b, name, lo, hi, names)
                    if vb < va:
                        raise ValueError(f"{name} field: range {rng!r} is reversed")
    except ValueError as exc:
        raise ValueError(ERR_CRON.format(expr=excerpt(expr), reason=exc)) from None
    return text


def check_unique(values: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` when no entry repeats (linear: a spec may hold long lists).

    >>> check_unique(("a", "b"))
    ('a', 'b')
    """
    dups = sorted(v for v, n in Counter(values).items() if n > 1)
    if dups:
        raise ValueError(ERR_DUPLICATES.format(cols=excerpt(dups)))
    return values


def scalar(value: Any) -> Any:
    """``value`` when it is a YAML scalar (``favorable.class`` compares with one data value)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise ValueError(ERR_SCALAR.format(kind=type(value).__name__))


def version_str(value: Any) -> Any:
    """``version: 3`` in YAML is an int; the registry's versions are strings."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Scalar = Annotated[str | int | float | bool | None, BeforeValidator(scalar)]
ColumnName = Annotated[str, Field(min_length=1)]
Fraction = Annotated[float, Field(gt=0.0, lt=1.0)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
Duration = Annotated[dt.timedelta, BeforeValidator(parse_duration)]

def format_duration(value: dt.timedelta) -> str:
    """A duration as a spec writes it: the largest unit of ``d h m s`` that divides it.

    >>> format_duration(dt.timedelta(days=30)), format_duration(dt.timedelta(hours=36))
    ('30d', '36h')
    """
    seconds = value.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


#: ``schedule.window: interval``: each window is its schedule interval, whatever its length (a monthly
#: cron's calendar months); held as ``None``
WINDOW_INTERVAL = "interval"


def parse_window(value: Any) -> dt.timedelta | None:
    """Parse ``schedule.window``: a duration (:func:`parse_duration`) or ``interval`` (``None``).

    Why ``interval``: no fixed length tiles a monthly cron's intervals (28 to 31 days), so a ``30d``
    window on ``0 0 1 * *`` counted some days twice and others never.

    Examples
    --------
    >>> parse_window("interval") is None, parse_window("7d")
    (True, datetime.timedelta(days=7))
    """
    if isinstance(value, str) and value.strip().lower() == WINDOW_INTERVAL:
        return None
    try:
        return parse_duration(value)
    except ValueError:
        raise ValueError(ERR_DURATION.format(value=excerpt(value)) + f", or {WINDOW_INTERVAL!r} (the "
                         "schedule interval: a monthly cron's calendar months)") from None


def _window_json(value: dt.timedelta | None, handler: SerializerFunctionWrapHandler) -> Any:
    return WINDOW_INTERVAL if value is None else handler(value)


WindowLength = Annotated[
    dt.timedelta | None, BeforeValidator(parse_window), WrapSerializer(_window_json),
    WithJsonSchema({"anyOf": [{"type": "string", "format": "duration"}, {"const": WINDOW_INTERVAL}],
                    "description": "a duration ('1d', '12h', 'P1D') or 'interval': the schedule interval itself"}),
]


class SpecSection(BaseModel):
    """Base of every spec section: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def __hash__(self) -> int:
        # content hash (pydantic's default hashes field values, and dict fields are unhashable)
        return hash(json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True))

