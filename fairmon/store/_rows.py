"""Rows ↔ records: the column lists the repository selects and the by-name mapping of rows to records.

Why one module: every read of a table goes through the same select list and the same mapper, so a
new column is added in one place and a record is always filled the same way, whatever query read it.
Rows are read by column name (``row["window_start"]``), never by position.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from fairmon.store._tables import (
    alerts,
    evidence,
    explanation_metrics,
    feu_candidates,
    findings,
    metrics,
    monitors,
    runs,
)
from fairmon.store.records import (
    AlertRecord,
    EvidenceRecord,
    ExplanationMetricRecord,
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RunRecord,
)

__all__ = [
    "jsonable",
    "as_utc",
    "RUN_COLUMNS",
    "METRIC_COLUMNS",
    "EVIDENCE_COLUMNS",
    "EXPLANATION_COLUMNS",
    "FINDING_COLUMNS",
    "FEU_COLUMNS",
    "ALERT_COLUMNS",
    "run_from_row",
    "metric_from_row",
    "evidence_from_row",
    "explanation_from_row",
    "finding_from_row",
    "feu_candidate_from_row",
    "alert_from_row",
    "run_select",
    "finding_select",
    "alert_select",
]

Row = sa.RowMapping


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _finite(obj: Any) -> Any:
    # NaN/inf are not JSON: store them as null
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, Mapping):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def jsonable(obj: Any) -> Any:
    """A JSON-ready copy for a jsonb column: numpy → Python, datetimes → ISO text, NaN/inf → None.

    Examples
    --------
    >>> jsonable({"p": float("nan"), "when": datetime(2026, 1, 1, tzinfo=UTC), "k": (1, 2)})
    {'p': None, 'when': '2026-01-01T00:00:00+00:00', 'k': [1, 2]}
    """
    if obj is None:
        return None
    return _finite(json.loads(json.dumps(obj, default=_json_default)))


def as_utc(value: datetime | None) -> datetime | None:
    """A timestamp read back, in UTC (``None`` stays ``None``)."""
    return None if value is None else value.astimezone(UTC)


def _columns(table: sa.Table, names: Sequence[str]) -> list[sa.ColumnElement[Any]]:
    return [table.c[n] for n in names]


RUN_COLUMNS: list[sa.ColumnElement[Any]] = [
    monitors.c.name.label("monitor"),
    *_columns(
        runs,
        (
            "window_start",
            "window_end",
            "status",
            "model_version",
            "spec_fingerprint",
            "n_rows",
            "timings",
            "error",
            "details",
            "run_id",
            "created_at",
            "updated_at",
            "attempt_id",
        ),
    ),
]
_RESULT_KEYS = ("run_id", "window_start")
METRIC_COLUMNS = _columns(
    metrics, ("metric", "value", "attribute", "group_key", "ci_low", "ci_high", "n", "n_nan", *_RESULT_KEYS)
)
EVIDENCE_COLUMNS = _columns(
    evidence,
    (
        "method",
        "dscore",
        "honest_dscore",
        "p_value",
        "key_attributes",
        "rules",
        "rules_text",
        "tree",
        "group_size",
        "group_fraction",
        "p_fav_in",
        "p_fav_out",
        "n",
        "group_overlap",
        "details",
        *_RESULT_KEYS,
    ),
)
EXPLANATION_COLUMNS = _columns(
    explanation_metrics,
    (
        "family",
        "metric",
        "value",
        "explainer",
        "group_key",
        "p_value",
        "n",
        "n_nan",
        "group_stability",
        "details",
        *_RESULT_KEYS,
    ),
)
FINDING_COLUMNS: list[sa.ColumnElement[Any]] = [
    *_columns(
        findings,
        (
            "kind",
            "metric",
            "severity",
            "status",
            "attribute",
            "group_key",
            "numbers",
            "message",
            "value",
            "ci_low",
            "ci_high",
            "baseline",
            "since",
            "fingerprint",
            *_RESULT_KEYS,
        ),
    ),
    monitors.c.name.label("monitor"),
]
FEU_COLUMNS = _columns(
    feu_candidates,
    ("candidate_index", "hyperparameters", "metrics", "pareto", "selected", "registry_version", "run_id"),
)
ALERT_COLUMNS: list[sa.ColumnElement[Any]] = [
    *_columns(
        alerts,
        (
            "fingerprint",
            "kind",
            "payload",
            "channel",
            "run_id",
            "window_start",
            "severity",
            "state",
            "attempts",
            "last_error",
            "slack_ts",
            "thread_ts",
            "created_at",
            "updated_at",
            "sent_at",
        ),
    ),
    monitors.c.name.label("monitor"),
]


def run_select() -> sa.Select[Any]:
    """``SELECT <run columns> FROM runs JOIN monitors`` (add ``where`` / ``order_by``)."""
    return sa.select(*RUN_COLUMNS).select_from(
        runs.join(monitors, monitors.c.monitor_id == runs.c.monitor_id)
    )


def finding_select() -> sa.Select[Any]:
    """``SELECT <finding columns> FROM findings JOIN monitors``."""
    return sa.select(*FINDING_COLUMNS).select_from(
        findings.join(monitors, monitors.c.monitor_id == findings.c.monitor_id)
    )


def alert_select() -> sa.Select[Any]:
    """``SELECT <alert columns> FROM alerts LEFT JOIN monitors`` (alerts may have no monitor)."""
    return sa.select(*ALERT_COLUMNS).select_from(
        alerts.outerjoin(monitors, monitors.c.monitor_id == alerts.c.monitor_id)
    )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def run_from_row(row: Row) -> RunRecord:
    """A :class:`RunRecord` from a row of :func:`run_select`."""
    return RunRecord(
        monitor=row["monitor"],
        window_start=row["window_start"],
        window_end=row["window_end"],
        status=row["status"],
        model_version=row["model_version"],
        spec_fingerprint=row["spec_fingerprint"],
        n_rows=row["n_rows"],
        timings=row["timings"] or {},
        error=row["error"],
        details=row["details"] or {},
        run_id=int(row["run_id"]),
        created_at=as_utc(row["created_at"]),
        updated_at=as_utc(row["updated_at"]),
        attempt_id=row["attempt_id"],
    )


def metric_from_row(row: Row) -> MetricRecord:
    """A :class:`MetricRecord` from a row with :data:`METRIC_COLUMNS`."""
    return MetricRecord(
        metric=row["metric"],
        value=row["value"],
        attribute=row["attribute"],
        group=row["group_key"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        n=row["n"],
        n_nan=row["n_nan"],
        run_id=int(row["run_id"]),
        window_start=as_utc(row["window_start"]),
    )


def evidence_from_row(row: Row) -> EvidenceRecord:
    """An :class:`EvidenceRecord` from a row with :data:`EVIDENCE_COLUMNS`."""
    return EvidenceRecord(
        method=row["method"],
        dscore=row["dscore"],
        honest_dscore=row["honest_dscore"],
        p_value=row["p_value"],
        key_attributes=tuple(row["key_attributes"] or ()),
        rules=row["rules"],
        rules_text=row["rules_text"],
        tree=row["tree"],
        group_size=row["group_size"],
        group_fraction=row["group_fraction"],
        p_fav_in=row["p_fav_in"],
        p_fav_out=row["p_fav_out"],
        n=row["n"],
        group_overlap=row["group_overlap"],
        details=row["details"] or {},
        run_id=int(row["run_id"]),
        window_start=as_utc(row["window_start"]),
    )


def explanation_from_row(row: Row) -> ExplanationMetricRecord:
    """An :class:`ExplanationMetricRecord` from a row with :data:`EXPLANATION_COLUMNS`."""
    return ExplanationMetricRecord(
        family=row["family"],
        metric=row["metric"],
        value=row["value"],
        explainer=row["explainer"],
        group=row["group_key"],
        p_value=row["p_value"],
        n=row["n"],
        n_nan=row["n_nan"],
        group_stability=row["group_stability"],
        details=row["details"] or {},
        run_id=int(row["run_id"]),
        window_start=as_utc(row["window_start"]),
    )


def finding_from_row(row: Row) -> FindingRecord:
    """A :class:`FindingRecord` from a row of :func:`finding_select`."""
    return FindingRecord(
        kind=row["kind"],
        metric=row["metric"],
        severity=row["severity"],
        status=row["status"],
        attribute=row["attribute"],
        group=row["group_key"],
        numbers=row["numbers"] or {},
        message=row["message"],
        run_id=int(row["run_id"]),
        window_start=as_utc(row["window_start"]),
        monitor=row["monitor"],
        value=row["value"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        baseline=row["baseline"],
        since=as_utc(row["since"]),
        fingerprint=row["fingerprint"],
    )


def feu_candidate_from_row(row: Row) -> FEUCandidateRecord:
    """A :class:`FEUCandidateRecord` from a row with :data:`FEU_COLUMNS`."""
    return FEUCandidateRecord(
        candidate_index=row["candidate_index"],
        hyperparameters=row["hyperparameters"] or {},
        metrics=row["metrics"] or {},
        pareto=row["pareto"],
        selected=row["selected"],
        registry_version=row["registry_version"],
        run_id=int(row["run_id"]),
    )


def alert_from_row(row: Row) -> AlertRecord:
    """An :class:`AlertRecord` from a row of :func:`alert_select`."""
    return AlertRecord(
        fingerprint=row["fingerprint"],
        kind=row["kind"],
        payload=row["payload"] or {},
        channel=row["channel"],
        monitor=row["monitor"],
        run_id=_int_or_none(row["run_id"]),
        window_start=as_utc(row["window_start"]),
        severity=row["severity"],
        state=row["state"],
        attempts=int(row["attempts"]),
        last_error=row["last_error"],
        slack_ts=row["slack_ts"],
        thread_ts=row["thread_ts"],
        created_at=as_utc(row["created_at"]),
        updated_at=as_utc(row["updated_at"]),
        sent_at=as_utc(row["sent_at"]),
    )
