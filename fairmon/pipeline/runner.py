"""Run pipeline steps: one step (what an Airflow task does), one window, or many windows in order.

:func:`run_step` is the single entry the DAG tasks call; :func:`run_window` composes every step for the
CLI and the demo, so both run exactly the same code. A step that raises marks the window's run
``failed`` with the error text (a batch failing validation is ``data_invalid`` instead, set by the
validate step) and re-raises, so Airflow's retry policy and the CLI's exit code both see it. A step
after ``persist`` that fails keeps the stored results, and its successful retry restores the
persisted status (:func:`fairmon.pipeline.runs.mark_failed`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from fairmon._device import blas_threads, thread_settings
from fairmon._progress import track
from fairmon.config import MonitorSpec, load_spec
from fairmon.errors import AttemptSupersededError, ConfigError, DataValidationError, FairmonError
from fairmon.pipeline import runs
from fairmon.pipeline.artifacts import MissingArtifactError
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.frames import release_freed_memory, reuse_freed_memory
from fairmon.pipeline.steps import STEPS
from fairmon.pipeline.table import A_DRIFT, A_PERSIST, AFTER_PERSIST, STEP_ORDER
from fairmon.pipeline.table import step as step_row
from fairmon.store import open_store
from fairmon.store.records import RESULT_STATUSES, RunStatus
from fairmon.window import Window, window_for, window_from_interval, windows_between

log = logging.getLogger(__name__)

__all__ = [
    "run_step",
    "step_context",
    "run_window",
    "backfill",
    "feu_on_demand",
    "WindowOutcome",
    "ERR_UNKNOWN_STEP",
    "ERR_FEU_DISABLED",
]

ERR_UNKNOWN_STEP = "unknown pipeline step {step!r}; steps: {steps}"
ERR_FEU_DISABLED = (
    "monitor {monitor!r} ({source}): retraining.enabled is false; FEU candidates need "
    "retraining.enabled: true and retraining.training_data"
)


def _spec(spec: MonitorSpec | str | os.PathLike[str]) -> MonitorSpec:
    return spec if isinstance(spec, MonitorSpec) else load_spec(Path(spec))


def _record_failure(ctx: RunContext, step: str, exc: BaseException) -> None:
    """Best effort: the run row says ``failed`` with the error text (never zeros) — or, for a step after
    the alerts went out (FEU, its follow-up), the window keeps its status and ``details.unfinished`` says
    what failed (:func:`fairmon.pipeline.runs.record_unfinished`)."""
    error = f"{step}: {type(exc).__name__}: {exc}"
    try:
        if runs.record_unfinished(ctx, step=step, error=error):
            return
        runs.mark_failed(ctx, step=step, error=error, missing_artifact=isinstance(exc, MissingArtifactError))
    except AttemptSupersededError:
        log.warning("%s/%s: %s failed after a newer attempt took the window over; not recorded: %s",
                    ctx.monitor, ctx.window.key, step, exc)
    except Exception as inner:  # noqa: BLE001 - the original error matters more; log this one
        log.warning("could not record failure of %s/%s: %s", ctx.monitor, ctx.window.key, inner)


def step_context(
    step: str,
    spec: MonitorSpec | str | os.PathLike[str],
    window: dict[str, Any] | Window,
    *,
    db_url: str | None = None,
    slack_token: str | None = None,
    notify: bool = True,
    attempt: int = 1,
    source_url: str | None = None,
    feu: bool = False,
    take_over_monitor: bool = False,
) -> RunContext:
    """The :class:`RunContext` :func:`run_step` builds (parameters as there; a window dict's
    ``attempt_id`` binds it to that attempt, except for ``resolve_window``, which starts one)."""
    s = _spec(spec)
    attempt_id = None
    if isinstance(window, Window):
        w = window
    elif "start" in window and "end" in window:
        w = Window.from_dict({"monitor": s.name, **window})
        attempt_id = window.get("attempt_id") if step != "resolve_window" else None
    else:
        w = window_from_interval(s, window)
    return RunContext(
        s, w, db_url=db_url, notify=notify, slack_token=slack_token, attempt=attempt, source_url=source_url,
        feu_requested=feu, attempt_id=None if attempt_id is None else str(attempt_id),
        take_over_monitor=take_over_monitor,
    )


def run_step(
    step: str,
    spec: MonitorSpec | str | os.PathLike[str],
    window: dict[str, Any] | Window,
    *,
    db_url: str | None = None,
    slack_token: str | None = None,
    notify: bool = True,
    attempt: int = 1,
    source_url: str | None = None,
    feu: bool = False,
    context: RunContext | None = None,
    take_over_monitor: bool = False,
) -> dict[str, Any]:
    """Run one pipeline step for one window and return its small JSON result.

    Parameters
    ----------
    step : str
        One of :data:`fairmon.pipeline.steps.STEP_ORDER`.
    spec : MonitorSpec or path
        The monitor (a path is loaded; DAG tasks pass the spec file path).
    window : dict or Window
        For ``resolve_window``: ``{"data_interval_start", "data_interval_end"}`` (Airflow) or
        ``{"logical_date"}`` (CLI). For later steps: the dict ``resolve_window`` returned (its
        ``attempt_id`` ties the step to that attempt: a step of an attempt a newer one took over raises
        :class:`~fairmon.errors.AttemptSupersededError` and writes nothing).
    db_url, slack_token, notify, attempt, source_url
        See :class:`~fairmon.pipeline.context.RunContext`.
    feu : bool
        FEU requested at this window (``RunContext.feu_requested``; only the ``feu`` step reads it).
    take_over_monitor : bool
        ``resolve_window`` may take the monitor name over from another spec file (``RunContext``).

    Examples
    --------
    >>> run_step("resolve_window", "monitors/demo.yaml", {"logical_date": "2026-01-03"})  # doctest: +SKIP
    {'monitor': 'demo', 'start': '2026-01-03T00:00:00+00:00', 'end': '2026-01-04T00:00:00+00:00', ...}
    """
    if step not in STEPS:
        raise ConfigError(ERR_UNKNOWN_STEP.format(step=step, steps=", ".join(STEP_ORDER)))
    thread_settings()  # OpenMP settings of the batched explainers, before any step loads torch
    reuse_freed_memory()  # large temporaries reused within a step, not re-faulted chunk after chunk
    own = context is None
    ctx = context if context is not None else step_context(
        step, spec, window, db_url=db_url, notify=notify, slack_token=slack_token, attempt=attempt,
        source_url=source_url, feu=feu, take_over_monitor=take_over_monitor)
    try:
        if step != "resolve_window":
            if ctx.attempt_id is None:  # no attempt given: the one holding the window's run
                ctx.bind_current_attempt()
            runs.check_attempt(ctx)  # a newer attempt took the window over: stop, write nothing
            if step in AFTER_PERSIST:  # it may have waited in a queue: its own run time starts now
                runs.heartbeat(ctx)
        # heavy steps only: finding the BLAS libraries costs 0.01-0.04 CPU-s a call, a light task's whole work
        blas = ctx.spec.execution.blas_threads if step_row(step).heavy else None
        with track(f"{ctx.monitor} {ctx.window.key} {step}"), blas_threads(blas):
            result = STEPS[step](ctx)
        log.info("%s %s %s: %s", ctx.monitor, ctx.window.key, step, result)
        if step in AFTER_PERSIST:  # a retry that succeeded gives the run back its persisted status
            runs.clear_failure(ctx, step=step)
            runs.advance(ctx, step)
        elif step != "resolve_window":  # progress of a running window: it is not taken for stale
            runs.heartbeat(ctx)
        return result
    except DataValidationError:
        raise  # the validate step already marked the run data_invalid and sent the data alert
    except AttemptSupersededError:
        raise  # the newer attempt owns the run: nothing of this one is recorded
    except BaseException as exc:
        if step != "resolve_window" or ctx.attempt_id is not None:
            _record_failure(ctx, step, exc)
        # else no attempt began (e.g. the monitor name belongs to another spec file): the stored window
        # is not this run's to mark
        raise
    finally:
        if own:
            ctx.close()


@dataclass
class WindowOutcome:
    """What :func:`run_window` did: status, per-step results and the error (if any)."""

    monitor: str
    window: dict[str, str]
    status: str
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "window": self.window,
            "status": self.status,
            "error": self.error,
            "seconds": round(self.seconds, 3),
            "steps": self.steps,
        }


def run_window(
    spec: MonitorSpec | str | os.PathLike[str],
    logical_date: str | datetime | None = None,
    *,
    window: Window | None = None,
    db_url: str | None = None,
    notify: bool = True,
    slack_token: str | None = None,
    on_step: Callable[[str, dict[str, Any]], None] | None = None,
    raise_errors: bool = False,
    feu: bool = False,
    take_over_monitor: bool = False,
) -> WindowOutcome:
    """Run every step of one window in order (the CLI's ``fairmon run`` and the demo).

    Returns a :class:`WindowOutcome` with status ``succeeded`` / ``labels_pending`` (from persist),
    ``data_invalid`` (validation failed: nothing computed, one data alert) or ``failed`` (error text in
    ``error`` and in the store). With ``raise_errors`` a failure re-raises instead. ``feu`` requests FEU
    candidates at this window whatever the drift (see :func:`feu_on_demand`). ``take_over_monitor``
    lets this spec file take the monitor name over from the file that owns it (else refused).

    Examples
    --------
    >>> run_window("monitors/demo.yaml", "2026-01-03", db_url="postgresql://...")  # doctest: +SKIP
    WindowOutcome(monitor='demo', ..., status='succeeded', ...)
    """
    s = _spec(spec)
    window = _given_window(s, logical_date, window, who="run_window")
    ctx = RunContext(s, window, db_url=db_url, notify=notify, slack_token=slack_token, feu_requested=feu,
                     take_over_monitor=take_over_monitor)
    out = WindowOutcome(s.name, window.to_dict(), status="running")
    t0 = time.perf_counter()
    try:
        for step in STEP_ORDER:
            result = run_step(step, s, window, context=ctx)
            release_freed_memory()  # the next step starts from what is alive, not this step's peak
            out.steps[step] = result
            if on_step is not None:
                on_step(step, result)
        out.status = str(out.steps.get("persist", {}).get("status", "succeeded"))
    except DataValidationError as exc:
        out.status, out.error = "data_invalid", str(exc)
        if raise_errors:
            raise
    except FairmonError as exc:
        out.status, out.error = "failed", f"{type(exc).__name__}: {exc}"
        if raise_errors:
            raise
    except Exception as exc:
        out.status, out.error = "failed", f"{type(exc).__name__}: {exc}"
        if raise_errors:
            raise
        log.exception("window %s of %s failed", window.key, s.name)
    finally:
        out.seconds = time.perf_counter() - t0
        ctx.close()
    return out


def _given_window(spec: MonitorSpec, logical_date: str | datetime | None, window: Window | None, *, who: str) -> Window:
    """``window``, else the window of ``logical_date`` under the spec's schedule."""
    if window is not None:
        return window
    if logical_date is None:
        raise ConfigError(f"{who} needs a logical_date or a window")
    return window_for(spec, logical_date)


def backfill(
    spec: MonitorSpec | str | os.PathLike[str],
    start: str | datetime,
    end: str | datetime,
    *,
    db_url: str | None = None,
    notify: bool | None = None,
    slack_token: str | None = None,
    on_window: Callable[[WindowOutcome], None] | None = None,
    only_statuses: Sequence[str] | None = None,
    take_over_monitor: bool = False,
) -> list[WindowOutcome]:
    """Run the windows between ``start`` and ``end`` in order.

    Alerts: a backfilled window's findings are stored (``findings`` table, ``fairmon history``), but
    no alert is queued in the outbox or posted, so the next live run does not post old windows'
    alerts either. ``notify=True`` (``--notify``) — or, when ``notify`` is None, the spec's
    ``alerts.notify_backfill: true`` — treats each window like a live run: its alerts are queued in
    the outbox and posted when a Slack token is available (else they stay pending for the next run).

    A failed or invalid window does not stop the backfill: later windows run, and their drift decisions
    simply do not count it as history (only completed windows are history).

    ``only_statuses`` re-runs just the windows whose stored run has one of these statuses, e.g.
    ``("labels_pending",)`` once a monitor's late labels have arrived (re-running a window replaces
    its rows, so the label-based metrics are then computed), or ``("failed",)`` after an outage.
    ``take_over_monitor`` as in :func:`run_window`.
    """
    s = _spec(spec)
    send = bool(s.alerts.notify_backfill) if notify is None else bool(notify)
    windows = windows_between(s, start, end)
    if only_statuses is not None:
        windows = _windows_with_status(s, windows, only_statuses, db_url)
    outcomes: list[WindowOutcome] = []
    for w in windows:
        o = run_window(s, window=w, db_url=db_url, notify=send, slack_token=slack_token,
                       take_over_monitor=take_over_monitor)
        outcomes.append(o)
        if on_window is not None:
            on_window(o)
    return outcomes


def _windows_with_status(
    spec: MonitorSpec, windows: list[Window], statuses: Sequence[str], db_url: str | None
) -> list[Window]:
    """The windows among ``windows`` whose stored run has one of ``statuses``."""
    bad = sorted(set(statuses) - set(get_args(RunStatus)))
    if bad:
        raise ConfigError(f"unknown run status {bad[0]!r}; statuses: {', '.join(get_args(RunStatus))}")
    if not windows:
        return []
    store = open_store(db_url)
    try:
        runs = store.runs(spec.name, since=windows[0].start, until=windows[-1].end, statuses=list(statuses))
    finally:
        store.engine.dispose()
    keys = {(r.window_start, r.window_end) for r in runs}
    return [w for w in windows if (w.start, w.end) in keys]


#: steps that need only the window's stored run and its ``persist`` / ``drift`` artifacts (the
#: follow-up re-writes the window's report with the candidates)
FEU_STEPS: tuple[str, ...] = ("feu", "followup")


def _stored_window(ctx: RunContext) -> bool:
    """Whether this window's completed run and the artifacts FEU reads (``persist``, ``drift``) are there."""
    a = ctx.artifacts
    if not (a.exists(A_PERSIST) and a.exists(A_DRIFT)):
        return False
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    return (run is not None and run.status in RESULT_STATUSES
            and int(a.get_json(A_PERSIST)["run_id"]) == int(run.run_id or -1))


def feu_on_demand(
    spec: MonitorSpec | str | os.PathLike[str],
    logical_date: str | datetime | None = None,
    *,
    window: Window | None = None,
    db_url: str | None = None,
    notify: bool = True,
    slack_token: str | None = None,
    on_step: Callable[[str, dict[str, Any]], None] | None = None,
) -> WindowOutcome:
    """FEU retraining candidates for one window on demand (DESIGN §1), with or without drift.

    The candidates are stored under the window's run (``feu_candidates``, the selected one saved in
    the registry as a ``candidate``, never deployed) and posted once: in the thread of the window's
    drift alert when it has one, else as a message of their own; the window's report is rewritten with
    the Pareto front. ``notify=False`` stores them and posts nothing (as ``fairmon run --no-notify``).
    ``retraining.trigger: manual`` monitors get their candidates only this way (or with the DAG's
    ``feu`` param).

    When the window's completed run and its ``persist``/``drift`` artifacts are there, only the steps
    ``feu → followup`` run, and a failure leaves the stored window as it was. Otherwise (an
    old window whose artifacts are gone, or one never run) the window is recomputed through every step,
    as ``run_window(..., feu=True)``, with the usual re-run semantics (rows replaced, no alert sent twice).

    Raises :class:`~fairmon.errors.ConfigError` when the monitor has ``retraining.enabled: false``.

    Examples
    --------
    >>> feu_on_demand("monitors/demo.yaml", "2026-01-03", db_url="postgresql://...")  # doctest: +SKIP
    WindowOutcome(monitor='demo', ..., status='succeeded', steps={'feu': {'status': 'done', ...}, ...})
    """
    s = _spec(spec)
    if not s.retraining.enabled:
        raise ConfigError(ERR_FEU_DISABLED.format(monitor=s.name, source=s.source or "spec"))
    window = _given_window(s, logical_date, window, who="feu_on_demand")
    ctx = RunContext(s, window, db_url=db_url, notify=notify, slack_token=slack_token, feu_requested=True)
    try:
        ctx.bind_current_attempt()  # the artifacts of the attempt that stored the window
        if not _stored_window(ctx):
            log.info("%s %s: no stored run with its artifacts; recomputing the window", s.name, window.key)
            ctx.close()
            return run_window(s, window=window, db_url=db_url, notify=notify, slack_token=slack_token,
                              on_step=on_step, feu=True)
        out = WindowOutcome(s.name, window.to_dict(), status="running")
        t0 = time.perf_counter()
        for step in FEU_STEPS:  # not run_step: a failed request must not mark the stored window failed
            result = STEPS[step](ctx)
            runs.advance(ctx, step)  # clears a sweep's details.unfinished (a no-op on a complete window)
            out.steps[step] = result
            if on_step is not None:
                on_step(step, result)
        run = ctx.store.get_run(ctx.monitor, window.start, window.end)
        out.status = str(run.status) if run is not None else "succeeded"
        out.seconds = time.perf_counter() - t0
        return out
    finally:
        ctx.close()
