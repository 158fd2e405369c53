"""The task-sized steps of one monitoring window (DESIGN §2), shared by the DAG and the CLI.

Each step takes a :class:`~fairmon.pipeline.context.RunContext` and returns a small JSON-able dict (ids,
counts, status) — what an Airflow task may push to XCom. Data moves between steps through the run's
artifact location (:class:`~fairmon.pipeline.artifacts.ArtifactStore`), results into the store.

Order (:data:`fairmon.pipeline.table.STEP_ORDER`, the one step table)::

    resolve_window → pull_snapshot → pull_data → validate → predict → outcome → rumie → explain
    → persist → drift → diagnose → report → alert → feu → followup

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

from fairmon.fairness.outcome import DEFAULT_METRICS, outcome_metrics
from fairmon.pipeline import compute, judge, notify, records, retrain
from fairmon.pipeline import diagnose as diagnosis
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.ingest import (
    label_favorable,
    logged_favorable,
    predict,
    pull_data,
    pull_snapshot,
    resolve_window,
    validate,
)
from fairmon.pipeline.runs import timed
from fairmon.pipeline.table import (
    A_ALERT,
    A_DATA,
    A_DIAGNOSE,
    A_DRIFT,
    A_EXPLAIN,
    A_FEU,
    A_FOLLOWUP,
    A_OUTCOME,
    A_PERSIST,
    A_PREDICTIONS,
    A_REPORT,
    A_RUMIE,
    AFTER_PERSIST,
    HEAVY_STEPS,
    STEP_ORDER,
)
from fairmon.report.write import write_report
from fairmon.results import encode
from fairmon.sources import COUNT_COLUMN, load_window_counts

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
    "diagnose",
    "alert",
    "feu",
    "followup",
    "report",
]


# ------------------------------------------------------------------------------------------ compute


def outcome(ctx: RunContext) -> dict[str, Any]:
    """Outcome fairness of the declared protected attributes (and intersections) with bootstrap CIs."""
    t0 = time.perf_counter()
    o = ctx.spec.outcome
    if not o.enabled:
        ctx.artifacts.put_json(A_OUTCOME, None)
        return timed(ctx, "outcome", t0, {"enabled": False, "rows": 0})
    cols = ctx.spec.columns
    if o.push_down:  # (group x decision x label) counts from the database: this step moves only the counts
        assert ctx.spec.data.sql is not None and cols.decision is not None  # the spec validator's rule
        wanted = [*cols.sensitive, cols.decision, *([cols.label] if cols.label is not None else [])]
        frame = load_window_counts(ctx.spec.data.sql, ctx.window.start, ctx.window.end, list(dict.fromkeys(wanted)),
                                   engine=ctx.source_url)
        favorable, labels, row_counts = logged_favorable(ctx.spec, frame), label_favorable(ctx.spec, frame), frame[COUNT_COLUMN]
    else:
        frame = ctx.artifacts.get_frame(A_DATA)
        pred = ctx.artifacts.get_arrays(A_PREDICTIONS)
        favorable, labels, row_counts = pred["favorable"], pred["label_favorable"], None
    result = outcome_metrics(
        favorable,
        sensitive_features=frame[list(cols.sensitive)],
        y_true=None if cols.label is None else labels,
        row_counts=row_counts,
        metrics=tuple(o.metrics) if o.metrics is not None else DEFAULT_METRICS,
        intersections=o.intersections,
        min_group_size=o.min_group_size,
        n_bootstrap=o.bootstrap,
        confidence=o.confidence,
        ci_method=o.ci_method,
        random_state=o.random_state,
    )
    ctx.artifacts.put_json(A_OUTCOME, encode(result))
    return timed(ctx, "outcome", t0, {"enabled": True, "rows": len(result.rows), "labels_pending": result.labels_pending,
                                      "push_down": o.push_down})


def _rumie_frame(ctx: RunContext) -> Any:
    """The window's columns RUMIE searches (:attr:`~fairmon.config.MonitorSpec.rumie_attributes`)."""
    return ctx.artifacts.get_frame(A_DATA)[list(ctx.spec.rumie_attributes)]


def rumie(ctx: RunContext) -> dict[str, Any]:
    """RUMIE (IE / IE-DT): the most discriminated group nobody declared, with rules and honest DScore."""
    t0 = time.perf_counter()
    r = ctx.spec.rumie
    if not r.enabled:
        ctx.artifacts.put_json(A_RUMIE, None)
        return timed(ctx, "rumie", t0, {"enabled": False})
    out = compute.run_rumie(ctx, _rumie_frame(ctx), ctx.artifacts.get_arrays(A_PREDICTIONS)["favorable"])
    ctx.artifacts.put_json(A_RUMIE, out.to_dict())
    ev = out.evidence
    return timed(ctx, "rumie", t0, {"enabled": True, "dscore": ev.dscore, "honest_dscore": ev.honest_dscore})


def explain(ctx: RunContext) -> dict[str, Any]:
    """Explanation fairness: GESD across the protected groups and the OpenXAI metrics with disparities."""
    t0 = time.perf_counter()
    e = ctx.spec.explanations
    if not e.enabled:
        ctx.artifacts.put_json(A_EXPLAIN, None)
        return timed(ctx, "explain", t0, {"enabled": False})
    out = compute.run_explanations(ctx)
    ctx.artifacts.put_json(A_EXPLAIN, out)
    return timed(ctx, "explain", t0, {"enabled": True, "rows": len(out.get("rows", []))})


# ------------------------------------------------------------------------------------------ store


def persist(ctx: RunContext) -> dict[str, Any]:
    """Write the window's run, metrics, evidence and explanation rows in ONE transaction (replacing)."""
    t0 = time.perf_counter()
    written = records.write_window(ctx)
    ctx.artifacts.put_json(A_PERSIST, written)
    return timed(ctx, "persist", t0, written)


def drift(ctx: RunContext) -> dict[str, Any]:
    """Decide drift against earlier completed windows only; store the findings of this window."""
    t0 = time.perf_counter()
    out = judge.decide_and_store_findings(ctx)
    ctx.artifacts.put_json(A_DRIFT, out)
    return timed(
        ctx, "drift", t0, {"findings": len(out["findings"]), "open": out["open"], "drifted": out["drifted"],
                           "pending": sum(1 for f in out["findings"] if f.get("status") == "pending"),
                           "baseline": out["baseline"]["status"], "baseline_reason": out["baseline"]["reason"]}
    )


def diagnose(ctx: RunContext) -> dict[str, Any]:
    """Why the group is disfavored (attribution gaps of the RUMIE group and the most disadvantaged
    declared group) and, when a finding fired, model or data (the fired metrics under the earlier
    production version); both stored under the window's run (:mod:`fairmon.pipeline.diagnose`)."""
    t0 = time.perf_counter()
    run_id = int(ctx.artifacts.get_json(A_PERSIST)["run_id"])
    _, findings = notify.window_findings(ctx)
    t_gap = time.perf_counter()
    gaps = diagnosis.attribution_gaps(ctx)
    t_rescore = time.perf_counter()
    rescored, why_none = diagnosis.rescores(ctx, findings)
    t_end = time.perf_counter()
    ctx.store.save_attribution_gaps(run_id, [diagnosis.gap_record(g) for g in gaps], attempt_id=ctx.attempt_id)
    ctx.store.save_rescores(run_id, [diagnosis.rescore_record(r) for r in rescored], attempt_id=ctx.attempt_id)
    out = {
        "attribution_gaps": [{"group_kind": g.group_kind, "status": g.status,
                              "top": [f.feature for f in g.top(3)]} for g in gaps],
        "rescores": [{"key": f"{r.kind}:{r.metric}:{r.group or '*'}", "verdict": r.verdict, "status": r.status}
                     for r in rescored],
        "rescore_skipped": why_none,
        "split_seconds": {"attribution_gaps": round(t_rescore - t_gap, 3), "rescores": round(t_end - t_rescore, 3)},
    }
    ctx.artifacts.put_json(A_DIAGNOSE, out)
    return timed(ctx, "diagnose", t0, out)


def alert(ctx: RunContext) -> dict[str, Any]:
    """Enqueue one alert per (monitor, window, finding) in the outbox; send when notifying."""
    t0 = time.perf_counter()
    out = notify.send_alerts(ctx)
    ctx.artifacts.put_json(A_ALERT, out)
    return timed(ctx, "alert", t0, {k: v for k, v in out.items() if k != "messages"})


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
        return timed(ctx, "feu", t0, {"status": "skipped", "reason": reason})
    result = retrain.run_feu(ctx)
    n = records.save_feu(ctx, result)
    out = {"status": "done", "candidates": n, "selected": result.get("selected"), "requested": ctx.feu_requested,
           "recommendation": result.get("recommendation"),
           "front": [{k: c.get(k) for k in ("auc", "balanced_accuracy", "selection_rate", "dp", "gesd", "feasible",
                                             "selected", "registry_version")} for c in result.get("candidates", [])]}
    ctx.artifacts.put_json(A_FEU, {**out, "result": result})
    return timed(ctx, "feu", t0, out)


def followup(ctx: RunContext) -> dict[str, Any]:
    """Post the FEU candidates once: a threaded reply under the window's drift alert, or (FEU requested
    at a window without an alerted drift) a message of its own. Then bring the report up to date with
    the window's Slack messages and candidates (it was written before them)."""
    t0 = time.perf_counter()
    feu_out = ctx.artifacts.get_json(A_FEU)
    if feu_out.get("status") != "done":
        out: dict[str, Any] = {"status": "skipped"}
    else:
        out = notify.send_followup(ctx, feu_out["result"], requested=bool(feu_out.get("requested")))
    queued = int(ctx.artifacts.get_json(A_ALERT).get("queued", 0)) if ctx.artifacts.exists(A_ALERT) else 0
    if feu_out.get("status") == "done" or queued:
        out["report"] = _write_report(ctx)  # {"status", "path"}
    ctx.artifacts.put_json(A_FOLLOWUP, out)
    return timed(ctx, "followup", t0, {k: v for k, v in out.items() if k != "messages"})


def report(ctx: RunContext) -> dict[str, Any]:
    """The window's static HTML report (:func:`fairmon.report.write_report`), before the alert that
    links to it; the follow-up re-writes it once the window's messages and FEU candidates exist."""
    t0 = time.perf_counter()
    return timed(ctx, "report", t0, _write_report(ctx))


def _write_report(ctx: RunContext) -> dict[str, Any]:
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
    "diagnose": diagnose,
    "report": report,
    "alert": alert,
    "feu": feu,
    "followup": followup,
}
assert tuple(STEPS) == STEP_ORDER, "the step functions follow fairmon.pipeline.table"
