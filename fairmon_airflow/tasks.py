"""The body of every fairmon task: :func:`fairmon.pipeline.run_step` (one step) or
:func:`fairmon.pipeline.run_steps` (a warm task's steps, in one process) under the retry policy.

Runs inside task processes only. :mod:`fairmon.pipeline` loads its runner on first attribute access,
so importing this module at parse time stays light; the step itself resolves the connections, reads
the run's params and maps errors to Airflow outcomes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from airflow.sdk import get_current_context

import fairmon.pipeline as pipeline
from fairmon._logs import quiet_third_party
from fairmon_airflow.connections import db_url, slack_token, source_url
from fairmon_airflow.context import (
    RESOLVE_TASK_ID,
    feu_requested,
    notify_of,
    resolved_window,
    try_number,
    window_of,
)
from fairmon_airflow.retry import retry_policy

__all__ = ["run_task", "CPU_LINE"]

log = logging.getLogger(__name__)

#: the task log's CPU line: the task process's CPU seconds before its steps began (the task runner's
#: start-up since the fork: DAG file, context) and in its steps (benchmarks/fleet reads it)
CPU_LINE = "fairmon task cpu: %.3f s before the steps, %.3f s in %s"

#: steps that query the SQL source (the pull, the validation's SQL expectations, the outcome push-down):
#: they get the Airflow connection's URL
_SQL_STEPS = frozenset({"pull_data", "validate", "outcome"})
_FEU_STEP = "feu"
#: steps that may post to Slack (resolve_window's page about a window its sweep found stale, the data
#: alert of pull_data / validate, the alert, the FEU follow-up): only they look the ``fairmon_slack``
#: connection up (one API-server request per task otherwise); an alert another step queued without a
#: token stays pending in the outbox for the next sender
_SLACK_STEPS = frozenset({"resolve_window", "pull_data", "validate", "alert", "followup"})


def run_task(step: str | Sequence[str], spec_path: str, window: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``step`` of the monitor at ``spec_path`` for the task's run; returns the step's small dict.

    ``step``: one step name, or the steps of a warm task (:mod:`fairmon.pipeline.layout`), run in
    order in this process by :func:`fairmon.pipeline.run_steps`.

    ``window``: the resolve_window task's output; None reads it from that task's XCom
    (resolve_window itself reads the run's data interval or trigger conf, never ``now()``).
    Third-party INFO chatter (Great Expectations' ~150 lines per validate) is kept out of the task
    log, as in the CLI.
    """
    cpu0 = time.process_time()  # this task process's CPU since the fork (or the exec)
    context = get_current_context()
    quiet_third_party()
    if window is None:
        window = window_of(context) if step == RESOLVE_TASK_ID else resolved_window(context)
    steps = (step,) if isinstance(step, str) else tuple(step)
    kwargs: dict[str, Any] = {
        "db_url": db_url(),
        "slack_token": slack_token() if _SLACK_STEPS.intersection(steps) else None,
        "notify": notify_of(context),
        "attempt": try_number(context),
        "source_url": source_url(spec_path) if _SQL_STEPS.intersection(steps) else None,
        "feu": _FEU_STEP in steps and feu_requested(context),
    }
    result: dict[str, Any]
    with retry_policy():
        if isinstance(step, str):
            result = pipeline.run_step(step, spec_path, window, **kwargs)
        else:
            result = pipeline.run_steps(steps, spec_path, window, **kwargs)
    log.info(CPU_LINE, cpu0, time.process_time() - cpu0, ",".join(steps))
    return result
