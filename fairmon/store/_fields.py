"""Field types and validators of the store's records: literal types, :class:`RecordError`, ``utc``.

Why apart from the records: every record validates its fields with the same few checks (tz-aware
instants, finite-or-NULL numbers, non-negative counts, literal choices) and raises the same error
texts, which tests assert.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from fairmon.errors import StoreError

__all__ = [
    "RunStatus",
    "RESULT_STATUSES",
    "NEXT_STEP",
    "Severity",
    "FindingStatus",
    "AlertKind",
    "AlertState",
    "ExplanationFamily",
    "RecordError",
    "ERR_FIELD",
    "ERR_NAIVE_TIME",
    "ERR_DUPLICATE_KEY",
    "utc",
    "check_literal",
    "field_error",
    "finite_or_none",
    "nonneg_int",
    "set_field",
    "stored_results_status",
]

RunStatus = Literal["running", "succeeded", "failed", "data_invalid", "skipped", "labels_pending"]
#: statuses a window is written with (its result rows: metrics, evidence, ...); a run in another status
#: may still hold an earlier attempt's rows, see :func:`stored_results_status`
RESULT_STATUSES: tuple[str, ...] = ("succeeded", "labels_pending")
#: the run-details key naming the step a stored window still has to run (absent once its last step
#: finished; see :mod:`fairmon.store._liveness`)
NEXT_STEP = "next_step"
Severity = Literal["info", "warning", "critical"]
FindingStatus = Literal["pending", "open", "ongoing", "resolved", "event"]
AlertKind = Literal["fairness", "data"]
AlertState = Literal["pending", "sending", "sent", "failed", "withdrawn"]
ExplanationFamily = Literal["gesd", "openxai"]

ERR_FIELD = "{record}.{field}: {problem} (got {value!r})"
ERR_NAIVE_TIME = "{record}.{field} must be timezone-aware (got naive {value!r}); windows are instants"
ERR_DUPLICATE_KEY = "WindowRecords: duplicate {record} key {key!r} in one window"


def stored_results_status(status: str | None, details: Mapping[str, Any] | None) -> str | None:
    """The status the run's stored result rows were written with, None when it holds none.

    Result rows are written only by a window write and replaced only by the next one: a status mark
    never removes them (a failed re-run must not lose a computed window). So a run holds rows when its
    status is a result status, when a mark kept them (``details.results_kept`` with
    ``persisted_status``), or when a new attempt started over them (``details.stored_status``).

    >>> stored_results_status("failed", {"results_kept": True, "persisted_status": "succeeded"})
    'succeeded'
    >>> stored_results_status("running", {"attempt": 1}) is None
    True
    """
    if status in RESULT_STATUSES:
        return status
    d = details or {}
    kept = d.get("persisted_status") if d.get("results_kept") else None
    found = kept or d.get("stored_status")
    return None if found is None else str(found)


class RecordError(StoreError):
    """A record handed to the store is invalid (programming error: not retryable)."""

    retryable = False


def utc(value: datetime, *, record: str = "record", name: str = "time") -> datetime:
    """Validate a tz-aware datetime and convert it to UTC (pandas Timestamps accepted).

    Examples
    --------
    >>> from datetime import timedelta, timezone
    >>> utc(datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))).isoformat()
    '2026-01-01T00:00:00+00:00'
    """
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if not isinstance(value, datetime):
        raise RecordError(ERR_FIELD.format(record=record, field=name, problem="not a datetime", value=value))
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise RecordError(ERR_NAIVE_TIME.format(record=record, field=name, value=value))
    return value.astimezone(UTC)


def field_error(record: str, name: str, problem: str, value: Any) -> RecordError:
    """The :data:`ERR_FIELD` error for a record's field (raise it)."""
    return RecordError(ERR_FIELD.format(record=record, field=name, problem=problem, value=value))


def check_literal(value: Any, lit: Any, record: str, name: str) -> None:
    allowed = get_args(lit)
    if value not in allowed:
        raise RecordError(
            ERR_FIELD.format(
                record=record, field=name, problem=f"must be one of {', '.join(allowed)}", value=value
            )
        )


def finite_or_none(value: float | None, record: str, name: str) -> float | None:
    """Store NaN as NULL: an undefined metric is missing, never a number."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise RecordError(
            ERR_FIELD.format(record=record, field=name, problem="not a number", value=value)
        ) from None
    if math.isnan(v):
        return None
    if math.isinf(v):
        raise RecordError(ERR_FIELD.format(record=record, field=name, problem="infinite", value=value))
    return v


def nonneg_int(value: int | None, record: str, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise RecordError(
            ERR_FIELD.format(record=record, field=name, problem="must be an integer >= 0", value=value)
        )
    return int(value)


def set_field(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)
