"""Runtime settings: the spec decides routing, the environment supplies secrets and endpoints.

Examples
--------
>>> Settings().slack_token is None
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, SecretStr

from fairmon.config._alerts import CHANNEL_RE
from fairmon.config._env import (
    ENV_DATABASE_URL,
    ENV_REPORT_BASE_URL,
    ENV_SLACK_BASE_URL,
    ENV_SLACK_CHANNEL,
    ENV_SLACK_TOKEN,
)
from fairmon.config._messages import ERR_BASE_URL, ERR_CHANNEL, excerpt
from fairmon.config._monitor import MonitorSpec
from fairmon.errors import ConfigError

__all__ = ["Settings", "resolve_runtime"]


class Settings(BaseModel):
    """Secrets and endpoints for one monitor at run time; secrets never show in repr/str/logs.

    >>> Settings(slack_token="xoxb-secret")
    Settings(database_url=None, slack_token=SecretStr('**********'), slack_base_url=None, slack_channel=None, channel_from=None, source_url=None, report_base_url=None, report_base_url_from=None)

    ``slack_channel`` is the spec's channel; ``FAIRMON_SLACK_CHANNEL`` only fills a spec without one
    (``channel_from`` says which). ``report_base_url`` is where the run reports are served, the start of
    every alert's report link: ``FAIRMON_REPORT_BASE_URL`` wins over the spec's ``alerts.report_base_url``
    (``report_base_url_from`` says which) — the URL belongs to the deployment that serves the reports
    (docker compose sets it to its report server), as ``FAIRMON_REPORT_LOCATION`` overrides where they
    are written; the spec's value is the default for a deployment that sets none. ``source_url`` is the SQL source's URL from the environment variable
    the spec names (``data.sql.url_env``), outside Airflow.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_url: SecretStr | None = None
    slack_token: SecretStr | None = None
    slack_base_url: str | None = None
    slack_channel: str | None = None
    channel_from: Literal["spec", "env"] | None = None
    source_url: SecretStr | None = None
    report_base_url: str | None = None
    report_base_url_from: Literal["spec", "env"] | None = None


def resolve_runtime(spec: MonitorSpec, env: Mapping[str, str] | None = None) -> Settings:
    """Combine a spec with the environment: the spec decides routing, the environment supplies secrets.

    >>> from fairmon.config._monitor import EXAMPLE
    >>> s = resolve_runtime(MonitorSpec.model_validate(EXAMPLE), env={"FAIRMON_SLACK_TOKEN": "xoxb-1",
    ...                     "FAIRMON_SLACK_CHANNEL": "#fairness"})
    >>> s.slack_channel, s.channel_from, s.slack_token
    ('#fairness', 'env', SecretStr('**********'))
    """
    env = os.environ if env is None else env

    def secret(name: str) -> SecretStr | None:
        v = env.get(name)
        return SecretStr(v) if v else None

    channel, origin = spec.alerts.slack_channel, "spec"
    if channel is None:
        channel = env.get(ENV_SLACK_CHANNEL) or None
        origin = "env"
        if channel is not None and not CHANNEL_RE.match(channel):
            raise ConfigError(f"{ENV_SLACK_CHANNEL}: " + ERR_CHANNEL.format(value=excerpt(channel)))
    base_url, base_from = env.get(ENV_REPORT_BASE_URL) or None, "env"
    if base_url is None:
        base_url, base_from = spec.alerts.report_base_url, "spec"
    elif not re.match(r"^https?://[^\s/]+", base_url):
        raise ConfigError(f"{ENV_REPORT_BASE_URL}: " + ERR_BASE_URL.format(value=excerpt(base_url)))
    return Settings(
        report_base_url=base_url,
        report_base_url_from=base_from if base_url is not None else None,  # type: ignore[arg-type]
        database_url=secret(ENV_DATABASE_URL),
        slack_token=secret(ENV_SLACK_TOKEN),
        slack_base_url=env.get(ENV_SLACK_BASE_URL) or None,
        slack_channel=channel,
        channel_from=origin if channel is not None else None,  # type: ignore[arg-type]
        source_url=secret(spec.data.sql.url_env) if spec.data.sql is not None else None,
    )
