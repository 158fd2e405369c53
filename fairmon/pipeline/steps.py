"""The task-sized steps of one monitoring window (DESIGN §2), shared by the DAG and the CLI.

Each step takes a :class:`~fairmon.pipeline.context.RunContext` and returns a small JSON-able dict (ids,
counts, status) — what an Airflow task may push to XCom. Data moves between steps through the run's
artifact location (:class:`~fairmon.pipeline.artifacts.ArtifactStore`), results into the store.

Order (:data:`STEP_ORDER`)::

    resolve_window → pull_snapshot → pull_data → validate → predict → outcome → rumie → explain
    → persist → drift → report → alert → feu → followup

The report is written before the alert that links to it (DESIGN §2), so the link works the moment
the message arrives; the follow-up step re-writes it once the window's Slack messages and FEU
candidates exist.

``feu`` runs on drift (``retraining.trigger: on_drift``) or on request (:attr:`RunContext.feu_requested`,
see :func:`fairmon.pipeline.runner.feu_on_demand`).

Contracts every step keeps:

- **Idempotent.** A step reads its inputs from the artifacts of the same window and overwrites its own
  outputs; ``persist`` replaces the window's rows in one transaction; alerts go through the outbox whose
  fingerprint makes a second enqueue a no-op, so a retried or re-run window never sends twice.
- **Honest failures.** A batch failing validation marks the run ``data_invalid`` with the failed
  expectations, sends one data alert and raises :class:`~fairmon.errors.DataValidationError` (nothing
  else is computed). Any other error marks the run ``failed`` with the error text (see
  :func:`fairmon.pipeline.runner.run_step`); no step ever writes a placeholder number.
- **History is the past.** Drift decisions read only completed windows that *end before* this one
  starts, so re-running an old window never rewrites later decisions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from fairmon.errors import DataValidationError
from fairmon.pipeline.context import RunContext

log = logging.getLogger(__name__)

__all__ = [
    "STEP_ORDER",
    "STEPS",
    "HEAVY_STEPS",
    "AFTER_PERSIST",
    "resolve_window",
    "pull_snapshot",
    "pull_data",
    "validate",
    "predict",
    "outcome",
    "rumie",
    "explain",
    "persist",
    "drift",
    "alert",
    "feu",
    "followup",
    "report",
]

#: the steps in execution order (the DAG's task ids)
STEP_ORDER: tuple[str, ...] = (
    "resolve_window",
    "pull_snapshot",
    "pull_data",
    "validate",
    "predict",
    "outcome",
    "rumie",
    "explain",
    "persist",
    "drift",
    "report",
    "alert",
    "feu",
    "followup",
)
#: steps that run once the window's results are stored; their failure keeps those results
AFTER_PERSIST = frozenset(STEP_ORDER[STEP_ORDER.index("persist") + 1 :])
#: steps that belong on the spec's (GPU) queue
HEAVY_STEPS = frozenset({"predict", "rumie", "explain", "feu"})


# artifact names
A_SNAPSHOT = "snapshot"
A_DATA = "data"
A_VALIDATION = "validation"
A_PREDICTIONS = "predictions"
A_OUTCOME = "outcome"
A_RUMIE = "rumie"
A_EXPLAIN = "explain"
A_PERSIST = "persist"
A_DRIFT = "drift"
A_ALERT = "alert"
A_FEU = "feu"
A_FOLLOWUP = "followup"
A_REPORT = "report"


def _timed(ctx: RunContext, name: str, started: float, result: dict[str, Any]) -> dict[str, Any]:
    """Record the step's wall time next to its result (persist collects them into ``runs.timings``)."""
    result = {**result, "seconds": round(time.perf_counter() - started, 3)}
    ctx.artifacts.put_json(f"step_{name}", result)
    return result


# ------------------------------------------------------------------------------------------ window


def resolve_window(ctx: RunContext) -> dict[str, Any]:
    """Register the monitor and open the run row for this window; clear stale artifacts.

    Returns the window (``monitor``, ``start``, ``end``) and the ``run_id``: the small dict every later
    task receives.
    """
    t0 = time.perf_counter()
    ctx.artifacts.clear()
    from fairmon.pipeline import storeio

    run_id = storeio.start_run(ctx)
    return _timed(ctx, "resolve_window", t0, {**ctx.window.to_dict(), "run_id": run_id})


# ------------------------------------------------------------------------------------------ inputs


def model_name(ctx: RunContext) -> str:
    return ctx.spec.model.name or ctx.spec.name


def model_registry(ctx: RunContext) -> Any:
    from fairmon.registry import Registry

    return Registry(ctx.spec.resolve_path(ctx.spec.model.registry_uri))


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
    return _timed(ctx, "pull_snapshot", t0, {"model_version": info.version, "sha256": info.sha256})


def pull_data(ctx: RunContext) -> dict[str, Any]:
    """Load the window's rows from the spec's source (SQL with ``:start/:end`` or a file partition)."""
    t0 = time.perf_counter()
    from fairmon.sources import load_window

    frame = load_window(ctx.spec, ctx.window.start, ctx.window.end, engine=ctx.source_url)
    ctx.artifacts.put_frame(A_DATA, frame)
    return _timed(ctx, "pull_data", t0, {"rows": int(len(frame)), "columns": int(frame.shape[1])})


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
        ctx.artifacts.put_json(A_VALIDATION, {"success": True, "enabled": False, "failed": []})
        return _timed(ctx, "validate", t0, {"valid": True, "enabled": False})
    from fairmon.validation import validate_window

    result = validate_window(ctx.spec, frame, engine=ctx.source_url)
    summary = result.to_dict()
    ctx.artifacts.put_json(A_VALIDATION, summary)
    if result.success:
        _check_window_data(ctx, frame)  # a suite (e.g. a hand-written one) need not cover these
        return _timed(ctx, "validate", t0, {"valid": True, "enabled": True, "expectations": len(summary.get("results", []))})
    failed = list(result.failed)
    from fairmon.pipeline import storeio

    storeio.mark_data_invalid(ctx, failed=failed, n_rows=int(len(frame)))
    sent = storeio.data_alert(ctx, failed=failed)
    if sent.get("delivery_error"):
        storeio.mark_data_invalid(ctx, failed=failed, n_rows=int(len(frame)),
                                  alert_delivery_error=str(sent["delivery_error"]))
    _timed(ctx, "validate", t0, {"valid": False, "failed": len(failed), "alert": sent,
                                 "rendered": storeio.rendered_alerts(ctx, kind="data")})
    result.raise_for_failures()  # DataValidationError naming the failed expectations
    raise DataValidationError(f"window {ctx.window.key} failed validation", failed)  # pragma: no cover


def _window_origin(ctx: RunContext) -> str:
    """Where the window's rows came from, for error messages: the partition file or the SQL query."""
    from fairmon.sources import describe_window_source

    return describe_window_source(ctx.spec, ctx.window.start, ctx.window.end)


def _check_window_data(ctx: RunContext, frame: Any) -> None:
    """The checks that hold with or without a validation suite (:mod:`fairmon.pipeline.checks`): every
    column the spec names is present and the protected attributes are categorical."""
    from fairmon.pipeline import checks

    w = ctx.window.start
    day = w.date().isoformat() if (w.hour, w.minute, w.second) == (0, 0, 0) else w.isoformat()
    checks.check_columns(ctx.spec, frame, window=day, origin=_window_origin(ctx))
    checks.check_sensitive_categorical(ctx.spec, frame, window=day)


# ------------------------------------------------------------------------------------------ compute


def predict(ctx: RunContext) -> dict[str, Any]:
    """The favorable indicator of every row: from logged decisions/scores, else by scoring the model.

    Writes ``predictions.npz`` with ``favorable`` (0/1, NaN = missing), ``score`` (P(class 1), NaN when
    the monitor reads logged decisions) and ``label_favorable`` (0/1/NaN; absent labels stay NaN).
    """
    t0 = time.perf_counter()
    import numpy as np

    from fairmon.pipeline.checks import (
        check_favorable_class,
        check_favorable_value,
        favorable_value_eq,
    )
    from fairmon.registry.model import Model

    cols, fav = ctx.spec.columns, ctx.spec.favorable
    frame = ctx.artifacts.get_frame(A_DATA)
    snap = ctx.artifacts.get_json(A_SNAPSHOT)
    n = len(frame)
    score = np.full(n, np.nan)
    source = "model"
    if cols.decision is not None:
        fav_class = fav.class_ if fav.class_ is not None else 1
        check_favorable_value(frame[cols.decision], fav_class, what="decision", field="favorable.class")
        favorable = favorable_value_eq(frame[cols.decision], fav_class)
        source = "logged_decision"
    else:
        if cols.score is not None:
            score = frame[cols.score].to_numpy(dtype=float)
            source = "logged_score"
            pred = None
            if fav.score_threshold is None:
                check_favorable_class(
                    fav.class_, Model.classes, what=f"the 0.5 rule on score column {cols.score!r}"
                )
        else:
            model = model_registry(ctx).load(snap["name"], snap["version"], device=ctx.device)
            if fav.score_threshold is None:
                check_favorable_class(fav.class_, model.classes, what=f"model {snap['name']}:{snap['version']}")
            score = model.predict_proba(frame[list(cols.features)])[:, 1]
            pred = model.predict(frame[list(cols.features)])
        if fav.score_threshold is not None:
            if fav.direction == "above":
                favorable = (score >= fav.score_threshold).astype(float)
            else:
                favorable = (score <= fav.score_threshold).astype(float)
            favorable[np.isnan(score)] = np.nan
        elif pred is not None:
            favorable = favorable_value_eq(pred, fav.class_)
        else:  # a logged score without a threshold: the model's own 0.5 rule on P(class 1)
            favorable = favorable_value_eq((score >= 0.5).astype(int), fav.class_)
    if cols.label is not None and cols.label in frame.columns:
        label_field = "favorable.label_class" if fav.label_class is not None else "favorable.class (label_class unset)"
        check_favorable_value(frame[cols.label], fav.label_value, what="label", field=label_field)
        label_fav = favorable_value_eq(frame[cols.label], fav.label_value)
    else:
        label_fav = np.full(n, np.nan)
    ctx.artifacts.put_arrays(
        A_PREDICTIONS,
        favorable=np.asarray(favorable, dtype=float),
        score=np.asarray(score, dtype=float),
        label_favorable=np.asarray(label_fav, dtype=float),
    )
    rate = float(np.nanmean(favorable)) if n and not np.all(np.isnan(favorable)) else None
    return _timed(
        ctx,
        "predict",
        t0,
        {"rows": n, "source": source, "model_version": snap["version"], "favorable_rate": rate},
    )


def outcome(ctx: RunContext) -> dict[str, Any]:
    """Outcome fairness of the declared protected attributes (and intersections) with bootstrap CIs."""
    t0 = time.perf_counter()
    from fairmon.fairness.outcome import DEFAULT_METRICS, outcome_metrics

    o = ctx.spec.outcome
    if not o.enabled:
        ctx.artifacts.put_json(A_OUTCOME, None)
        return _timed(ctx, "outcome", t0, {"enabled": False, "rows": 0})
    frame = ctx.artifacts.get_frame(A_DATA)
    pred = ctx.artifacts.get_arrays(A_PREDICTIONS)
    labels = pred["label_favorable"]
    result = outcome_metrics(
        pred["favorable"],
        sensitive_features=frame[list(ctx.spec.columns.sensitive)],
        y_true=None if ctx.spec.columns.label is None else labels,
        metrics=tuple(o.metrics) if o.metrics is not None else DEFAULT_METRICS,
        intersections=o.intersections,
        min_group_size=o.min_group_size,
        n_bootstrap=o.bootstrap,
        confidence=o.confidence,
        random_state=o.random_state,
    )
    ctx.artifacts.put_json(A_OUTCOME, result.to_dict())
    return _timed(
        ctx, "outcome", t0, {"enabled": True, "rows": len(result.rows), "labels_pending": result.labels_pending}
    )


def _rumie_frame(ctx: RunContext) -> Any:
    """The window's columns RUMIE searches (:attr:`~fairmon.config.MonitorSpec.rumie_attributes`)."""
    return ctx.artifacts.get_frame(A_DATA)[list(ctx.spec.rumie_attributes)]


def rumie(ctx: RunContext) -> dict[str, Any]:
    """RUMIE (IE / IE-DT): the most discriminated group nobody declared, with rules and honest DScore."""
    t0 = time.perf_counter()
    r = ctx.spec.rumie
    if not r.enabled:
        ctx.artifacts.put_json(A_RUMIE, None)
        return _timed(ctx, "rumie", t0, {"enabled": False})
    from fairmon.pipeline import compute

    ev = compute.run_rumie(ctx, _rumie_frame(ctx), ctx.artifacts.get_arrays(A_PREDICTIONS)["favorable"])
    ctx.artifacts.put_json(A_RUMIE, ev)
    return _timed(
        ctx,
        "rumie",
        t0,
        {"enabled": True, "dscore": ev.get("dscore"), "honest_dscore": ev.get("honest_dscore")},
    )


def explain(ctx: RunContext) -> dict[str, Any]:
    """Explanation fairness: GESD across the protected groups and the OpenXAI metrics with disparities."""
    t0 = time.perf_counter()
    e = ctx.spec.explanations
    if not e.enabled:
        ctx.artifacts.put_json(A_EXPLAIN, None)
        return _timed(ctx, "explain", t0, {"enabled": False})
    from fairmon.pipeline import compute

    out = compute.run_explanations(ctx)
    ctx.artifacts.put_json(A_EXPLAIN, out)
    return _timed(ctx, "explain", t0, {"enabled": True, "rows": len(out.get("rows", []))})


# ------------------------------------------------------------------------------------------ store


def persist(ctx: RunContext) -> dict[str, Any]:
    """Write the window's run, metrics, evidence and explanation rows in ONE transaction (replacing)."""
    t0 = time.perf_counter()
    from fairmon.pipeline import storeio

    written = storeio.write_window(ctx)
    ctx.artifacts.put_json(A_PERSIST, written)
    return _timed(ctx, "persist", t0, written)


def drift(ctx: RunContext) -> dict[str, Any]:
    """Decide drift against earlier completed windows only; store the findings of this window."""
    t0 = time.perf_counter()
    from fairmon.pipeline import storeio

    out = storeio.decide_and_store_findings(ctx)
    ctx.artifacts.put_json(A_DRIFT, out)
    return _timed(
        ctx, "drift", t0, {"findings": len(out["findings"]), "open": out["open"], "drifted": out["drifted"],
                           "baseline": out["baseline"]["status"], "baseline_reason": out["baseline"]["reason"]}
    )


def alert(ctx: RunContext) -> dict[str, Any]:
    """Enqueue one alert per (monitor, window, finding) in the outbox; send when notifying."""
    t0 = time.perf_counter()
    from fairmon.pipeline import storeio

    out = storeio.send_alerts(ctx)
    ctx.artifacts.put_json(A_ALERT, out)
    return _timed(ctx, "alert", t0, {k: v for k, v in out.items() if k != "messages"})


def _feu_skip_reason(ctx: RunContext) -> str | None:
    """Why the feu step does not run at this window (None: it runs)."""
    rt = ctx.spec.retraining
    if not rt.enabled:
        if ctx.feu_requested:
            log.warning("FEU was requested for %s %s but retraining.enabled is false", ctx.monitor, ctx.window.key)
            return "retraining disabled (FEU was requested, but retraining.enabled is false)"
        return "retraining disabled"
    if ctx.feu_requested:
        return None
    if rt.trigger != "on_drift":
        return "trigger is manual (request FEU with `fairmon feu` or the DAG param feu)"
    if not ctx.artifacts.get_json(A_DRIFT).get("drifted"):
        return "no drift in this window"
    return None


def feu(ctx: RunContext) -> dict[str, Any]:
    """FEU retraining candidates, stored — never deployed.

    Runs on drift (``retraining.trigger: on_drift``) or when requested for this window
    (:attr:`RunContext.feu_requested`: ``fairmon feu``, the DAG's ``feu`` param), whatever the drift and
    the trigger; never with ``retraining.enabled: false``.
    """
    t0 = time.perf_counter()
    reason = _feu_skip_reason(ctx)
    if reason is not None:
        ctx.artifacts.put_json(A_FEU, {"status": "skipped", "reason": reason})
        return _timed(ctx, "feu", t0, {"status": "skipped", "reason": reason})
    from fairmon.pipeline import compute, storeio

    result = compute.run_feu(ctx)
    n = storeio.save_feu(ctx, result)
    out = {"status": "done", "candidates": n, "selected": result.get("selected"), "requested": ctx.feu_requested}
    ctx.artifacts.put_json(A_FEU, {**out, "result": result})
    return _timed(ctx, "feu", t0, out)


def followup(ctx: RunContext) -> dict[str, Any]:
    """Post the FEU candidates once: a threaded reply under the window's drift alert, or (FEU requested
    at a window without an alerted drift) a message of its own. Then bring the report up to date with
    the window's Slack messages and candidates (it was written before them)."""
    t0 = time.perf_counter()
    feu_out = ctx.artifacts.get_json(A_FEU)
    if feu_out.get("status") != "done":
        out: dict[str, Any] = {"status": "skipped"}
    else:
        from fairmon.pipeline import storeio

        out = storeio.send_followup(ctx, feu_out["result"], requested=bool(feu_out.get("requested")))
    queued = int(ctx.artifacts.get_json(A_ALERT).get("queued", 0)) if ctx.artifacts.exists(A_ALERT) else 0
    if feu_out.get("status") == "done" or queued:
        out["report"] = _write_report(ctx)  # {"status", "path"}
    ctx.artifacts.put_json(A_FOLLOWUP, out)
    return _timed(ctx, "followup", t0, {k: v for k, v in out.items() if k != "messages"})


def report(ctx: RunContext) -> dict[str, Any]:
    """The window's static HTML report (:func:`fairmon.report.write_report`), before the alert that
    links to it; the follow-up re-writes it once the window's messages and FEU candidates exist."""
    t0 = time.perf_counter()
    return _timed(ctx, "report", t0, _write_report(ctx))


def _write_report(ctx: RunContext) -> dict[str, Any]:
    from fairmon.report import write_report

    out = {"status": "written", "path": str(write_report(ctx))}
    ctx.artifacts.put_json(A_REPORT, out)
    return out


STEPS: dict[str, Callable[[RunContext], dict[str, Any]]] = {
    "resolve_window": resolve_window,
    "pull_snapshot": pull_snapshot,
    "pull_data": pull_data,
    "validate": validate,
    "predict": predict,
    "outcome": outcome,
    "rumie": rumie,
    "explain": explain,
    "persist": persist,
    "drift": drift,
    "report": report,
    "alert": alert,
    "feu": feu,
    "followup": followup,
}
assert tuple(STEPS) == STEP_ORDER
