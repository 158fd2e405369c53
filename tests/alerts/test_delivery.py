"""Delivery with the REAL slack-sdk client against a local fake of Slack's Web API."""

from __future__ import annotations

import logging
import time

import pytest
from alert_helpers import RULE, ctx, dp_finding, rumie_finding

from fairmon.alerts import InMemoryOutboxRepository, Outbox, SlackSender, alert_fingerprint
from fairmon.alerts.grouping import window_fingerprint
from fairmon.alerts.message import mrkdwn_escape
from fairmon.alerts.slack import CONFIG_SLACK_ERRORS, ERR_FATAL, ERR_NO_TOKEN
from fairmon.errors import AlertDeliveryError

CH = "#fairness"


def two_messages(ob: Outbox) -> list[str]:
    """Two outbox messages: a finding in each of two windows (one window's findings are ONE message)."""
    return ob.notify_findings([rumie_finding(0)], ctx(0), channels=CH) + ob.notify_findings(
        [dp_finding(1)], ctx(1), channels=CH)


class CrashOnSent(InMemoryOutboxRepository):
    """Simulates a worker dying after Slack accepted the message but before ``sent`` was committed."""

    def __init__(self) -> None:
        super().__init__()
        self.crash = True

    def outbox_transition(self, fingerprint, from_state, to_state, **kw):  # type: ignore[no-untyped-def, override]
        if to_state == "sent" and self.crash:
            self.crash = False
            raise RuntimeError("worker killed")
        return super().outbox_transition(fingerprint, from_state, to_state, **kw)


def test_message_carries_rules_numbers_and_metadata(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    ob = Outbox(InMemoryOutboxRepository(), sender)
    queued = ob.notify_findings([rumie_finding(), dp_finding()], ctx(), channels=CH)
    assert len(queued) == 1  # one window: one message with both findings (issue 19)
    rep = ob.deliver()
    assert sorted(rep.sent) == sorted(queued)
    posted = slack_server.posted(CH)
    assert len(posted) == 1
    text = posted[0]["text"]
    assert mrkdwn_escape(RULE) in text and "0.412" in text and "0.626" in text and "2,350" in text
    assert "dp_difference" in text and "[0.131, 0.195]" in text
    assert any(b["type"] == "header" for b in posted[0]["blocks"])
    assert posted[0]["metadata"]["event_type"] == "fairmon_alert"
    assert posted[0]["metadata"]["event_payload"]["fingerprint"] == queued[0]
    # the bearer token went in the header, never in the body
    req = slack_server.calls("chat.postMessage")[0]
    assert req.headers["Authorization"] == f"Bearer {slack_server.token}"
    assert slack_server.token not in str(req.params)


def test_exactly_one_message_across_retried_task_and_rerun_window(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    for _attempt in range(3):  # the task is retried twice, then the window is re-run
        ob = Outbox(repo, sender)
        ob.notify_findings([rumie_finding()], ctx(), channels=CH)
        ob.deliver()
    assert len(slack_server.posted(CH)) == 1
    assert len(slack_server.calls("chat.postMessage")) == 1
    rec = repo.all()[0]
    assert rec.state == "sent" and rec.slack_ts == slack_server.posted(CH)[0]["ts"] == rec.thread_ts


def test_crash_between_send_and_commit_does_not_duplicate(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = CrashOnSent()
    ob = Outbox(repo, sender)
    ob.notify_findings([rumie_finding()], ctx(), channels=CH)
    with pytest.raises(RuntimeError, match="worker killed"):
        ob.deliver()
    assert len(slack_server.posted(CH)) == 1
    assert repo.all()[0].state == "sending"
    # a fresh run: not stale yet -> left alone
    assert Outbox(repo, sender).deliver().sent == []
    rep = Outbox(repo, sender).deliver(stale_after_s=0.0)
    assert rep.recovered == [repo.all()[0].fingerprint] and rep.sent == []
    assert len(slack_server.posted(CH)) == 1  # history check found it; no second post
    rec = repo.all()[0]
    assert rec.state == "sent" and rec.slack_ts == slack_server.posted(CH)[0]["ts"]
    hist = slack_server.calls("conversations.history")
    assert hist and hist[0].params["include_all_metadata"] in ("1", "true", True)


def test_rate_limit_is_retried_honouring_retry_after(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    slack_server.fail_next("429", method="chat.postMessage", retry_after=1)
    ob = Outbox(InMemoryOutboxRepository(), sender)
    ob.notify_findings([dp_finding()], ctx(), channels=CH)
    t = time.monotonic()
    rep = ob.deliver()
    assert time.monotonic() - t >= 1.0
    assert len(rep.sent) == 1 and len(slack_server.posted(CH)) == 1
    assert [r.status for r in slack_server.calls("chat.postMessage")] == [429, 200]


def test_server_errors_and_dropped_connections_are_retried(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    slack_server.fail_next("500", method="chat.postMessage")
    slack_server.fail_next("drop", method="chat.postMessage")
    ob = Outbox(InMemoryOutboxRepository(), sender)
    ob.notify_findings([dp_finding()], ctx(), channels=CH)
    assert len(ob.deliver().sent) == 1
    assert len(slack_server.posted(CH)) == 1
    assert len(slack_server.calls("chat.postMessage")) == 3


def test_outage_defers_and_next_run_redelivers(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    two_messages(ob)
    slack_server.fail_next("500", times=10)  # outage longer than the client's retries
    rep = ob.deliver()
    assert rep.sent == [] and len(rep.deferred) == 1 and "will be re-delivered" in (rep.error or "")
    assert "#fairness" in (rep.error or "")
    # the 500 may have come after Slack stored the post: never re-posted blind; the lookup is a read,
    # retried 1 + 2 times, then stop: no storm (issue 15 item 1; before, 3 blind posts)
    assert len(slack_server.calls("chat.postMessage")) == 1
    assert len(slack_server.calls("conversations.history")) == 3
    assert len(slack_server.requests) == 4
    assert {r.state for r in repo.all()} == {"pending"}
    slack_server._failures.clear()
    rep2 = Outbox(repo, sender).deliver()
    assert len(rep2.sent) == 2 and len(slack_server.posted(CH)) == 2
    assert {r.state for r in repo.all()} == {"sent"}


@pytest.mark.parametrize("error", sorted(CONFIG_SLACK_ERRORS))
def test_configuration_errors_fail_loudly_and_keep_the_alerts_queued(slack_server, sender, error) -> None:  # type: ignore[no-untyped-def]
    """A bad token or channel is not the message's fault: the alert stays pending, its attempt not
    counted, and goes out (once) when the configuration is fixed; the caller still gets the error."""
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    two_messages(ob)
    slack_server.fail_next(error, times=10)
    with pytest.raises(AlertDeliveryError) as ei:
        ob.deliver()
    assert str(ei.value) == ERR_FATAL.format(method="chat.postMessage", channel=CH, error=error)
    assert not ei.value.retryable and ei.value.configuration
    assert len(slack_server.calls("chat.postMessage")) == 1  # stops at once: no retry storm
    assert [(r.state, r.attempts) for r in repo.all()] == [("pending", 0), ("pending", 0)]
    assert error in (repo.all()[0].last_error or "")
    slack_server._failures.clear()  # fixed
    rep = Outbox(repo, sender).deliver()
    assert len(rep.sent) == 2 and len(slack_server.posted(CH)) == 2
    assert {r.state for r in repo.all()} == {"sent"}


@pytest.mark.parametrize("error", ["invalid_blocks", "msg_too_long"])
def test_message_errors_mark_the_alert_failed(slack_server, sender, error) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    two_messages(ob)
    slack_server.fail_next(error)
    with pytest.raises(AlertDeliveryError, match=error) as ei:
        ob.deliver()
    assert not ei.value.configuration
    assert sorted(r.state for r in repo.all()) == ["failed", "pending"]


def test_a_run_delivers_only_its_own_monitors_alerts(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Monitor A's run with a bad token neither sends nor burns monitor B's queued alert."""
    repo = InMemoryOutboxRepository()
    Outbox(repo).notify_data_validation([{"expectation": "expect_column_to_exist", "column": "x"}],
                                        ctx(monitor="b", evidence=None, gesd=None), channel=CH)
    a = Outbox(repo, SlackSender(token="xoxb-wrong", backoff_factor=0.05))
    a.notify_findings([dp_finding()], ctx(), channels=CH)  # monitor "credit"
    with pytest.raises(AlertDeliveryError, match="invalid_auth"):
        a.deliver(monitor="credit")
    assert len(slack_server.calls("chat.postMessage")) == 1
    b_alert = next(r for r in repo.all() if r.monitor == "b")
    assert (b_alert.state, b_alert.attempts, b_alert.last_error) == ("pending", 0, None)
    rep = Outbox(repo, sender).deliver(monitor="b")
    assert rep.sent == [b_alert.fingerprint] and len(slack_server.posted(CH)) == 1


def test_unknown_channel_and_wrong_token_against_the_fake(slack_server) -> None:  # type: ignore[no-untyped-def]
    ob = Outbox(InMemoryOutboxRepository(), SlackSender(token="xoxb-wrong"))
    ob.notify_findings([dp_finding()], ctx(), channels=CH)
    with pytest.raises(AlertDeliveryError, match="invalid_auth"):
        ob.deliver()
    ob2 = Outbox(InMemoryOutboxRepository(), SlackSender())
    ob2.notify_findings([dp_finding()], ctx(), channels="#nope")
    with pytest.raises(AlertDeliveryError, match="#nope: channel_not_found"):
        ob2.deliver()


def test_threaded_feu_followup_uses_stored_ts(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    f = rumie_finding()
    feu = {"candidates": [{"auc": 0.81, "dp": 0.04, "gesd": 0.01, "selected": True}]}
    ob.notify_findings([f], ctx(), channels=CH)
    fp_feu = ob.notify_feu(feu, ctx(), parent_finding=f, channel=CH)
    assert fp_feu is not None
    ob.deliver()
    parent_fp = alert_fingerprint(window_fingerprint(f.monitor, f.window_start), CH)  # the window's message
    parent_ts = repo.outbox_get(parent_fp).thread_ts  # type: ignore[union-attr]
    posted = slack_server.posted(CH)
    assert len(posted) == 2 and posted[1]["thread_ts"] == parent_ts == posted[0]["ts"]
    assert "FEU retraining candidates" in posted[1]["text"]
    # re-queued follow-up (task retry) is refused
    assert ob.notify_feu(feu, ctx(), parent_finding=f, channel=CH) is None


def test_followup_waits_for_its_parent(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    f = rumie_finding()
    ob.notify_feu({"candidates": []}, ctx(), parent_finding=f, channel=CH)  # queued first
    ob.notify_findings([f], ctx(), channels=CH)
    rep = ob.deliver()
    assert len(rep.deferred) == 1 and len(rep.sent) == 1
    rep2 = ob.deliver()
    assert len(rep2.sent) == 1
    posted = slack_server.posted(CH)
    assert posted[1]["thread_ts"] == posted[0]["ts"]


def test_resolution_message_threads_under_the_opening_and_broadcasts(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    ob.notify_findings([rumie_finding(2)], ctx(2), channels=CH)
    ob.deliver()
    ob.notify_findings([rumie_finding(6, status="resolved", since_day=2)], ctx(6), channels=CH)
    ob.deliver()
    first, res = slack_server.posted(CH)
    assert res["thread_ts"] == first["ts"] and res["reply_broadcast"] is True
    assert "Resolved" in res["text"] and "resolved" in res["metadata"]["event_payload"]["status"]


def test_backfill_notifies_only_when_asked_and_severity_routing(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    ob = Outbox(InMemoryOutboxRepository(), sender)
    assert ob.notify_findings([rumie_finding()], ctx(), channels=CH, backfill=True) == []
    assert len(ob.notify_findings([rumie_finding()], ctx(), channels=CH, backfill=True, notify=True)) == 1
    ob2 = Outbox(InMemoryOutboxRepository(), sender)
    q = ob2.notify_findings([rumie_finding(), dp_finding()], ctx(),
                            channels={"#fairness": "warning", "#oncall": "critical"})
    assert len(q) == 2  # one message per channel: #fairness both findings, #oncall the critical rumie only
    ob2.deliver()
    assert len(slack_server.posted("#oncall")) == 1 and len(slack_server.posted("#fairness")) == 1
    oncall, fairness = slack_server.posted("#oncall")[0]["text"], slack_server.posted("#fairness")[0]["text"]
    assert "dp_difference" not in oncall and "dp_difference" in fairness and "RUMIE" in oncall


def test_data_validation_alert_uses_same_outbox(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    failed = [{"expectation": "expect_column_values_to_be_between", "column": "age", "observed": "max 240"}]
    fp = ob.notify_data_validation(failed, ctx(evidence=None, gesd=None), channel=CH)
    assert ob.notify_data_validation(failed, ctx(evidence=None, gesd=None), channel=CH) is None
    ob.deliver()
    (msg,) = slack_server.posted(CH)
    assert "data validation failed" in msg["text"] and msg["metadata"]["event_payload"]["fingerprint"] == fp
    assert repo.all()[0].kind == "data"


def test_token_is_never_logged(slack_server, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    s = SlackSender()
    ob = Outbox(InMemoryOutboxRepository(), s)
    ob.notify_findings([dp_finding()], ctx(), channels=CH)
    slack_server.fail_next("500")
    ob.deliver()
    assert slack_server.token not in caplog.text and slack_server.token not in repr(s)


def test_missing_token(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("FAIRMON_SLACK_TOKEN", raising=False)
    with pytest.raises(AlertDeliveryError) as ei:
        SlackSender()
    assert str(ei.value) == ERR_NO_TOKEN


def test_a_message_replaced_while_queued_goes_out_with_the_text_it_was_claimed_with(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Session 23 (a review): a re-run may replace a still-queued window message's text; a worker that listed
    the queue before that and then claimed the row must post the new text, not the one it listed."""
    from fairmon.alerts import InMemoryOutboxRepository, Outbox

    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    (fp,) = ob.notify_findings([rumie_finding(0)], ctx(0), channels="#fairness")
    listed = repo.outbox_pending()
    assert ob.notify_findings([dp_finding(0)], ctx(0), channels="#fairness") == [fp]  # the re-run's text
    repo.outbox_pending = lambda *a, **k: listed  # type: ignore[method-assign]
    assert ob.deliver().sent == [fp]
    posted = slack_server.posted("#fairness")[-1]
    assert "dp_difference" in posted["text"] + str(posted.get("blocks"))
