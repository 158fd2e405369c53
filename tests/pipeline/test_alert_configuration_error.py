"""A Slack configuration error on the fairness-alert path (issue 15, item 8).

Slack refusing the token or the channel says nothing about the window: it stays ``succeeded`` with its
results, the alert stays pending in the outbox (it goes out once the configuration is fixed) and the
error is recorded in the run's details — as the data-alert path already does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fairmon.config import MonitorSpec
from fairmon.pipeline import run_step, window_for
from fairmon.pipeline.context import RunContext
from fairmon.store import open_store

_ALERTS = Path(__file__).resolve().parents[1] / "alerts"
if str(_ALERTS) not in sys.path:
    sys.path.insert(0, str(_ALERTS))

from slack_server import SlackTestServer  # noqa: E402

pytestmark = pytest.mark.postgres

CHANNEL = "#fairness"


def _spec(tmp: Path) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1,
        "identity": {"name": "cfg"},
        "model": {"registry_uri": str(tmp / "registry")},
        "data": {"files": {"pattern": str(tmp / "d" / "{start:%Y-%m-%d}.csv")}},
        "columns": {"features": ["a", "sex"], "sensitive": ["sex"]},
        "schedule": {"start_date": "2026-01-01"},
        "drift": {"allowed_ranges": {"dp_difference": [0.0, 0.1]}, "persistence": {"m": 1, "n": 1}},
        "alerts": {"slack_channel": CHANNEL},
        "execution": {"artifact_location": str(tmp / "artifacts")},
    })


def _window(spec: MonitorSpec, db_url: str, token: str) -> dict[str, Any]:
    """One window through the storing and alerting steps (a drifted outcome in place of the compute steps)."""
    window = window_for(spec, "2026-01-05")
    ctx = RunContext(spec, window, db_url=db_url, notify=True, slack_token=token)
    rows = [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": 0.3, "ci_low": 0.25,
             "ci_high": 0.35, "n": 5000, "n_nan": 0, "status": "ok"}]
    try:
        run_step("resolve_window", spec, window, context=ctx)
        ctx.artifacts.put_json("outcome", {"rows": rows})
        out = {}
        for step in ("persist", "drift", "alert"):
            out[step] = run_step(step, spec, window, context=ctx)
        return out
    finally:
        ctx.close()


def _run_and_alerts(db_url: str) -> tuple[Any, list[Any]]:
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, error, details FROM runs")).one()
        alerts = c.execute(sa.text("SELECT kind, state, attempts, last_error FROM alerts")).all()
    eng.dispose()
    return run, list(alerts)


@pytest.mark.parametrize("problem", ["invalid_auth", "channel_not_found"])
def test_bad_slack_configuration_keeps_the_computed_window_succeeded(
    problem: str, tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path)
    channels = ("#elsewhere",) if problem == "channel_not_found" else (CHANNEL,)
    with SlackTestServer(channels=channels) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        token = "xoxb-wrong" if problem == "invalid_auth" else slack.token
        out = _window(spec, fresh_database_url, token)  # does not raise
    assert out["drift"]["findings"] == 1 and out["alert"]["queued"] == 1
    assert problem in out["alert"]["delivery_error"]
    run, alerts = _run_and_alerts(fresh_database_url)
    assert run.status == "succeeded" and run.error is None
    assert problem in run.details["alert_delivery_error"]
    assert "failed_step" not in run.details
    assert [(a.kind, a.state, a.attempts) for a in alerts] == [("fairness", "pending", 0)]
    assert problem in alerts[0].last_error

    with SlackTestServer(channels=(CHANNEL,)) as slack:  # fixed: the queued alert goes out, once
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        _window(spec, fresh_database_url, slack.token)
        assert len(slack.posted(CHANNEL)) == 1
    run, alerts = _run_and_alerts(fresh_database_url)
    assert run.status == "succeeded" and "alert_delivery_error" not in run.details
    assert [(a.kind, a.state) for a in alerts] == [("fairness", "sent")]
