"""The body of every fairmon task: one :func:`fairmon.pipeline.run_step` call under the retry policy.

Runs inside task processes only. :mod:`fairmon.pipeline` loads its runner on first attribute access,
so importing this module at parse time stays light; the step itself resolves the connections, reads
the run's params and maps errors to Airflow outcomes.
"""

from __future__ import annotations

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

__all__ = ["run_task"]

#: steps that query the SQL source (the pull, the validation's SQL expectations, the outcome push-down):
#: they get the Airflow connection's URL
_SQL_STEPS = frozenset({"pull_data", "validate", "outcome"})
_FEU_STEP = "feu"


def run_task(step: str, spec_path: str, window: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run ``step`` of the monitor at ``spec_path`` for the task's run; returns the step's small dict.

    ``window``: the resolve_window task's output; None reads it from that task's XCom
    (resolve_window itself reads the run's data interval or trigger conf, never ``now()``).
    Third-party INFO chatter (Great Expectations' ~150 lines per validate) is kept out of the task
    log, as in the CLI.
    """
    context = get_current_context()
    quiet_third_party()
    if window is None:
        window = window_of(context) if step == RESOLVE_TASK_ID else resolved_window(context)
    result: dict[str, Any]
    with retry_policy():
        result = pipeline.run_step(
            step,
            spec_path,
            window,
            db_url=db_url(),
            slack_token=slack_token(),
            notify=notify_of(context),
            attempt=try_number(context),
            source_url=source_url(spec_path) if step in _SQL_STEPS else None,
            feu=step == _FEU_STEP and feu_requested(context),
        )
    return result
