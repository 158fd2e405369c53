"""The outbox on the real store (Postgres): exactly once across re-runs and a crash, FEU threading."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alert_helpers import ctx, dp_finding, rumie_finding

from fairmon.alerts import Outbox, alert_fingerprint
from fairmon.alerts.grouping import window_fingerprint

pytestmark = pytest.mark.postgres
CH = "#fairness"


@pytest.fixture
def store(fresh_database_url):  # type: ignore[no-untyped-def]
    from fairmon.store import open_store

    s = open_store(fresh_database_url, upgrade=True)
    yield s
    s.engine.dispose()


def test_store_backed_outbox_exactly_once_with_crash_and_thread(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    f = rumie_finding()
    crashed = {"done": False}
    real = store.outbox_transition

    def crash_once(fp, from_state, to_state, **kw):  # type: ignore[no-untyped-def]
        if to_state == "sent" and not crashed["done"]:
            crashed["done"] = True
            raise RuntimeError("worker killed between Slack and commit")
        return real(fp, from_state, to_state, **kw)

    def enqueue(ob: Outbox) -> list[str]:  # two windows: two messages (one window's findings are one message)
        return ob.notify_findings([f], ctx(0), channels=CH) + ob.notify_findings([dp_finding(1)], ctx(1), channels=CH)

    store.outbox_transition = crash_once
    ob = Outbox(store, sender)
    assert len(enqueue(ob)) == 2
    with pytest.raises(RuntimeError):
        ob.deliver()
    store.outbox_transition = real
    # re-run of the window: enqueue refused, delivery recovers the crashed one from history
    ob2 = Outbox(store, sender)
    assert enqueue(ob2) == []
    rep = ob2.deliver(stale_after_s=0.0)
    assert len(rep.recovered) == 1 and len(rep.sent) == 1
    assert len(slack_server.posted(CH)) == 2
    fp = alert_fingerprint(window_fingerprint(f.monitor, f.window_start), CH)
    rec = store.outbox_get(fp)
    assert rec.state == "sent" and rec.thread_ts == rec.slack_ts == slack_server.posted(CH)[0]["ts"]
    # FEU follow-up threads under the stored ts
    ob2.notify_feu({"candidates": [{"auc": 0.8, "dp": 0.03, "gesd": 0.01}]}, ctx(), parent_finding=f, channel=CH)
    ob2.deliver()
    assert slack_server.posted(CH)[-1]["thread_ts"] == rec.slack_ts
    reply = next(a for a in store.alerts() if a.payload.get("thread_of") == fp)
    assert reply.state == "sent" and reply.thread_ts == rec.slack_ts  # the reply records its thread
    assert len(slack_server.calls("chat.postMessage")) == 3


def test_store_outbox_per_monitor_and_configuration_errors_keep_alerts(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """On Postgres too: delivery limited to one monitor, and a bad token leaves the alert pending
    with its attempt given back, so it goes out once the token is fixed."""
    from fairmon.alerts import SlackSender
    from fairmon.errors import AlertDeliveryError

    other = Outbox(store)
    fp_b = other.notify_data_validation([{"expectation": "expect_column_to_exist", "column": "x"}],
                                        ctx(monitor="b", evidence=None, gesd=None), channel=CH)
    ob = Outbox(store, SlackSender(token="xoxb-wrong", backoff_factor=0.05))
    (fp_a,) = ob.notify_findings([dp_finding()], ctx(), channels=CH)
    assert [a.fingerprint for a in store.outbox_pending(monitor="credit")] == [fp_a]
    with pytest.raises(AlertDeliveryError, match="invalid_auth"):
        ob.deliver(monitor="credit")
    a, b = store.outbox_get(fp_a), store.outbox_get(fp_b)
    assert (a.state, a.attempts) == ("pending", 0) and "invalid_auth" in a.last_error
    assert (b.state, b.attempts, b.last_error) == ("pending", 0, None)
    rep = Outbox(store, sender).deliver(monitor="credit")
    assert rep.sent == [fp_a] and store.outbox_get(fp_a).state == "sent"
    assert store.outbox_get(fp_b).state == "pending"


def test_alert_history_has_one_row_per_message_and_one_per_finding(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Two findings of one window: ONE message (alert_history, n_findings 2), two alert_history_findings
    rows carrying the message's delivery state; a resolution is a message of its own in the thread."""
    import sqlalchemy as sa

    ob = Outbox(store, sender)
    (fp,) = ob.notify_findings([rumie_finding(0), dp_finding(0)], ctx(0), channels=CH)
    ob.deliver()
    ob.notify_findings([rumie_finding(3, status="resolved", since_day=0)], ctx(3), channels=CH)
    ob.deliver()
    with store.engine.connect() as c:
        msgs = c.execute(sa.text("SELECT fingerprint, state, n_findings, thread_ts FROM alert_history "
                                 "ORDER BY alert_id")).all()
        rows = c.execute(sa.text("SELECT message_fingerprint, finding_key, entry, state, status "
                                 "FROM alert_history_findings ORDER BY alert_id, finding_key")).all()
    assert [(m[0], m[1], m[2]) for m in msgs][0] == (fp, "sent", 2) and len(msgs) == 2
    assert msgs[1][2] == 1  # the resolution: one finding
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows[:2]] == [
        (fp, "ci_outside_range:dp_difference:sex", "dp_difference:sex", "sent", "open"),
        (fp, "rumie_rise:rumie_honest_dscore:*", "rumie", "sent", "open"),
    ]
    assert rows[2][1:] == ("rumie_rise:rumie_honest_dscore:*", "rumie", "sent", "resolved")
    first, resolution = slack_server.posted(CH)
    assert resolution["thread_ts"] == first["ts"]


def test_a_re_run_withdraws_what_it_no_longer_says(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Session 23 (a new user re-running days after a data fix, Slack not configured meanwhile): the first
    attempts' queued alerts went out afterwards — "data validation failed" for windows that were now fine.
    A new attempt of a window withdraws the window's queued alerts; what it raises again is queued again
    (a still-queued window message takes the new text); a reply to a withdrawn message is withdrawn at
    delivery; a window's run delivers only alerts of windows up to its own (a re-run range's later windows
    wait for their own attempt)."""
    from fairmon.alerts.outbox import withdraw_window

    ob = Outbox(store)
    day0 = ctx(0).window_start
    fp_data = ob.notify_data_validation([{"expectation": "expect_column_to_exist", "column": "x"}], ctx(0),
                                        channel=CH)
    assert withdraw_window(store, "credit", day0) == [fp_data]  # attempt 2 starts
    (fp_win,) = ob.notify_findings([rumie_finding(0)], ctx(0), channels=CH)
    fp_feu = ob.notify_feu({"candidates": [{"auc": 0.8, "dp": 0.03, "gesd": 0.01}]}, ctx(0),
                           parent_finding=rumie_finding(0), channel=CH)
    old_text = store.outbox_get(fp_win).payload["text"]
    assert sorted(withdraw_window(store, "credit", day0)) == sorted([fp_win, fp_feu])  # attempt 3 starts
    assert ob.notify_findings([dp_finding(0)], ctx(0), channels=CH) == [fp_win]  # raised again, its new text
    assert store.outbox_get(fp_win).payload["text"] != old_text
    rec = store.outbox_get(fp_data)
    assert rec.state == "withdrawn" and "new attempt of window" in rec.last_error
    (fp_later,) = ob.notify_findings([rumie_finding(3)], ctx(3), channels=CH)  # an earlier attempt's, day 3
    report = Outbox(store, sender).deliver(up_to=day0)
    assert report.sent == [fp_win] and len(slack_server.posted(CH)) == 1
    assert store.outbox_get(fp_later).state == "pending"  # waits for day 3's own attempt
    assert "dp_difference" in slack_server.posted(CH)[0]["text"] + str(slack_server.posted(CH)[0].get("blocks"))
    assert store.outbox_get(fp_feu).state == "withdrawn"
    # a reply queued under a message that is then withdrawn never goes out
    (fp_2,) = ob.notify_findings([rumie_finding(2)], ctx(2), channels=CH)
    fp_reply = ob.notify_feu({"candidates": []}, ctx(2), parent_finding=rumie_finding(2), channel=CH)
    assert set(withdraw_window(store, "credit", ctx(2).window_start)) == {fp_2, fp_reply}
    fp_reply_again = ob.notify_feu({"candidates": []}, ctx(2), parent_finding=rumie_finding(2), channel=CH)
    assert fp_reply_again == fp_reply  # re-raised without its parent
    report = Outbox(store, sender).deliver(up_to=ctx(2).window_start)
    assert report.withdrawn == [fp_reply] and report.sent == [] and store.outbox_get(fp_reply).state == "withdrawn"


def test_a_claim_of_a_killed_delivery_is_taken_over_before_airflows_retry(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Session 24 (an on-call tryout): the alert task was killed mid-send; its retry 300 s later (Airflow's
    default delay) found the claim live (600 s) and sent nothing, reporting delivered: True. A claim now
    goes stale after STALE_CLAIM_S (180 s), below the default retry delay."""
    from fairmon.store import STALE_CLAIM_S

    assert STALE_CLAIM_S < 300
    ob = Outbox(store, sender)
    (fp,) = ob.notify_findings([rumie_finding()], ctx(0), channels=CH)
    assert store.outbox_transition(fp, "pending", "sending")  # the killed worker's claim
    assert ob.deliver().sent == []  # a live claim is left alone
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE alerts SET updated_at = now() - make_interval(secs => :s) WHERE fingerprint = :fp"),
                     {"s": STALE_CLAIM_S + 20, "fp": fp})
    rep = ob.deliver()  # the retry, 200 s later
    assert rep.sent == [fp] and len(slack_server.posted(CH)) == 1


def test_the_alert_step_says_what_another_delivery_holds(store, slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Session 24 review: the alert step reported delivered: True while its alert sat claimed by a killed
    delivery; it now counts those (in_flight) and says delivered only when nothing is left."""
    from datetime import timedelta
    from types import SimpleNamespace

    from fairmon.alerts.dispatch import deliver
    from fairmon.window import Window

    ob = Outbox(store, sender)
    (fp,) = ob.notify_findings([rumie_finding()], ctx(0), channels=CH)
    assert store.outbox_transition(fp, "pending", "sending")  # a live claim (or a killed one, < 180 s old)
    start = rumie_finding().window_start
    run = SimpleNamespace(monitor="credit", window=Window("credit", start, start + timedelta(days=1)), store=store)
    out = deliver(run, ob)  # type: ignore[arg-type]
    assert out["in_flight"] == 1 and out["delivered"] is False and out["sent"] == 0
    assert store.outbox_transition(fp, "sending", "pending")
    out = deliver(run, ob)  # type: ignore[arg-type]
    assert out == {**out, "in_flight": 0, "delivered": True, "sent": 1}
