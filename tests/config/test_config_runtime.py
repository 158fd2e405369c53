"""Runtime settings: the spec decides routing, the environment supplies secrets and endpoints."""

from __future__ import annotations

import logging

import pytest

from fairmon.config import Settings, parse_spec, resolve_runtime
from fairmon.errors import ConfigError

BASE = """\
spec_version: 1
identity: {name: credit}
model: {registry_uri: registry}
data:
  sql: {query: "select * from t where ts >= :start and ts < :end", url_env: CREDIT_DB}
columns: {features: [age, sex], sensitive: [sex]}
schedule: {start_date: 2026-01-01}
"""
ENV = {
    "FAIRMON_DATABASE_URL": "postgresql+psycopg2://fairmon:hunter2@db:5432/fairmon",
    "FAIRMON_SLACK_TOKEN": "xoxb-secret-token",
    "FAIRMON_SLACK_BASE_URL": "http://127.0.0.1:9999/api/",
    "FAIRMON_SLACK_CHANNEL": "#from-env",
    "CREDIT_DB": "postgresql://reader:s3cret@warehouse/credit",
}


def test_env_channel_fills_a_spec_without_one() -> None:
    s = resolve_runtime(parse_spec(BASE), env=ENV)
    assert (s.slack_channel, s.channel_from) == ("#from-env", "env")


def test_spec_channel_wins_over_env() -> None:
    s = resolve_runtime(parse_spec(BASE + "alerts: {slack_channel: '#credit'}\n"), env=ENV)
    assert (s.slack_channel, s.channel_from) == ("#credit", "spec")


def test_no_channel_anywhere() -> None:
    s = resolve_runtime(parse_spec(BASE), env={})
    assert s.slack_channel is None and s.channel_from is None
    assert s.database_url is None and s.slack_token is None and s.source_url is None


def test_secrets_and_endpoints_come_from_env() -> None:
    s = resolve_runtime(parse_spec(BASE), env=ENV)
    assert s.database_url is not None and s.database_url.get_secret_value() == ENV["FAIRMON_DATABASE_URL"]
    assert s.slack_token is not None and s.slack_token.get_secret_value() == "xoxb-secret-token"
    assert s.slack_base_url == "http://127.0.0.1:9999/api/"
    assert s.source_url is not None and s.source_url.get_secret_value() == ENV["CREDIT_DB"]


def test_secrets_never_in_repr_str_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    s = resolve_runtime(parse_spec(BASE), env=ENV)
    logging.getLogger("fairmon.test").warning("settings: %s / %r / %s", s, s, s.model_dump())
    texts = [repr(s), str(s), caplog.text, s.model_dump_json()]
    for text in texts:
        for secret in ("hunter2", "xoxb-secret-token", "s3cret"):
            assert secret not in text


def test_bad_env_channel_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="FAIRMON_SLACK_CHANNEL: must be a Slack channel"):
        resolve_runtime(parse_spec(BASE), env={"FAIRMON_SLACK_CHANNEL": "not a channel"})


def test_settings_is_frozen() -> None:
    s = Settings()
    with pytest.raises(Exception, match="frozen"):
        s.slack_channel = "#x"  # type: ignore[misc]


def test_config_module_is_light() -> None:
    import json
    import subprocess
    import sys

    code = "import fairmon.config, sys, json; print(json.dumps(sorted(sys.modules)))"
    mods = set(
        json.loads(
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        )
    )
    heavy = {"numpy", "pandas", "torch", "sqlalchemy", "great_expectations", "airflow", "sklearn"}
    assert mods & heavy == set()
