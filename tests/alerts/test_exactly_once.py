"""Exactly one Slack message per alert when Slack stores a post but the reply is lost (issue 15, item 1).

The REAL slack-sdk client against the local fake Web API: ``stored_drop`` / ``stored_500`` store the
message and then drop the connection / answer 500, as Slack can after accepting a post; a 429 with a
``Retry-After`` beyond the sender's cap is handed back as a retry-at instead of slept.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from alert_helpers import ctx, dp_finding, rumie_finding

from fairmon.alerts import InMemoryOutboxRepository, Outbox, SlackMessage, SlackSender, alert_fingerprint
from fairmon.alerts.grouping import window_fingerprint
from fairmon.alerts.slack import (
    DEFAULT_MAX_WAIT_S,
    ERR_MAX_WAIT,
    ERR_RATE_LIMITED,
    RateLimitedError,
)
from fairmon.errors import AlertDeliveryError

CH = "#fairness"


def _one_alert(sender: SlackSender) -> tuple[InMemoryOutboxRepository, Outbox, str]:
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    (fp,) = ob.notify_findings([dp_finding()], ctx(), channels=CH)
    return repo, ob, fp


@pytest.mark.parametrize("fault", ["stored_drop", "stored_500"])
def test_stored_post_with_lost_reply_is_not_posted_twice(slack_server, sender, fault) -> None:  # type: ignore[no-untyped-def]
    repo, ob, fp = _one_alert(sender)
    slack_server.fail_next(fault, method="chat.postMessage")
    rep = ob.deliver()
    (posted,) = slack_server.posted(CH)  # exactly one stored message
    assert posted["metadata"]["event_payload"]["fingerprint"] == fp
    assert rep.sent == [fp] and rep.error is None
    rec = repo.all()[0]
    assert (rec.state, rec.attempts, rec.slack_ts, rec.thread_ts) == ("sent", 1, posted["ts"], posted["ts"])
    assert len(slack_server.calls("chat.postMessage")) == 1  # the lookup found it: no re-post
    (lookup,) = slack_server.calls("conversations.history")
    assert lookup.params["include_all_metadata"] in ("1", "true", True)


@pytest.mark.parametrize("fault", ["drop", "500"])
def test_post_lost_before_slack_stored_it_is_reposted_after_the_lookup(slack_server, sender, fault) -> None:  # type: ignore[no-untyped-def]
    repo, ob, fp = _one_alert(sender)
    slack_server.fail_next(fault, method="chat.postMessage")
    assert ob.deliver().sent == [fp]
    assert len(slack_server.posted(CH)) == 1
    assert [r.method for r in slack_server.requests] == ["chat.postMessage", "conversations.history",
                                                         "chat.postMessage"]
    assert repo.all()[0].state == "sent"


def test_threaded_reply_with_lost_reply_is_found_in_its_thread(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """conversations.history does not list thread replies; the lookup reads the thread."""
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    f = rumie_finding()
    ob.notify_findings([f], ctx(), channels=CH)
    assert ob.deliver().sent == [alert_fingerprint(window_fingerprint(f.monitor, f.window_start), CH)]  # the parent
    fp_feu = ob.notify_feu({"candidates": [{"auc": 0.8, "dp": 0.04, "gesd": 0.01, "selected": True}]}, ctx(),
                           parent_finding=f, channel=CH)
    slack_server.fail_next("stored_drop", method="chat.postMessage")
    assert ob.deliver().sent == [fp_feu]
    parent, reply = slack_server.posted(CH)
    assert reply["thread_ts"] == parent["ts"] and reply["metadata"]["event_payload"]["fingerprint"] == fp_feu
    assert repo.outbox_get(fp_feu).slack_ts == reply["ts"]  # type: ignore[union-attr]
    (lookup,) = slack_server.calls("conversations.replies")
    assert lookup.params["ts"] == parent["ts"]


def test_failed_lookup_defers_without_reposting_and_the_next_run_finds_the_message(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo, ob, fp = _one_alert(sender)
    slack_server.fail_next("stored_500", method="chat.postMessage")
    slack_server.fail_next("500", method="conversations.history", times=10)  # lookup impossible
    rep = ob.deliver()
    assert rep.sent == [] and rep.deferred == [fp] and "conversations.history" in (rep.error or "")
    assert len(slack_server.calls("chat.postMessage")) == 1 and len(slack_server.posted(CH)) == 1
    assert repo.all()[0].state == "pending"
    slack_server._failures.clear()
    rep2 = Outbox(repo, sender).deliver()
    assert rep2.recovered == [fp] and rep2.sent == []
    assert len(slack_server.posted(CH)) == 1 and len(slack_server.calls("chat.postMessage")) == 1
    rec = repo.all()[0]
    assert rec.state == "sent" and rec.slack_ts == slack_server.posted(CH)[0]["ts"]


def test_every_post_lost_twice_still_one_message(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """A drop before storing, then a 500 after storing: one message, found by the second lookup."""
    repo, ob, fp = _one_alert(sender)
    slack_server.fail_next("drop", method="chat.postMessage")
    slack_server.fail_next("stored_500", method="chat.postMessage")
    assert ob.deliver().sent == [fp]
    assert len(slack_server.posted(CH)) == 1 and len(slack_server.calls("chat.postMessage")) == 2
    assert repo.all()[0].state == "sent"


def test_long_retry_after_is_handed_back_as_a_retry_at(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo, ob, fp = _one_alert(sender)
    wait = 4 * DEFAULT_MAX_WAIT_S
    slack_server.fail_next("429", method="chat.postMessage", retry_after=int(wait))
    before, t = datetime.now(UTC), time.monotonic()
    rep = ob.deliver()
    assert time.monotonic() - t < DEFAULT_MAX_WAIT_S  # no sleeping inside the step
    assert rep.sent == [] and rep.deferred == [fp]
    assert rep.error == ERR_RATE_LIMITED.format(method="chat.postMessage", channel=CH, seconds=wait)
    assert rep.retry_at is not None
    assert before + timedelta(seconds=wait) <= rep.retry_at <= datetime.now(UTC) + timedelta(seconds=wait)
    rec = repo.all()[0]
    assert (rec.state, rec.last_error) == ("pending", rep.error)
    assert slack_server.posted(CH) == [] and len(slack_server.calls("chat.postMessage")) == 1
    # the retry-at has come (the fake no longer limits): delivered once
    assert Outbox(repo, sender).deliver().sent == [fp]
    assert len(slack_server.posted(CH)) == 1 and repo.all()[0].state == "sent"


def test_sender_raises_the_remaining_wait(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    slack_server.fail_next("429", method="chat.postMessage", retry_after=30)
    msg = SlackMessage(text="x", blocks=[], metadata={}, fingerprint="fp")
    t = time.monotonic()
    with pytest.raises(RateLimitedError) as ei:
        sender.post(CH, msg)
    assert time.monotonic() - t < DEFAULT_MAX_WAIT_S
    assert ei.value.retryable and ei.value.retry_after_s == 30.0
    assert isinstance(ei.value, AlertDeliveryError)
    assert timedelta(seconds=20) < ei.value.retry_at - datetime.now(UTC) <= timedelta(seconds=30)


def test_retry_after_within_the_cap_is_slept_and_the_cap_is_configurable(slack_server) -> None:  # type: ignore[no-untyped-def]
    msg = SlackMessage(text="x", blocks=[], metadata={}, fingerprint="fp")
    slack_server.fail_next("429", method="chat.postMessage", retry_after=1)
    t = time.monotonic()
    SlackSender(max_rate_limit_wait_s=1.0).post(CH, msg)
    assert time.monotonic() - t >= 1.0 and len(slack_server.posted(CH)) == 1
    slack_server.fail_next("429", method="chat.postMessage", retry_after=1)
    with pytest.raises(RateLimitedError) as ei:
        SlackSender(max_rate_limit_wait_s=0).post(CH, msg)
    assert ei.value.retry_after_s == 1.0 and len(slack_server.posted(CH)) == 1
    with pytest.raises(AlertDeliveryError) as bad:
        SlackSender(max_rate_limit_wait_s=float("nan"))
    assert str(bad.value) == ERR_MAX_WAIT.format(value=float("nan"))


def test_crash_after_a_threaded_reply_was_posted_recovers_it_from_the_thread(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """The outbox's crash recovery looks a reply up in its thread (history does not list replies)."""

    class CrashOnSent(InMemoryOutboxRepository):
        crash_on: str | None = None

        def outbox_transition(self, fingerprint, from_state, to_state, **kw):  # type: ignore[no-untyped-def, override]
            if to_state == "sent" and fingerprint == self.crash_on:
                self.crash_on = None
                raise RuntimeError("worker killed")
            return super().outbox_transition(fingerprint, from_state, to_state, **kw)

    repo = CrashOnSent()
    ob = Outbox(repo, sender)
    f = rumie_finding()
    ob.notify_findings([f], ctx(), channels=CH)
    ob.deliver()
    fp_feu = ob.notify_feu({"candidates": []}, ctx(), parent_finding=f, channel=CH)
    repo.crash_on = fp_feu
    with pytest.raises(RuntimeError, match="worker killed"):
        ob.deliver()
    rep = Outbox(repo, sender).deliver(stale_after_s=0.0)
    assert rep.recovered == [fp_feu] and rep.sent == []
    parent, reply = slack_server.posted(CH)  # still one reply
    assert repo.outbox_get(fp_feu).slack_ts == reply["ts"]  # type: ignore[union-attr]
    assert slack_server.calls("conversations.replies")[0].params["ts"] == parent["ts"]
