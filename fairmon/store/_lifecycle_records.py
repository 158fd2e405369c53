"""Records with a lifecycle of their own: outbox alerts and FEU candidates.

Why apart from the window's records: a re-run of a window replaces its metrics, evidence, explanation
metrics and findings, but not these — alerts move through the outbox states, FEU candidates are
saved (and registered) by their own step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.store._fields import (
    ERR_FIELD,
    AlertKind,
    AlertState,
    RecordError,
    check_literal,
    nonneg_int,
    set_field,
    utc,
)

__all__ = ["AlertRecord", "FEUCandidateRecord"]


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


@dataclass(frozen=True)
class FEUCandidateRecord:
    """One FEU retraining candidate (a point of the NSGA-II population / Pareto set).

    Examples
    --------
    >>> FEUCandidateRecord(0, {"lr": 0.01}, {"auc": 0.72, "dp": 0.01}, pareto=True).selected
    False
    """

    candidate_index: int
    hyperparameters: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    pareto: bool = False
    selected: bool = False
    registry_version: str | None = None
    run_id: int | None = None

    def __post_init__(self) -> None:
        set_field(
            self,
            "candidate_index",
            nonneg_int(self.candidate_index, "FEUCandidateRecord", "candidate_index"),
        )
        set_field(self, "hyperparameters", dict(self.hyperparameters))
        set_field(self, "metrics", dict(self.metrics))
