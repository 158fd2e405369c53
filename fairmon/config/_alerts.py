"""The ``alerts`` section: where findings are sent on Slack, and which.

Examples
--------
>>> AlertsSpec(slack_channel="#fairness").min_severity
'warning'
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator

from fairmon.config._messages import ERR_BASE_URL, ERR_CHANNEL, excerpt
from fairmon.config._parsers import SpecSection

__all__ = ["CHANNEL_RE", "AlertsSpec"]

#: a Slack channel name (``#name``/``name``) or id (``C0123...``); also checks ``FAIRMON_SLACK_CHANNEL``
CHANNEL_RE = re.compile(r"^(#?[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{6,})$")


class AlertsSpec(SpecSection):
    """Where and when findings are sent.

    ``enabled: false`` silences the monitor on Slack: runs (``data_invalid`` ones included), findings
    and FEU candidates are stored as usual, but no message of any kind (fairness finding,
    data-validation failure, FEU follow-up) is queued or posted. ``slack_channel`` wins over
    ``FAIRMON_SLACK_CHANNEL`` (which only fills a spec without one); findings below ``min_severity``
    are stored but not sent. Backfilled windows (``fairmon backfill``) store their findings but queue no
    alert unless ``notify_backfill`` is true (or the command's ``--notify``): then they queue and send
    their alerts like a live run.

    ``compare_previous_model`` (default true): when a finding fires (``open`` or ``ongoing``) and the
    registry holds an earlier production version than the one the window was scored with, the
    window is scored with that version too and the fired metric computed under it ("model or
    data?", :mod:`fairmon.fairness.rescore`); the cost is one prediction of the window and the
    fired metrics.
    """

    enabled: bool = True
    slack_channel: str | None = None
    min_severity: Literal["info", "warning", "critical"] = "warning"
    report_base_url: str | None = None
    notify_backfill: bool = False
    send_resolved: bool = True
    compare_previous_model: bool = True

    @field_validator("slack_channel")
    @classmethod
    def _channel(cls, v: str | None) -> str | None:
        if v is not None and not CHANNEL_RE.match(v):
            raise ValueError(ERR_CHANNEL.format(value=excerpt(v)))
        return v

    @field_validator("report_base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(ERR_BASE_URL.format(value=excerpt(v)))
        return v
