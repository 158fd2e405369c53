"""Run-status bookkeeping of one window: the run row's status, error, timings and details.

Every status mark of a window goes through here (``running`` at the start, ``failed`` on an error,
``data_invalid`` on a batch failing validation, the persisted status restored after a step that
failed once succeeds); persist's own run row is built by :mod:`fairmon.pipeline.records`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairmon.alerts.outbox import withdraw_window
from fairmon.errors import AttemptSupersededError, FairmonError
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.failures import notify_pipeline_failure
from fairmon.pipeline.layout import task_of_step
from fairmon.pipeline.table import A_SNAPSHOT, STEP_ORDER, step_after
from fairmon.store import RunRecord
from fairmon.store.repository import ERR_SUPERSEDED

log = logging.getLogger(__name__)

__all__ = [
    "start_run",
    "check_attempt",
    "spec_owner_path",
    "heartbeat",
    "advance",
    "record_unfinished",
    "stale_after_s",
    "STALE_AFTER_TASK_TIMEOUTS",
    "mark_failed",
    "clear_failure",
    "mark_data_invalid",
    "record_alert_error",
    "timed",
    "timings",
    "model_version",
    "merged_details",
]

#: run details that describe one failure or its recovery: a later status mark replaces them
_FAILURE_KEYS = frozenset({"failed_step", "results_kept", "persisted_status", "recovered_step", "failed_attempt",
                           "missing_artifact"})
#: run details persist wrote about the stored results: a new attempt carries them while the rows stay
_RESULT_KEYS = frozenset({"prediction_source", "favorable_rate", "artifacts"})
#: longest error text a run row keeps
_MAX_ERROR = 4000


def timed(ctx: RunContext, name: str, started: float, result: dict[str, Any]) -> dict[str, Any]:
    """Record the step's wall time next to its result (persist collects them into ``runs.timings``)."""
    result = {**result, "seconds": round(time.perf_counter() - started, 3)}
    ctx.artifacts.put_json(f"step_{name}", result)
    return result


def timings(ctx: RunContext) -> dict[str, float]:
    """Wall seconds of every step of this window that has run (its ``step_<name>`` artifact)."""
    out: dict[str, float] = {}
    for step in STEP_ORDER:
        name = f"step_{step}"
        if ctx.artifacts.exists(name):
            out[step] = float(ctx.artifacts.get_json(name).get("seconds", 0.0))
    return out


def model_version(ctx: RunContext) -> str | None:
    """The model version pull_snapshot resolved for this window (None before it ran)."""
    if ctx.artifacts.exists(A_SNAPSHOT):
        return str(ctx.artifacts.get_json(A_SNAPSHOT)["version"])
    return None


def merged_details(ctx: RunContext, new: Mapping[str, Any]) -> dict[str, Any]:
    """The run's stored details with ``new`` on top.

    The store replaces a run's details on every mark, so a status mark built from scratch would erase
    what earlier steps of this run recorded (validation's failed expectations, persist's prediction
    source, a data alert's delivery error). :func:`start_run` resets the details at the start of a
    window's run (keeping what describes result rows an earlier attempt stored), so what is merged
    here always belongs to the current run; the bookkeeping of an earlier failure (``_FAILURE_KEYS``)
    is dropped rather than carried over — the store records again which rows the run holds.
    """
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    old = (run.details if run is not None else None) or {}
    return {**{k: v for k, v in old.items() if k not in _FAILURE_KEYS}, **new}


#: a ``running`` run with no progress for this many task timeouts is taken for crashed: the longest a
#: single (heavy) step may run under Airflow is 4 x ``execution.task_timeout_s`` (fairmon_airflow.dagspec)
STALE_AFTER_TASK_TIMEOUTS = 4


def stale_after_s(ctx: RunContext) -> float:
    """Seconds without progress after which a ``running`` run of this monitor, or a stored window whose
    later steps stopped, is failed as stale."""
    return float(STALE_AFTER_TASK_TIMEOUTS * ctx.spec.execution.task_timeout_s)


def heartbeat(ctx: RunContext) -> None:
    """Record that the window's run made progress (a step finished, or a step after persist started), so
    it is not swept as stale (the store touches only a running run or a stored one with steps left)."""
    run_id = ctx.run_id()
    if run_id is not None:
        ctx.store.heartbeat_run(run_id, ctx.attempt_id)


#: the last step the window's alerts depend on: a death before it ends fails the window as stale, a death
#: after it (FEU, its follow-up) only records the unfinished step (fairmon.store._liveness)
LAST_ALERTING_STEP = "alert"


def advance(ctx: RunContext, step: str) -> None:
    """``step`` (after persist) finished: record the step the stored window still has to run, or that it
    is complete (:meth:`~fairmon.store.Store.advance_run`). Persist wrote the first one; a process that
    dies before :data:`LAST_ALERTING_STEP` finished leaves it there and the monitor's next run fails the
    window as stale, instead of leaving it ``succeeded`` with its alerts never sent; one that dies in FEU
    or the follow-up leaves the window as it is, with ``details.unfinished`` saying what is missing."""
    run_id = ctx.run_id()
    if run_id is not None:
        nxt = step_after(step)
        later = nxt is not None and STEP_ORDER.index(nxt) > STEP_ORDER.index(LAST_ALERTING_STEP)
        ctx.store.advance_run(run_id, step, nxt, ctx.attempt_id, later=later)


def record_unfinished(ctx: RunContext, *, step: str, error: str) -> bool:
    """``step`` failed after the window's alerts went out (FEU, its follow-up): keep the window's status
    and record ``details.unfinished`` (:meth:`~fairmon.store.Store.record_unfinished`). Returns False —
    the caller marks the run failed — for any other step, or when the run does not hold ``step`` as its
    later step (a window that had not reached it)."""
    if STEP_ORDER.index(step) <= STEP_ORDER.index(LAST_ALERTING_STEP):
        return False
    run_id = ctx.run_id()
    if run_id is None:
        return False
    done = ctx.store.record_unfinished(run_id, step, error[:_MAX_ERROR], ctx.attempt_id)
    if done:
        log.warning("%s %s: %s failed after the window's alerts went out; its status stays: %s", ctx.monitor,
                    ctx.window.key, step, error)
    return done


def check_attempt(ctx: RunContext) -> None:
    """Raise :class:`AttemptSupersededError` when a newer attempt holds the window's run (this attempt's
    steps must stop: the newer one computes the window from its own artifacts)."""
    if ctx.attempt_id is None:
        return
    holder = ctx.store.current_attempt(ctx.monitor, ctx.window.start, ctx.window.end)
    if holder is not None and holder != ctx.attempt_id:
        raise AttemptSupersededError(ERR_SUPERSEDED.format(
            monitor=ctx.monitor, window=ctx.window.start.isoformat(), attempt=ctx.attempt_id, holder=holder))


def spec_owner_path(ctx: RunContext) -> str | None:
    """The spec file that claims the monitor name (absolute), None for a spec not read from a file."""
    source = ctx.spec.source
    if source is None or not Path(source).is_file():
        return None
    return str(Path(source).resolve())


def report_stale(ctx: RunContext, stale: RunRecord) -> None:
    """Log a window the sweep found stale and post it as a pipeline error: a process killed outright (an
    OOM kill, SIGKILL) left no failure of its own — Airflow runs no failure callback for it — so without
    this nobody is told (an on-call tryout, session 24). Posted to the platform channel
    (:func:`fairmon.pipeline.failures.notify_pipeline_failure`) unless this run does not notify."""
    d = stale.details or {}
    unfinished = d.get("unfinished") if isinstance(d.get("unfinished"), Mapping) else None
    error = stale.error if unfinished is None else str(unfinished.get("error"))
    step = d.get("failed_step") or (unfinished or {}).get("step")
    task = task_of_step(ctx.spec.execution.layout).get(str(step), str(step)) if step else "(window)"
    log.warning("%s: window %s found stale (%s): %s", ctx.monitor, stale.window_start.isoformat(), stale.status,
                error)
    if ctx.notify:
        notify_pipeline_failure(dag_id=f"fairmon_{ctx.monitor}", task_id=task,
                                run_id=f"window {stale.window_start:%Y-%m-%dT%H:%MZ}", error=error,
                                slack_token=ctx.token())


def start_run(ctx: RunContext) -> tuple[int, str | None]:
    """Claim the monitor name for the spec file (refused when another file owns it, unless
    ``ctx.take_over_monitor``), register the monitor (spec + fingerprint), fail its stale runs
    (``running``, or stored with steps left: a crashed worker or a database that went away mid-write
    left them), and start a new attempt
    of the window (``running``, held by the attempt; ``ctx`` is bound to it). Returns ``(run_id,
    previous attempt id)``: the attempt taken over, which may still be running."""
    spec = ctx.spec
    path = spec_owner_path(ctx)
    if path is not None:
        previous_owner = ctx.store.claim_monitor(spec.name, path, take_over=ctx.take_over_monitor)
        if previous_owner is not None and previous_owner != path:
            log.warning("monitor %s taken over by %s (was %s)", spec.name, path, previous_owner)
    for stale in ctx.store.fail_stale_runs(spec.name, stale_after_s(ctx)):
        report_stale(ctx, stale)
    ctx.store.upsert_monitor(
        spec.name,
        owner=spec.identity.owner,
        tags=list(spec.identity.tags),
        spec=spec.model_dump(mode="json", by_alias=True),
        spec_fingerprint=spec.fingerprint,
    )
    # rows an earlier attempt wrote stay until replaced: the store marks them and carries persist's
    # description of them (prediction source, ...) into this attempt's details
    run_id, attempt_id, previous = ctx.store.begin_attempt(
        spec.name, ctx.window.start, ctx.window.end, spec_fingerprint=spec.fingerprint,
        details={"attempt": ctx.attempt}, carry=sorted(_RESULT_KEYS),
    )
    ctx.bind_attempt(attempt_id)
    # what an earlier attempt of this window queued and never sent is withdrawn: this attempt queues what
    # it still finds (a re-run after a data fix sent "data validation failed" for a window now fine)
    withdraw_window(ctx.store, spec.name, ctx.window.start)
    if previous is not None:
        log.info("%s %s: attempt %s takes the window over from attempt %s", spec.name, ctx.window.key,
                 attempt_id, previous)
    return int(run_id), previous


def mark_failed(ctx: RunContext, *, step: str, error: str, missing_artifact: bool = False) -> int:
    """The window failed at ``step``: status ``failed`` with the error text, never zeros.

    Result rows the window holds stay — whether this attempt's ``persist`` wrote them (a step after it
    failed: drift, diagnose, report, alert, FEU, follow-up) or an earlier attempt did (a re-run failed
    before ``persist``, or on a missing artifact, ``details.missing_artifact``): a Slack outage or a
    source that timed out says nothing against a computed window. The store marks them
    (``details.results_kept``, ``details.persisted_status``); a later successful attempt of a step after
    persist restores the persisted status (:func:`clear_failure`), a successful ``persist`` replaces
    the rows. What earlier steps of this run put in the details (failed expectations, ...) is kept.
    The mark is this attempt's: refused when a newer attempt holds the run.
    """
    details: dict[str, Any] = {"failed_step": step, "attempt": ctx.attempt}
    if missing_artifact:
        details["missing_artifact"] = True
    try:
        steps_s, version = timings(ctx), model_version(ctx)
    except (FairmonError, OSError) as exc:  # the failure being recorded may be the artifact location's
        log.warning("%s %s: recording the failure without step timings (artifacts unreadable: %s)",
                    ctx.monitor, ctx.window.key, exc)
        steps_s, version = {}, None
    return int(
        ctx.store.mark_run(
            ctx.monitor,
            ctx.window.start,
            ctx.window.end,
            "failed",
            error=error[:_MAX_ERROR],
            model_version=version,
            spec_fingerprint=ctx.spec.fingerprint,
            timings=steps_s,
            details=merged_details(ctx, details),
            attempt_id=ctx.attempt_id,
        )
    )


def clear_failure(ctx: RunContext, *, step: str) -> bool:
    """``step`` (after persist) succeeded: if the run is ``failed`` at this very step with its results
    kept, restore the status persist wrote and clear the error. Returns whether it restored."""
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    if run is None or run.status != "failed":
        return False
    d = run.details or {}
    if d.get("failed_step") != step or not d.get("results_kept"):
        return False
    ctx.store.mark_run(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        d.get("persisted_status", "succeeded"),
        error=None,
        timings=timings(ctx),
        details=merged_details(
            ctx, {"attempt": ctx.attempt, "recovered_step": step, "failed_attempt": d.get("attempt")}
        ),
        attempt_id=ctx.attempt_id,
    )
    log.info("%s %s: %s succeeded on attempt %s; status restored", ctx.monitor, ctx.window.key, step, ctx.attempt)
    return True


def mark_data_invalid(
    ctx: RunContext, *, failed: list[dict[str, Any]], n_rows: int, alert_delivery_error: str | None = None
) -> int:
    """The batch failed validation: status ``data_invalid`` with the failed expectations in details
    (and ``alert_delivery_error`` when the data alert could not be sent: the window stays
    ``data_invalid`` whatever Slack says)."""
    details: dict[str, Any] = {"failed_expectations": failed, "attempt": ctx.attempt}
    if alert_delivery_error is not None:
        details["alert_delivery_error"] = alert_delivery_error
    names = sorted({str(f.get("expectation_type") or f.get("type") or "?") for f in failed})
    return int(
        ctx.store.mark_run(
            ctx.monitor,
            ctx.window.start,
            ctx.window.end,
            "data_invalid",
            error=f"{len(failed)} expectation(s) failed: {', '.join(names)}",
            model_version=model_version(ctx),
            spec_fingerprint=ctx.spec.fingerprint,
            n_rows=n_rows,
            timings=timings(ctx),
            details=merged_details(ctx, details),
            attempt_id=ctx.attempt_id,
        )
    )


def record_alert_error(ctx: RunContext, error: str) -> None:
    """The window's fairness alert could not be delivered (Slack refused its configuration): keep the
    run's status (the window is computed) and record the error in ``details.alert_delivery_error``."""
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    if run is None:
        return
    ctx.store.mark_run(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        run.status,
        error=run.error,
        timings=timings(ctx),
        details=merged_details(ctx, {"alert_delivery_error": error}),
        attempt_id=ctx.attempt_id,
    )
