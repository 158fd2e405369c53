"""``fairmon backfill``: what its --help says about alerts is what happens (issue 22 item 4).

On main the help said "Alerts are stored in the outbox", but after a backfill with an open warning
finding the ``alerts`` table was empty (and the spec's ``alerts.notify_backfill`` was read by the
Airflow DAG only). Now: findings are stored and no alert is queued unless ``--notify`` or
``alerts.notify_backfill: true``, which queue (and, with a token, send) them like a live run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fairmon.cli import build_parser
from fairmon.config import MonitorSpec
from fairmon.pipeline import run_step, runner, window_for
from fairmon.pipeline.context import RunContext
from fairmon.store import open_store


def _spec(tmp: Path, **alerts: Any) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1,
        "identity": {"name": "bf"},
        "model": {"registry_uri": str(tmp / "registry")},
        "data": {"files": {"pattern": str(tmp / "d" / "{start:%Y-%m-%d}.csv")}},
        "columns": {"features": ["a", "sex"], "sensitive": ["sex"]},
        "schedule": {"start_date": "2026-01-01"},
        "drift": {"allowed_ranges": {"dp_difference": [0.0, 0.1]}, "persistence": {"m": 1, "n": 1}},
        "alerts": {"slack_channel": "#fairness", **alerts},
        "execution": {"artifact_location": str(tmp / "artifacts")},
    })


def _help() -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices["backfill"].format_help()  # type: ignore[attr-defined, no-any-return]


def test_backfill_help_says_what_happens_to_alerts() -> None:
    text = " ".join(_help().split())
    assert "Alerts are stored in the outbox" not in text  # main's promise, which the code never kept
    assert "no alert is queued in the outbox (the alerts table) and nothing is posted to Slack" in text
    assert "With --notify, or alerts.notify_backfill: true in the spec" in text


@pytest.mark.parametrize(("flag", "spec_says", "expected"),
                         [(None, False, False), (None, True, True), (True, False, True), (False, True, False)])
def test_backfill_notifies_per_flag_else_per_spec(
    flag: bool | None, spec_says: bool, expected: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def fake_run_window(spec: MonitorSpec, *, window: Any, notify: bool, **_: Any) -> Any:
        seen.append(notify)
        return object()

    monkeypatch.setattr(runner, "run_window", fake_run_window)
    spec = _spec(tmp_path, notify_backfill=spec_says)
    runner.backfill(spec, "2026-01-01", "2026-01-02", notify=flag)
    assert seen == [expected, expected]


def _drifted_window(spec: MonitorSpec, db_url: str, *, notify: bool) -> dict[str, Any]:
    """One window through persist, drift and alert, as a backfill runs it (a drifted outcome in place of
    the compute steps): dp_difference 0.3, its whole interval above the allowed 0.1."""
    window = window_for(spec, "2026-01-05")
    ctx = RunContext(spec, window, db_url=db_url, notify=notify, slack_token=None)
    rows = [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": 0.3, "ci_low": 0.25,
             "ci_high": 0.35, "n": 5000, "n_nan": 0, "status": "ok"}]
    try:
        run_step("resolve_window", spec, window, context=ctx)
        ctx.artifacts.put_json("outcome", {"rows": rows})
        return {step: run_step(step, spec, window, context=ctx) for step in ("persist", "drift", "alert")}
    finally:
        ctx.close()


def _findings_and_alerts(db_url: str) -> tuple[list[Any], list[Any]]:
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        findings = c.execute(sa.text("SELECT kind, status, severity FROM findings")).all()
        alerts = c.execute(sa.text("SELECT kind, state, severity FROM alerts")).all()
    eng.dispose()
    return list(findings), list(alerts)


@pytest.mark.postgres
def test_a_backfilled_open_warning_is_stored_and_queues_an_alert_only_when_notifying(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = _spec(tmp_path)
    out = _drifted_window(spec, fresh_database_url, notify=False)  # fairmon backfill (no --notify)
    assert out["alert"]["queued"] == 0
    findings, alerts = _findings_and_alerts(fresh_database_url)
    assert [tuple(f) for f in findings] == [("ci_outside_range", "open", "warning")]
    assert alerts == []  # what the help says: stored finding, no alert queued
    out = _drifted_window(spec, fresh_database_url, notify=True)  # --notify / alerts.notify_backfill
    assert out["alert"]["queued"] == 1
    findings, alerts = _findings_and_alerts(fresh_database_url)
    assert [tuple(a) for a in alerts] == [("fairness", "pending", "warning")]  # no token: pending, not sent
