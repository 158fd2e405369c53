"""The failure callback's notification: DAG, task, window, try and log URL, through fairmon's sender."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException

from fairmon.errors import DataValidationError
from fairmon_airflow import failure
from fairmon_airflow.failure import FAILURE_EVENT_TYPE, failure_report, notify_failure, on_failure

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "alerts"))  # the fake Slack of the alert tests
from slack_server import SlackTestServer  # noqa: E402

LOG_URL = "http://airflow.example:8080/dags/fairmon_demo/runs/scheduled__2026-01-03/tasks/rumie?try_number=2"


def _context(exception: BaseException) -> dict[str, Any]:
    ti = SimpleNamespace(dag_id="fairmon_demo", task_id="rumie", try_number=2, log_url=LOG_URL)
    run = SimpleNamespace(run_id="scheduled__2026-01-03T00:00:00+00:00", conf={}, run_type="scheduled")
    return {"ti": ti, "dag_run": run, "exception": exception,
            "data_interval_start": "2026-01-03T00:00:00+00:00", "data_interval_end": "2026-01-04T00:00:00+00:00"}


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlackTestServer]:
    with SlackTestServer() as srv:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", srv.base_url)
        monkeypatch.setenv("FAIRMON_SLACK_TOKEN", srv.token)
        monkeypatch.setenv("FAIRMON_PIPELINE_SLACK_CHANNEL", "#oncall")
        monkeypatch.setattr(failure, "slack_token", lambda: srv.token)  # no Airflow connection lookup
        yield srv


def test_the_callback_posts_dag_task_window_try_and_log_url(slack: SlackTestServer) -> None:
    on_failure(_context(RuntimeError("CUDA out of memory")))
    [msg] = slack.posted("#oncall")
    for part in ("fairmon_demo.rumie", "scheduled__2026-01-03T00:00:00+00:00", "CUDA out of memory",
                 "window 2026-01-03T00:00:00+00:00 → 2026-01-04T00:00:00+00:00", "try 2", f"log: {LOG_URL}"):
        assert part in msg["text"], part
    assert LOG_URL in str(msg["blocks"])
    assert msg["metadata"]["event_type"] == FAILURE_EVENT_TYPE


def test_a_manual_window_is_named_by_its_logical_date(slack: SlackTestServer) -> None:
    ctx = _context(RuntimeError("boom"))
    ctx["dag_run"].conf = {"logical_date": "2026-01-08"}
    assert notify_failure(failure_report(ctx), token=slack.token)["sent"] is True
    assert "window logical_date 2026-01-08" in slack.posted("#oncall")[0]["text"]
    # once resolve_window ran, the message names the window it computed (an on-call tryout, session 24)
    window = {"start": "2026-01-08T00:00:00+00:00", "end": "2026-01-09T00:00:00+00:00"}
    ctx["ti"].xcom_pull = lambda task_ids: window if task_ids == "resolve_window" else None
    assert notify_failure(failure_report(ctx), token=slack.token)["sent"] is True
    assert ("window 2026-01-08T00:00:00+00:00 → 2026-01-09T00:00:00+00:00 (logical_date 2026-01-08)"
            in slack.posted("#oncall")[1]["text"])


@pytest.mark.parametrize("exc", [AirflowFailException("DataValidationError: 2 expectations failed"),
                                 DataValidationError("2 expectations failed")])
def test_failed_validation_is_logged_not_posted(slack: SlackTestServer, exc: BaseException) -> None:
    did = notify_failure(failure_report(_context(exc)), token=slack.token)
    assert did == {"logged": True, "sent": False, "reason": "data_invalid"}
    assert slack.posted() == []


def test_without_a_token_it_only_logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRMON_PIPELINE_SLACK_CHANNEL", "#oncall")
    did = notify_failure(failure_report(_context(RuntimeError("boom"))), token=None)
    assert did["sent"] is False and did["reason"] == "no slack token/channel"
    assert LOG_URL in caplog.text


def test_a_slack_error_never_masks_the_task_failure(slack: SlackTestServer) -> None:
    slack.fail_next("invalid_auth", method="chat.postMessage")
    did = notify_failure(failure_report(_context(RuntimeError("boom"))), token=slack.token)
    assert did["sent"] is False and "invalid_auth" in did["reason"]


def test_a_long_error_is_cut_but_keeps_the_log_url(slack: SlackTestServer) -> None:
    notify_failure(failure_report(_context(RuntimeError("x" * 5000))), token=slack.token)
    [msg] = slack.posted("#oncall")
    block_text = msg["blocks"][0]["text"]["text"]
    assert len(block_text) <= 3000 and block_text.endswith(f"log: {LOG_URL}")


def test_the_deadline_callback_logs_a_pipeline_error_without_slack(caplog) -> None:  # type: ignore[no-untyped-def]
    import asyncio
    import logging

    from fairmon_airflow.failure import on_deadline_missed

    with caplog.at_level(logging.ERROR, logger="fairmon_airflow.failure"):
        asyncio.run(on_deadline_missed(dag_id="fairmon_demo", deadline_s=5400))
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "fairmon_demo" in text and "DeadlineMissed" in text and "5400 s" in text
