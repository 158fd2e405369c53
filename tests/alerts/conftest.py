"""Fixtures for alert tests: a local fake of Slack's Web API and a sender wired to it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # slack_server / alert_helpers, whatever the import mode

from slack_server import SlackTestServer  # noqa: E402


@pytest.fixture
def slack_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlackTestServer]:
    """A started fake Slack; ``FAIRMON_SLACK_BASE_URL`` / ``FAIRMON_SLACK_TOKEN`` point at it."""
    with SlackTestServer() as srv:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", srv.base_url)
        monkeypatch.setenv("FAIRMON_SLACK_TOKEN", srv.token)
        yield srv


@pytest.fixture
def sender(slack_server: SlackTestServer):  # type: ignore[no-untyped-def]
    """The real slack-sdk-based sender against the fake, with short backoffs."""
    from fairmon.alerts import SlackSender

    return SlackSender(backoff_factor=0.05, timeout=5)
