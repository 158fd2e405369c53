"""Issue 15: a ``sent`` alert of the in-memory outbox has no ``last_error`` (as the Postgres outbox), and
the Retry-After cap is configurable with ``FAIRMON_SLACK_MAX_RETRY_WAIT_S``."""

from __future__ import annotations

import pytest
from alert_helpers import ctx, dp_finding

from fairmon.alerts import InMemoryOutboxRepository, Outbox, SlackSender
from fairmon.alerts.render import SlackMessage
from fairmon.alerts.slack import DEFAULT_MAX_WAIT_S, ERR_MAX_WAIT_ENV, RateLimitedError, max_wait_from_env
from fairmon.config import ENV_SLACK_MAX_RETRY_WAIT_S
from fairmon.errors import AlertDeliveryError

CH = "#fairness"


def test_sent_clears_the_error_of_an_earlier_attempt(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    Outbox(repo, sender).notify_findings([dp_finding()], ctx(), channels=CH)
    slack_server.fail_next("invalid_auth", times=10)
    with pytest.raises(AlertDeliveryError):
        Outbox(repo, sender).deliver()
    assert "invalid_auth" in (repo.all()[0].last_error or "")
    slack_server._failures.clear()  # the token is fixed
    assert len(Outbox(repo, sender).deliver().sent) == 1
    rec = repo.all()[0]
    assert (rec.state, rec.last_error) == ("sent", None)
    assert len(slack_server.posted(CH)) == 1


def test_the_wait_cap_comes_from_the_environment(slack_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    msg = SlackMessage(text="x", blocks=[], metadata={}, fingerprint="fp")
    monkeypatch.setenv(ENV_SLACK_MAX_RETRY_WAIT_S, "0")
    assert SlackSender().max_rate_limit_wait_s == 0.0
    slack_server.fail_next("429", method="chat.postMessage", retry_after=1)
    with pytest.raises(RateLimitedError) as ei:  # 1 s is above the cap of 0 s: handed back, not slept
        SlackSender().post(CH, msg)
    assert ei.value.retry_after_s == 1.0 and slack_server.posted(CH) == []
    assert SlackSender(max_rate_limit_wait_s=3.0).max_rate_limit_wait_s == 3.0  # an explicit value wins
    monkeypatch.delenv(ENV_SLACK_MAX_RETRY_WAIT_S)
    assert SlackSender().max_rate_limit_wait_s == DEFAULT_MAX_WAIT_S


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf"])
def test_a_bad_wait_cap_names_the_variable(raw: str) -> None:
    with pytest.raises(AlertDeliveryError) as ei:
        max_wait_from_env({ENV_SLACK_MAX_RETRY_WAIT_S: raw})
    assert str(ei.value) == ERR_MAX_WAIT_ENV.format(name=ENV_SLACK_MAX_RETRY_WAIT_S, value=raw)
