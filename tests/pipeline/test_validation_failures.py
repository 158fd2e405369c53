"""A bad batch stops the window: ``data_invalid`` with the failed expectation, no metrics, ONE data alert.

Each kind of bad batch is written as the window's partition of a small demo monitor; the run goes
through :func:`fairmon.pipeline.run_window` (the steps the DAG runs) into a fresh Postgres database,
and the data alert is delivered through the real slack-sdk client to a local Slack stand-in.
A re-run of the window sends nothing more.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS / "pipeline", _TESTS / "alerts"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pipeline_demo_setup import SMALL, demo_copy, prepare_demo  # noqa: E402
from slack_server import SlackTestServer  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CHANNEL = "#fairness-demo"


def _missing_column(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["income"])


def _wrong_type(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(income=["high"] * len(df))


def _nulls_in_sensitive(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.loc[out.index[::5], "sex"] = np.nan
    return out


def _unseen_category(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.loc[out.index[::7], "region"] = "atlantis"
    return out


def _missing_group(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["sex"] != "female"]


def _too_few_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df.head(40)


#: kind → (corruption, (check, column) that must be among the failures)
BAD: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], tuple[str, str | None]]] = {
    "missing_column": (_missing_column, ("column", "income")),
    "wrong_type": (_wrong_type, ("type", "income")),
    "nulls_in_sensitive": (_nulls_in_sensitive, ("nulls", "sex")),
    "unseen_category": (_unseen_category, ("domain", "region")),
    "missing_group": (_missing_group, ("groups", "sex")),
    "too_few_rows": (_too_few_rows, ("min_rows", None)),
}


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("valdemo") / "demo"
    _, manifest = prepare_demo(out, windows=3, drift_window=2)
    return out, manifest


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_batch_is_data_invalid_with_one_alert(
    kind: str, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fairmon.pipeline import run_window

    template, manifest = demo_template
    corrupt, (check, column) = BAD[kind]
    spec, w = demo_copy(template, manifest, tmp_path / "demo", SMALL, fresh_database_url, corrupt)

    with SlackTestServer(channels=(CHANNEL,)) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        o = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
        assert o.status == "data_invalid", o.error
        assert "persist" not in o.steps
        if kind == "missing_column":  # a re-run (or task retry) of the window sends nothing more
            again = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
            assert again.status == "data_invalid"
        posts = [r for r in slack.requests if r.method == "chat.postMessage"]
    assert len(posts) == 1, [p.params for p in posts]  # one data alert, never re-sent

    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT run_id, status, details, error FROM runs")).one()
        n_metrics = c.execute(sa.text("SELECT count(*) FROM metrics")).scalar_one()
        n_evidence = c.execute(sa.text("SELECT count(*) FROM evidence")).scalar_one()
        alerts = c.execute(sa.text("SELECT kind, state, channel FROM alerts")).all()
    eng.dispose()
    assert run.status == "data_invalid"
    failed = run.details["failed_expectations"]
    assert (check, column) in {(f["check"], f["column"]) for f in failed}, failed
    assert n_metrics == 0 and n_evidence == 0  # nothing computed
    assert [tuple(a) for a in alerts] == [("data", "sent", CHANNEL)]


def test_alerts_disabled_records_data_invalid_but_queues_no_message(
    demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``alerts.enabled: false`` suppresses the data-validation alert too; the run is still data_invalid."""
    from fairmon.pipeline import run_window

    spec, w = _bad_window(demo_template, tmp_path, fresh_database_url, **{"alerts.enabled": False})

    with SlackTestServer(channels=(CHANNEL,)) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        o = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
        posts = [r for r in slack.requests if r.method == "chat.postMessage"]
    assert o.status == "data_invalid", o.error
    assert posts == []
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        status = c.execute(sa.text("SELECT status FROM runs")).scalar_one()
        n_alerts = c.execute(sa.text("SELECT count(*) FROM alerts")).scalar_one()
    eng.dispose()
    assert status == "data_invalid" and n_alerts == 0


def _bad_window(demo_template: tuple[Path, dict], tmp_path: Path, db_url: str, **overrides: object) -> tuple[Path, dict]:
    """A copy of the demo whose first window's partition misses a feature column; a fresh database."""
    template, manifest = demo_template
    return demo_copy(template, manifest, tmp_path / "demo", {**SMALL, **overrides}, db_url, _missing_column)


def _run_and_alerts(db_url: str) -> tuple[sa.Row, list[sa.Row]]:
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, error, details FROM runs")).one()
        alerts = c.execute(sa.text("SELECT kind, state, attempts, last_error FROM alerts")).all()
    eng.dispose()
    return run, list(alerts)


@pytest.mark.parametrize("problem", ["invalid_auth", "channel_not_found"])
def test_bad_slack_configuration_keeps_the_window_data_invalid(
    problem: str, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """Slack refusing the data alert (wrong token / unknown channel) must not turn the window into
    ``failed`` nor lose its failed expectations; the alert stays queued and goes out once fixed."""
    from fairmon.pipeline import run_window

    spec, w = _bad_window(demo_template, tmp_path, fresh_database_url)
    channels = ("#elsewhere",) if problem == "channel_not_found" else (CHANNEL,)
    with SlackTestServer(channels=channels) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        token = "xoxb-wrong" if problem == "invalid_auth" else slack.token
        o = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=token)
    assert o.status == "data_invalid", o.error
    run, alerts = _run_and_alerts(fresh_database_url)
    assert run.status == "data_invalid" and "expect_column_to_exist" in run.error
    assert {f["column"] for f in run.details["failed_expectations"]} == {"income"}
    assert problem in run.details["alert_delivery_error"]
    assert "failed_step" not in run.details
    assert [(a.kind, a.state, a.attempts) for a in alerts] == [("data", "pending", 0)]
    assert problem in alerts[0].last_error
    assert problem in caplog.text and "stays data_invalid" in caplog.text

    with SlackTestServer(channels=(CHANNEL,)) as slack:  # token/channel fixed: the queued alert goes out
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        again = run_window(spec, w["start"], db_url=fresh_database_url, slack_token=slack.token)
        assert again.status == "data_invalid"
        assert len(slack.posted(CHANNEL)) == 1
    run, alerts = _run_and_alerts(fresh_database_url)
    assert [(a.kind, a.state) for a in alerts] == [("data", "sent")]
    assert "alert_delivery_error" not in run.details and run.details["failed_expectations"]


def test_notifying_without_a_token_says_the_alert_stays_queued(
    demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from fairmon.config import load_spec
    from fairmon.pipeline import run_window, window_for
    from fairmon.pipeline.context import RunContext

    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    spec, w = _bad_window(demo_template, tmp_path, fresh_database_url)
    o = run_window(spec, w["start"], db_url=fresh_database_url)
    assert o.status == "data_invalid", o.error
    loaded = load_spec(spec)
    ctx = RunContext(loaded, window_for(loaded, w["start"]), db_url=fresh_database_url)
    ctx.bind_current_attempt()  # the run's attempt folder (issue 15)
    step = ctx.artifacts.get_json("step_validate")
    ctx.close()
    assert step["alert"]["delivered"] is False
    assert step["alert"]["delivery"] == "no token: FAIRMON_SLACK_TOKEN unset; 1 alert(s) stay queued"
    assert "Slack delivery skipped, no token: FAIRMON_SLACK_TOKEN unset; 1 alert(s) stay queued" in caplog.text
    run, alerts = _run_and_alerts(fresh_database_url)
    assert run.status == "data_invalid" and [(a.kind, a.state) for a in alerts] == [("data", "pending")]


    # a later failure mark of the same run adds to the details instead of erasing the evidence
    from fairmon.pipeline import runs

    ctx = RunContext(loaded, window_for(loaded, w["start"]), db_url=fresh_database_url)
    runs.mark_failed(ctx, step="validate", error="validate: StoreError: connection lost")
    ctx.close()
    run, _ = _run_and_alerts(fresh_database_url)
    assert run.status == "failed" and run.details["failed_step"] == "validate"
    assert {f["column"] for f in run.details["failed_expectations"]} == {"income"}


def test_allowed_unseen_categories_are_scored_and_explained(
    demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    """Session 23 (a new user): with ``validation.allow_unseen_categories`` the window passed validation and
    then failed in the explain step (``SchemaError: column 'purpose' has categories not seen when the schema
    was fitted``), losing the window. The model's encoding now treats such a category as an all-zero block,
    as a raw pipeline's ``OneHotEncoder(handle_unknown="ignore")`` does."""
    from fairmon.pipeline import run_window

    template, manifest = demo_template
    spec, w = demo_copy(template, manifest, tmp_path / "demo", {**SMALL, "validation.allow_unseen_categories": True},
                        fresh_database_url, _unseen_category)
    o = run_window(spec, w["start"], db_url=fresh_database_url)
    assert o.status == "succeeded", o.error
    assert o.steps["explain"].get("enabled") is not False, o.steps["explain"]
