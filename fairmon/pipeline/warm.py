"""Several steps of one window in one process (the warm layout's tasks, :mod:`fairmon.pipeline.layout`).

:func:`run_steps` runs the steps in order through :func:`~fairmon.pipeline.runner.run_step` with one
shared :class:`~fairmon.pipeline.context.RunContext`, so the spec, the store engine and whatever the
steps keep in the process (the model, torch, the explainers, encodings) are loaded once, while each
step keeps its own semantics: the attempt check before it (a step of an attempt a newer one took over
raises :class:`~fairmon.errors.AttemptSupersededError` and writes nothing), its progress heartbeat,
and the run marked ``failed`` with the failing step's name. A retry of the task runs every step of it
again: steps are idempotent (an attempt's artifacts are overwritten, stored rows replaced).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from fairmon.config import MonitorSpec
from fairmon.errors import ConfigError
from fairmon.pipeline.frames import release_freed_memory
from fairmon.pipeline.runner import run_step, step_context
from fairmon.pipeline.table import STEP_ORDER
from fairmon.report import charts
from fairmon.report.charts._gap import attribution_gap_chart
from fairmon.report.data import TrendPoint
from fairmon.report.render import compiled_template
from fairmon.store import MetricRecord
from fairmon.validation import build_suite, validate
from fairmon.window import Window

__all__ = ["run_steps", "warm_up", "ERR_NO_STEPS", "ERR_STEP_ORDER", "ERR_RESOLVE_ALONE"]

ERR_NO_STEPS = "run_steps needs at least one step"
ERR_STEP_ORDER = "steps {steps} are not distinct steps in the pipeline's order ({order})"
ERR_RESOLVE_ALONE = "resolve_window starts the attempt the other steps belong to; run it on its own"
_RESOLVE = "resolve_window"


def _checked(steps: Sequence[str]) -> tuple[str, ...]:
    names = tuple(steps)
    if not names:
        raise ConfigError(ERR_NO_STEPS)
    if _RESOLVE in names:
        raise ConfigError(ERR_RESOLVE_ALONE)
    known = [n for n in names if n in STEP_ORDER]
    positions = [STEP_ORDER.index(n) for n in known]
    if len(known) != len(names) or positions != sorted(set(positions)):
        raise ConfigError(ERR_STEP_ORDER.format(steps=list(names), order=", ".join(STEP_ORDER)))
    return names


def run_steps(
    steps: Sequence[str],
    spec: MonitorSpec | str | os.PathLike[str],
    window: dict[str, Any] | Window,
    *,
    db_url: str | None = None,
    slack_token: str | None = None,
    notify: bool = True,
    attempt: int = 1,
    source_url: str | None = None,
    feu: bool = False,
) -> dict[str, Any]:
    """Run ``steps`` of one window in this process, in order; returns each step's small result.

    Parameters
    ----------
    steps : sequence of str
        Distinct steps in the order of :data:`~fairmon.pipeline.table.STEP_ORDER`, not
        ``resolve_window`` (it starts the attempt the others belong to).
    spec, window, db_url, slack_token, notify, attempt, source_url, feu
        As :func:`~fairmon.pipeline.runner.run_step`; ``window`` is ``resolve_window``'s dict (its
        ``attempt_id`` ties every step to that attempt).

    Returns
    -------
    dict
        ``{"steps": {step: result}, "seconds": {step: wall seconds}}``. The first step that raises
        stops the run: the window is marked ``failed`` naming that step (or ``data_invalid`` by the
        validate step), and the error propagates for the scheduler's retry policy.

    Raises
    ------
    ConfigError
        For an empty list, ``resolve_window``, an unknown step or steps out of order.

    Examples
    --------
    >>> run_steps(["predict", "outcome", "rumie", "explain"], "monitors/demo.yaml",
    ...           {"start": "2026-01-03T00:00:00+00:00", "end": "2026-01-04T00:00:00+00:00",
    ...            "attempt_id": "a1"})  # doctest: +SKIP
    {'steps': {'predict': {...}, 'outcome': {...}, 'rumie': {...}, 'explain': {...}}, 'seconds': {...}}
    >>> run_steps(["rumie", "predict"], "monitors/demo.yaml", {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairmon.errors.ConfigError: steps ['rumie', 'predict'] are not distinct steps in the pipeline's order (...)
    """
    names = _checked(steps)
    ctx = step_context(names[0], spec, window, db_url=db_url, notify=notify, slack_token=slack_token,
                       attempt=attempt, source_url=source_url, feu=feu)
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    try:
        for name in names:
            t0 = time.perf_counter()
            results[name] = run_step(name, ctx.spec, ctx.window, context=ctx)
            seconds[name] = round(time.perf_counter() - t0, 3)
            release_freed_memory()  # as run_window: the next step starts from what is alive, not this peak
    finally:
        ctx.close()
    return {"steps": results, "seconds": seconds}


def warm_up(random_state: int = 0) -> dict[str, float]:
    """Pay, once, the first-use costs a fresh process pays in a window's steps; returns seconds by part.

    What a process that forks task processes (a Celery worker, :mod:`fairmon_airflow.preload`) calls
    before forking: Great Expectations' ephemeral context, data source and expectation classes are
    built by validating a tiny synthetic frame (0.45 CPU-s of every ``validate`` task otherwise); the
    report's template is compiled and one small chart of each kind drawn (matplotlib's fonts and text
    caches). No
    thread pool, database connection or CUDA context is created, and no torch operation runs (an
    OpenMP pool started before a fork is not usable in the child).

    Examples
    --------
    >>> sorted(warm_up())
    ['report', 'validation']
    """
    took: dict[str, float] = {}
    t0 = time.perf_counter()
    rng = np.random.default_rng(random_state)
    n = 200
    frame = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b"], size=n),
                          "y": rng.integers(0, 2, size=n)})
    suite = build_suite(frame, features=["x", "g"], sensitive=["g"], label="y", min_rows=10, name="warm_up")
    validate(frame, suite)
    took["validation"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    _warm_report()
    took["report"] = round(time.perf_counter() - t0, 3)
    return took


def _warm_report() -> None:
    """The report's first-use costs: its jinja2 template compiled, and one small picture of each kind
    drawn (matplotlib's fonts, glyph and text caches, the Agg canvas, PIL's PNG encoder)."""
    compiled_template()
    charts.outcome_chart([MetricRecord("selection_rate", 0.4, attribute="a", group="x", ci_low=0.3, ci_high=0.5)])
    charts.gesd_chart([charts.GroupStabilityRow("a=x", 0.8, std=0.1, size=3, instances=(0.7, 0.8, 0.9))])
    charts.tree_chart({"root": {"split": {"column": "a", "threshold": 1.5, "left": "<=", "right": ">"},
                                "left": {"leaf": 1, "size": 2, "fraction": 0.5, "p_fav": 0.2, "in_group": True},
                                "right": {"leaf": 2, "size": 2, "fraction": 0.5, "p_fav": 0.6}}})
    charts.trend_chart([TrendPoint(datetime(2026, 1, 1, tzinfo=UTC), "succeeded", "1",
                                   dp_difference={"a": (0.1, 0.05, 0.15)}, gesd={"a": 0.02})])
    attribution_gap_chart([{"feature": "x", "difference": -0.1, "ci_low": -0.12, "ci_high": -0.08}])
