"""The outbox record: one alert per fingerprint (its own lifecycle, apart from a window's results)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.store._fields import ERR_FIELD, AlertKind, AlertState, RecordError, check_literal, set_field, utc

__all__ = ["AlertRecord"]


@dataclass(frozen=True)
class AlertRecord:
    """An outbox row: one alert per fingerprint (monitor, window, finding), delivered at most once.

    Examples
    --------
    >>> AlertRecord("fp-1", kind="fairness", payload={"text": "DP difference 0.21 for sex"}).state
    'pending'
    """

    fingerprint: str
    kind: AlertKind
    payload: Mapping[str, Any] = field(default_factory=dict)
    channel: str | None = None
    monitor: str | None = None
    run_id: int | None = None
    window_start: datetime | None = None
    severity: str | None = None
    state: AlertState = "pending"
    attempts: int = 0
    last_error: str | None = None
    slack_ts: str | None = None
    thread_ts: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    sent_at: datetime | None = None

    def __post_init__(self) -> None:
        if not self.fingerprint:
            raise RecordError(
                ERR_FIELD.format(
                    record="AlertRecord", field="fingerprint", problem="empty", value=self.fingerprint
                )
            )
        check_literal(self.kind, AlertKind, "AlertRecord", "kind")
        check_literal(self.state, AlertState, "AlertRecord", "state")
        if self.window_start is not None:
            set_field(self, "window_start", utc(self.window_start, record="AlertRecord", name="window_start"))
        set_field(self, "payload", dict(self.payload))
