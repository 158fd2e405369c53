"""Pipeline-error notifications (a task crashed), kept apart from fairness alerts.

The DAG's ``on_failure_callback`` calls :func:`notify_pipeline_failure`: it always logs, and posts a
short plain-text Slack message to the platform channel (``FAIRMON_PIPELINE_SLACK_CHANNEL``, else
``FAIRMON_SLACK_CHANNEL``) when a token is configured. A batch that failed validation is *not* a
pipeline error — its data alert was already sent through the outbox — so it is only logged here.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from fairmon.config import ENV_PIPELINE_SLACK_CHANNEL as ENV_PIPELINE_CHANNEL
from fairmon.config import ENV_SLACK_CHANNEL, ENV_SLACK_TOKEN

__all__ = ["notify_pipeline_failure", "failure_text", "ENV_PIPELINE_CHANNEL"]

log = logging.getLogger(__name__)

_DATA_INVALID_MARK = "DataValidationError"


def failure_text(*, dag_id: str, task_id: str, run_id: str, error: Any) -> str:
    """One readable line-set for humans (the message body).

    >>> failure_text(dag_id="fairmon_demo", task_id="rumie", run_id="scheduled__2026-01-03", error="boom")
    ':rotating_light: fairmon pipeline error in fairmon_demo.rumie (run scheduled__2026-01-03): boom'
    """
    return f":rotating_light: fairmon pipeline error in {dag_id}.{task_id} (run {run_id}): {error}"


def notify_pipeline_failure(
    *,
    dag_id: str,
    task_id: str,
    run_id: str,
    error: Any,
    slack_token: str | None = None,
    channel: str | None = None,
) -> dict[str, Any]:
    """Log a task failure and post it to Slack when a token and channel are configured.

    Never raises (a failing failure-callback would hide the original error); returns what it did.
    """
    text = failure_text(dag_id=dag_id, task_id=task_id, run_id=run_id, error=error)
    if _DATA_INVALID_MARK in str(error) or type(error).__name__ == _DATA_INVALID_MARK:
        log.warning("%s (data alert already sent by the validate step)", text)
        return {"logged": True, "sent": False, "reason": "data_invalid"}
    log.error(text)
    token = slack_token or os.environ.get(ENV_SLACK_TOKEN)
    channel = channel or os.environ.get(ENV_PIPELINE_CHANNEL) or os.environ.get(ENV_SLACK_CHANNEL)
    if not token or not channel:
        return {"logged": True, "sent": False, "reason": "no slack token/channel"}
    try:
        from slack_sdk import WebClient

        kwargs: dict[str, Any] = {"token": token}
        base = os.environ.get("FAIRMON_SLACK_BASE_URL")
        if base:
            kwargs["base_url"] = base.rstrip("/") + "/"
        WebClient(**kwargs).chat_postMessage(channel=channel, text=text)
    except Exception as exc:  # noqa: BLE001 - never mask the task's own failure
        log.warning("could not post pipeline failure to Slack: %s", exc)
        return {"logged": True, "sent": False, "reason": f"slack error: {exc}"}
    return {"logged": True, "sent": True}
