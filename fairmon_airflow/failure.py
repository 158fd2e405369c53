"""The DAG's ``on_failure_callback``: a pipeline-error notification, kept apart from fairness alerts.

It always logs, and posts to the platform channel (``FAIRMON_PIPELINE_SLACK_CHANNEL``, else
``FAIRMON_SLACK_CHANNEL``) when a token is configured, through fairmon's own
:class:`~fairmon.alerts.SlackSender` (its retries, its base URL, a token that is never logged). The
message names the DAG, task, run, window, try number and the task's log URL, so the on-call engineer
lands on the failing try's log in one click. A batch that failed validation is *not* a pipeline error
(its data alert already went out through the outbox): it is only logged.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fairmon.config import ENV_PIPELINE_SLACK_CHANNEL, ENV_SLACK_CHANNEL
from fairmon.errors import DataValidationError
from fairmon_airflow.connections import slack_token
from fairmon_airflow.context import try_number, window_text

if TYPE_CHECKING:
    from fairmon.alerts import SlackMessage

__all__ = [
    "FailureReport",
    "failure_report",
    "notify_failure",
    "on_failure",
    "on_deadline_missed",
    "FAILURE_EVENT_TYPE",
]

log = logging.getLogger(__name__)

#: Slack message metadata type of pipeline errors (fairness alerts use ``fairmon.alerts.EVENT_TYPE``)
FAILURE_EVENT_TYPE = "fairmon_pipeline_error"
_DATA_INVALID = DataValidationError.__name__
#: Slack's limit for a section block's text
_SECTION_LIMIT = 3000


@dataclass(frozen=True)
class FailureReport:
    """What failed, where, on which try, and where its log is."""

    dag_id: str
    task_id: str
    run_id: str
    window: str
    try_number: int
    log_url: str
    error: str

    @property
    def data_invalid(self) -> bool:
        """A batch that failed validation (already alerted by the validate step)."""
        return _DATA_INVALID in self.error

    @property
    def text(self) -> str:
        """The message body.

        Examples
        --------
        >>> r = FailureReport("fairmon_demo", "rumie", "scheduled__2026-01-03", "2026-01-03 → 2026-01-04",
        ...                   2, "http://airflow:8080/dags/fairmon_demo/runs/r/tasks/rumie?try_number=2", "boom")
        >>> print(r.text)
        :rotating_light: fairmon pipeline error in fairmon_demo.rumie (run scheduled__2026-01-03): boom
        window 2026-01-03 → 2026-01-04 · try 2
        log: http://airflow:8080/dags/fairmon_demo/runs/r/tasks/rumie?try_number=2
        """
        return (
            f":rotating_light: fairmon pipeline error in {self.dag_id}.{self.task_id} (run {self.run_id}): "
            f"{self.error}\nwindow {self.window} · try {self.try_number}\nlog: {self.log_url}"
        )

    def message(self) -> SlackMessage:
        """The Slack message (plain text plus one section; long errors cut to Slack's block limit)."""
        from fairmon.alerts import SlackMessage  # in the callback only: fairmon.alerts loads pandas

        body = self.text
        if len(body) > _SECTION_LIMIT:
            head = f"\nwindow {self.window} · try {self.try_number}\nlog: {self.log_url}"
            body = body[: _SECTION_LIMIT - len(head) - 1] + "…" + head
        payload = {"dag_id": self.dag_id, "task_id": self.task_id, "run_id": self.run_id,
                   "try_number": self.try_number}
        return SlackMessage(
            text=body,
            blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": body}}],
            metadata={"event_type": FAILURE_EVENT_TYPE, "event_payload": payload},
            fingerprint=f"{self.dag_id}.{self.task_id}.{self.run_id}.{self.try_number}",
        )


def _error_text(error: Any) -> str:
    # AirflowFailException texts already start with the FairmonError's type (retry.ERR_FAIL_FAST)
    if isinstance(error, DataValidationError):
        return f"{_DATA_INVALID}: {error}"
    return str(error)


def failure_report(context: Mapping[str, Any]) -> FailureReport:
    """Read the failure from an Airflow callback context (duck-typed; ``?`` for what is missing).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> ti = NS(dag_id="fairmon_demo", task_id="persist", try_number=1, log_url="http://af/log")
    >>> r = failure_report({"ti": ti, "dag_run": NS(run_id="manual__1", conf={"logical_date": "2026-01-03"}),
    ...                     "exception": RuntimeError("db down")})
    >>> r.window, r.try_number, r.log_url, r.error
    ('logical_date 2026-01-03', 1, 'http://af/log', 'db down')
    """
    ti, dag_run = context.get("ti"), context.get("dag_run")
    return FailureReport(
        dag_id=str(getattr(ti, "dag_id", "?")),
        task_id=str(getattr(ti, "task_id", "?")),
        run_id=str(getattr(dag_run, "run_id", "?")),
        window=window_text(context),
        try_number=try_number(context),
        log_url=str(getattr(ti, "log_url", "") or "?"),
        error=_error_text(context.get("exception")),
    )


def notify_failure(
    report: FailureReport, *, token: str | None, channel: str | None = None, base_url: str | None = None
) -> dict[str, Any]:
    """Log ``report`` and post it when a token and channel are configured; returns what it did.

    Never raises: a failing failure-callback would hide the task's own error.
    """
    if report.data_invalid:
        log.warning("%s (data alert already sent by the validate step)", report.text)
        return {"logged": True, "sent": False, "reason": "data_invalid"}
    log.error(report.text)
    channel = channel or os.environ.get(ENV_PIPELINE_SLACK_CHANNEL) or os.environ.get(ENV_SLACK_CHANNEL)
    if not token or not channel:
        return {"logged": True, "sent": False, "reason": "no slack token/channel"}
    from fairmon.alerts import SlackSender  # in the callback only: parse time must not load pandas

    try:
        ts = SlackSender(token, base_url=base_url).post(channel, report.message())
    except Exception as exc:  # noqa: BLE001 - never mask the task's own failure
        log.warning("could not post pipeline failure to Slack: %s", exc)
        return {"logged": True, "sent": False, "reason": f"slack error: {exc}"}
    return {"logged": True, "sent": True, "ts": ts}


async def on_deadline_missed(dag_id: str = "?", deadline_s: int = 0, **context: Any) -> None:
    """``DeadlineAlert`` callback (runs in the triggerer): a window's run has not *succeeded*
    ``deadline_s`` seconds after it was queued. Logged and posted like a pipeline error (never raises).

    Airflow 3.3.2 removes a run's deadline only when the run succeeds and hands this callback no run
    id, so a run that already failed (and paged through its task's failure callback) is paged again
    here; the text says so rather than claiming the run is still going."""
    dag_run = context.get("dag_run") if isinstance(context.get("dag_run"), Mapping) else {}
    run_id = str((dag_run or {}).get("run_id", "?")) if isinstance(dag_run, Mapping) else "?"
    report = FailureReport(
        dag_id=dag_id, task_id="(run)", run_id=run_id, window=window_text(context), try_number=1, log_url="?",
        error=f"DeadlineMissed: a run of {dag_id} has not succeeded {deadline_s} s after it was queued "
        "(execution.deadline_s): it is still running, or it failed earlier (then its task's failure "
        "message came first; Airflow does not say which run)",
    )
    await asyncio.to_thread(notify_failure, report, token=slack_token())


def on_failure(context: Mapping[str, Any]) -> None:
    """``on_failure_callback`` of every fairmon task."""
    notify_failure(failure_report(context), token=slack_token())
