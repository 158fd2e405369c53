"""The input steps of a window: resolve it, pin the model version, load and validate its rows, and
derive every row's favorable indicator (step order and names: :mod:`fairmon.pipeline.table`)."""

from __future__ import annotations

import logging
import time
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from fairmon.config import MonitorSpec
from fairmon.errors import DatasetError, DataValidationError
from fairmon.pipeline import checks, notify, runs
from fairmon.pipeline.checks import (
    check_favorable_class,
    check_favorable_value,
    favorable_from_scores,
    favorable_value_eq,
)
from fairmon.pipeline.context import RunContext, load_model, model_name, model_registry
from fairmon.pipeline.frames import as_categories, window_columns
from fairmon.pipeline.frames import predict_proba as chunked_proba
from fairmon.pipeline.runs import timed
from fairmon.pipeline.table import A_DATA, A_PREDICTIONS, A_SNAPSHOT, A_VALIDATION
from fairmon.registry.model import Model
from fairmon.sources import describe_window_source, load_window
from fairmon.validation import validate_window

__all__ = ["resolve_window", "pull_snapshot", "pull_data", "validate", "predict", "logged_favorable", "label_favorable"]

log = logging.getLogger(__name__)


def resolve_window(ctx: RunContext) -> dict[str, Any]:
    """Register the monitor and start a new attempt of this window (its run row, its artifact folder).

    Returns the window (``monitor``, ``start``, ``end``), the ``run_id`` and the ``attempt_id``: the
    small dict every later task receives, so all of them work in this attempt's folder and stop once a
    newer attempt takes the window over; with ``spec_changed`` (a line for humans) when the spec differs
    from the series' previous window's (a stored spec_changed event, issue 20). Folders of older
    attempts are removed, except the one taken over now (it may still be running; the next attempt
    removes it).
    """
    t0 = time.perf_counter()
    change = ctx.store.spec_change_of(ctx.monitor, ctx.window.start, ctx.spec.fingerprint)
    run_id, previous = runs.start_run(ctx)
    ctx.artifacts.remove_other_attempts(keep=set() if previous is None else {previous})
    out: dict[str, Any] = {**ctx.window.to_dict(), "run_id": run_id, "attempt_id": ctx.attempt_id}
    if change is not None:
        ctx.store.record_spec_change(run_id, change)
        log.warning("%s", change.text)
        out["spec_changed"] = change.text
    else:  # rerun under the series' spec again: an event an earlier run of this window recorded is void
        ctx.store.forget_spec_change(ctx.monitor, run_id)
    return timed(ctx, "resolve_window", t0, out)


def pull_snapshot(ctx: RunContext) -> dict[str, Any]:
    """Resolve the model version live for this window (``"latest"`` as of the window start, or pinned).

    Later steps load exactly this version (checksum-verified), even if a newer one is registered while
    the run is in flight.
    """
    t0 = time.perf_counter()
    info = model_registry(ctx).resolve(model_name(ctx), ctx.spec.model.version, as_of=ctx.window.start)
    snap = {
        "name": info.name,
        "version": info.version,
        "sha256": info.sha256,
        "framework": info.framework,
        "schema_fingerprint": info.schema_fingerprint,
        "created": info.created,
        "valid_from": info.valid_from,
    }
    ctx.artifacts.put_json(A_SNAPSHOT, snap)
    return timed(ctx, "pull_snapshot", t0, {"model_version": info.version, "sha256": info.sha256})


def pull_data(ctx: RunContext) -> dict[str, Any]:
    """Load the window's rows from the spec's source (SQL with ``:start/:end`` or a file partition):
    only the columns the monitor reads (:func:`~fairmon.pipeline.frames.window_columns`), text columns
    as categoricals (a Parquet file's decoded from its dictionaries, without a string per row; the
    others by :func:`~fairmon.pipeline.frames.as_categories`)."""
    t0 = time.perf_counter()
    try:
        frame = load_window(ctx.spec, ctx.window.start, ctx.window.end, engine=ctx.source_url,
                            columns=window_columns(ctx.spec), text_as_categories=True)
    except DatasetError as exc:  # a missing / empty / unreadable window is bad data, not a pipeline error
        failure = checks.source_failure(exc)
        if failure is None:
            raise
        _data_invalid(ctx, "pull_data", t0, [failure], n_rows=0)
    frame = as_categories(frame)  # text as categorical codes: every later step reads the texts
    ctx.artifacts.put_frame(A_DATA, frame)
    return timed(ctx, "pull_data", t0, {"rows": int(len(frame)), "columns": int(frame.shape[1])})


def validate(ctx: RunContext) -> dict[str, Any]:
    """Run the monitor's Great Expectations suite on the window.

    A failing batch: the run becomes ``data_invalid`` with the failed expectations stored, ONE data alert
    is enqueued (and sent when notifying), and :class:`DataValidationError` stops the window. A data
    alert Slack refuses (bad token or channel) or cannot take (outage) leaves the window
    ``data_invalid``, the error in ``details.alert_delivery_error``.
    """
    t0 = time.perf_counter()
    frame = ctx.artifacts.get_frame(A_DATA)
    if not ctx.spec.validation.enabled:
        _check_window_data(ctx, frame)
        _check_model_inputs(ctx, frame, t0)
        ctx.artifacts.put_json(A_VALIDATION, {"success": True, "enabled": False, "failed": []})
        return timed(ctx, "validate", t0, {"valid": True, "enabled": False})
    result = validate_window(ctx.spec, frame, engine=ctx.source_url)
    summary = result.to_dict()
    ctx.artifacts.put_json(A_VALIDATION, summary)
    if result.success:
        _check_window_data(ctx, frame)  # a suite (e.g. a hand-written one) need not cover these
        _check_model_inputs(ctx, frame, t0)
        return timed(ctx, "validate", t0, {"valid": True, "enabled": True, "expectations": len(summary.get("results", []))})
    _data_invalid(ctx, "validate", t0, list(result.failed), n_rows=int(len(frame)), report=result)


def _check_model_inputs(ctx: RunContext, frame: Any, t0: float) -> None:
    """±inf in a named numeric column, nulls in a feature the model cannot encode: ``data_invalid``."""
    cols = ctx.spec.columns
    scored = cols.decision is None and cols.score is None
    schema = None
    if scored:
        snap = ctx.artifacts.get_json(A_SNAPSHOT)
        schema = model_registry(ctx).resolve(snap["name"], snap["version"]).feature_schema
    failed = checks.model_input_failures(ctx.spec, frame, schema=schema, scored=scored)
    if failed:
        _data_invalid(ctx, "validate", t0, failed, n_rows=int(len(frame)))


def _data_invalid(
    ctx: RunContext, step: str, t0: float, failed: list[dict[str, Any]], *, n_rows: int, report: Any = None
) -> NoReturn:
    """The window's data cannot be monitored: ``data_invalid`` with ``failed``, ONE data alert, and
    :class:`DataValidationError` (the runner records nothing more)."""
    runs.mark_data_invalid(ctx, failed=failed, n_rows=n_rows)
    sent = notify.data_alert(ctx, failed=failed)
    if sent.get("delivery_error"):
        runs.mark_data_invalid(ctx, failed=failed, n_rows=n_rows, alert_delivery_error=str(sent["delivery_error"]))
    timed(ctx, step, t0, {"valid": False, "failed": len(failed), "alert": sent,
                          "rendered": notify.rendered_alerts(ctx, kind="data")})
    if report is not None:
        report.raise_for_failures()  # DataValidationError naming the failed expectations
    said = "; ".join(f"{f.get('check')}: {f['message']}" if f.get("message") else str(f.get("check"))
                     for f in failed[:3]) + (f"; and {len(failed) - 3} more" if len(failed) > 3 else "")
    raise DataValidationError(f"window {ctx.window.key} failed validation: {said}", failed)


def _window_origin(ctx: RunContext) -> str:
    """Where the window's rows came from, for error messages: the partition file or the SQL query."""
    return describe_window_source(ctx.spec, ctx.window.start, ctx.window.end)


def _check_window_data(ctx: RunContext, frame: Any) -> None:
    """The checks that hold with or without a validation suite (:mod:`fairmon.pipeline.checks`): every
    column the spec names is present and the protected attributes are categorical."""
    w = ctx.window.start
    day = w.date().isoformat() if (w.hour, w.minute, w.second) == (0, 0, 0) else w.isoformat()
    checks.check_columns(ctx.spec, frame, window=day, origin=_window_origin(ctx))
    checks.check_sensitive_categorical(ctx.spec, frame, window=day)


def predict(ctx: RunContext) -> dict[str, Any]:
    """The favorable indicator of every row: from logged decisions/scores, else by scoring the model.

    Writes ``predictions.npz`` with ``favorable`` (0/1, NaN = missing), ``score`` (P(class 1), NaN when
    the monitor reads logged decisions) and ``label_favorable`` (0/1/NaN; absent labels stay NaN).
    """
    t0 = time.perf_counter()
    cols, fav = ctx.spec.columns, ctx.spec.favorable
    frame = ctx.artifacts.get_frame(A_DATA)
    snap = ctx.artifacts.get_json(A_SNAPSHOT)
    n = len(frame)
    score = np.full(n, np.nan)
    source = "model"
    if cols.decision is not None:
        favorable = logged_favorable(ctx.spec, frame)
        source = "logged_decision"
    else:
        if cols.score is not None:
            score = frame[cols.score].to_numpy(dtype=float)
            source = "logged_score"
            pred = (score >= 0.5).astype(int)  # without a threshold: the model's own 0.5 rule on P(class 1)
            if fav.score_threshold is None:
                check_favorable_class(
                    fav.class_, Model.classes, what=f"the 0.5 rule on score column {cols.score!r}"
                )
        else:
            model = load_model(ctx, snap["name"], snap["version"])
            if fav.score_threshold is None:
                check_favorable_class(fav.class_, model.classes, what=f"model {snap['name']}:{snap['version']}")
            score = chunked_proba(model, frame[list(cols.features)])[:, 1]
            pred = (score >= model.threshold).astype(int)  # Model.predict's rule: the window is encoded once
        favorable = favorable_from_scores(fav, score, pred)
    label_fav = label_favorable(ctx.spec, frame)
    ctx.artifacts.put_arrays(
        A_PREDICTIONS,
        favorable=np.asarray(favorable, dtype=float),
        score=np.asarray(score, dtype=float),
        label_favorable=np.asarray(label_fav, dtype=float),
    )
    rate = float(np.nanmean(favorable)) if n and not np.all(np.isnan(favorable)) else None
    return timed(
        ctx,
        "predict",
        t0,
        {"rows": n, "source": source, "model_version": snap["version"], "favorable_rate": rate},
    )


def logged_favorable(spec: MonitorSpec, frame: pd.DataFrame) -> np.ndarray:
    """The favorable indicator (0/1/NaN) of the logged decisions ``columns.decision`` of ``frame``
    (the window's rows, or the distinct combinations of the database push-down)."""
    col = spec.columns.decision
    assert col is not None
    fav_class = spec.favorable.class_ if spec.favorable.class_ is not None else 1
    check_favorable_value(frame[col], fav_class, what="decision", field="favorable.class")
    return favorable_value_eq(frame[col], fav_class)


def label_favorable(spec: MonitorSpec, frame: pd.DataFrame) -> np.ndarray:
    """The favorable indicator (0/1/NaN) of the labels ``columns.label`` (all NaN without a label)."""
    col, fav = spec.columns.label, spec.favorable
    if col is None or col not in frame.columns:
        return np.full(len(frame), np.nan)
    label_field = "favorable.label_class" if fav.label_class is not None else "favorable.class (label_class unset)"
    check_favorable_value(frame[col], fav.label_value, what="label", field=label_field)
    return favorable_value_eq(frame[col], fav.label_value)
