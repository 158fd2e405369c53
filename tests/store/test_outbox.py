"""Alert outbox: fingerprint dedup and compare-and-set state transitions."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa
from store_seed import day

from fairmon.store import AlertRecord, RecordError, Store

pytestmark = pytest.mark.postgres


def alert(fp: str = "fp-1", **kw) -> AlertRecord:  # type: ignore[no-untyped-def]
    return AlertRecord(
        fp,
        kind="fairness",
        payload={"text": "DP difference 0.21 for sex"},
        channel="#fairness",
        monitor="demo",
        window_start=day(3),
        severity="warning",
        **kw,
    )


def test_enqueue_is_idempotent_on_fingerprint(store: Store) -> None:
    assert store.outbox_enqueue(alert()) is True
    assert store.outbox_enqueue(alert()) is False  # a retried task: nothing changes
    a = store.outbox_get("fp-1")
    assert a is not None
    assert (a.kind, a.payload, a.state, a.attempts, a.monitor, a.window_start) == (
        "fairness",
        {"text": "DP difference 0.21 for sex"},
        "pending",
        0,
        "demo",
        day(3),
    )
    assert store.outbox_get("nope") is None
    # a re-run that found something else while the message is still queued: it goes out with the new text
    assert store.outbox_enqueue(AlertRecord("fp-1", kind="fairness", payload={"text": "DP difference 0.05 for sex"},
                                            monitor="demo", window_start=day(3), severity="info")) is True
    assert store.outbox_get("fp-1").payload == {"text": "DP difference 0.05 for sex"}  # type: ignore[union-attr]
    # once claimed (or sent) it never changes
    assert store.outbox_transition("fp-1", "pending", "sending") is True
    assert store.outbox_enqueue(alert()) is False
    assert store.outbox_get("fp-1").payload == {"text": "DP difference 0.05 for sex"}  # type: ignore[union-attr]


def test_withdrawn_alerts_are_never_claimed_and_come_back_when_raised_again(store: Store) -> None:
    """Session 23: a window's pending alert that a later attempt no longer raises is withdrawn, not sent."""
    store.outbox_enqueue(alert())
    assert [a.fingerprint for a in store.outbox_window_pending("demo", day(3))] == ["fp-1"]
    assert store.outbox_window_pending("demo", day(4)) == [] and store.outbox_window_pending("other", day(3)) == []
    assert store.outbox_transition("fp-1", "pending", "withdrawn", error="withdrawn: ...") is True
    assert store.outbox_pending(monitor="demo") == [] and store.outbox_window_pending("demo", day(3)) == []
    assert store.outbox_get("fp-1").last_error == "withdrawn: ..."  # type: ignore[union-attr]
    assert store.outbox_enqueue(alert()) is True  # raised again
    a = store.outbox_get("fp-1")
    assert a is not None and (a.state, a.last_error) == ("pending", None)


def test_transitions_are_compare_and_set(store: Store) -> None:
    store.outbox_enqueue(alert())
    assert store.outbox_transition("fp-1", "pending", "sending") is True
    assert store.outbox_transition("fp-1", "pending", "sending") is False  # someone else holds it
    assert store.outbox_get("fp-1").attempts == 1  # type: ignore[union-attr]
    assert store.outbox_transition("fp-1", "sending", "pending", error="rate limited") is True
    assert store.outbox_transition("fp-1", "pending", "sending") is True
    assert store.outbox_transition("fp-1", "sending", "sent", slack_ts="1700000000.000100") is True
    a = store.outbox_get("fp-1")
    assert a is not None
    # sent clears the error of the earlier attempt (issue 15 item 13): a delivered alert carries none
    assert (a.state, a.attempts, a.slack_ts, a.last_error) == ("sent", 2, "1700000000.000100", None)
    assert a.sent_at is not None
    assert store.outbox_transition("fp-1", "sending", "sent") is False
    with pytest.raises(RecordError, match="outbox transition sent -> pending is not allowed"):
        store.outbox_transition("fp-1", "sent", "pending")
    assert store.set_thread_ts("fp-1", "1700000000.000100") is True
    assert store.outbox_get("fp-1").thread_ts == "1700000000.000100"  # type: ignore[union-attr]


def test_pending_includes_stale_claims_only(store: Store) -> None:
    for fp in ("a", "b", "c", "d"):
        store.outbox_enqueue(alert(fp))
    store.outbox_transition("b", "pending", "sending")
    store.outbox_transition("c", "pending", "sending")
    store.outbox_transition("c", "sending", "sent")
    store.outbox_transition("d", "pending", "sending")
    store.outbox_transition("d", "sending", "failed", error="channel_not_found")
    assert [a.fingerprint for a in store.outbox_pending()] == ["a"]
    with store.engine.begin() as conn:  # make b's claim old: its worker died
        conn.execute(
            sa.text("UPDATE alerts SET updated_at = now() - interval '1 hour' WHERE fingerprint = 'b'")
        )
    assert [a.fingerprint for a in store.outbox_pending(stale_after_s=600)] == ["a", "b"]
    # reclaiming a stale claim is a CAS on the attempt count: only one reclaimer wins
    assert store.outbox_transition("b", "sending", "sending", expected_attempts=1) is True
    assert store.outbox_transition("b", "sending", "sending", expected_attempts=1) is False
    assert store.outbox_transition("d", "failed", "pending") is True
    assert [a.fingerprint for a in store.alerts("demo")] == ["a", "b", "c", "d"]


def test_racing_claims_have_one_winner(store: Store) -> None:
    store.outbox_enqueue(alert())
    wins: list[bool] = []
    barrier = threading.Barrier(4)

    def claim() -> None:
        barrier.wait()
        wins.append(store.outbox_transition("fp-1", "pending", "sending"))

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(wins) == [False, False, False, True]
    assert store.outbox_get("fp-1").attempts == 1  # type: ignore[union-attr]


def test_claim_takes_pending_or_stale_sending(store: Store) -> None:
    store.outbox_enqueue(alert("x"))
    assert store.outbox_claim("x") is True
    assert store.outbox_claim("x") is False  # fresh claim held by someone else
    with store.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE alerts SET updated_at = now() - interval '1 hour' WHERE fingerprint = 'x'")
        )
    assert store.outbox_claim("x", stale_after_s=600) is True
    assert store.outbox_get("x").attempts == 2  # type: ignore[union-attr]
    store.outbox_transition("x", "sending", "sent", slack_ts="2.2")
    assert store.outbox_claim("x", stale_after_s=0) is False  # sent is final


def test_sent_clears_the_error_of_earlier_attempts(store: Store) -> None:
    """Issue 15 item 13: whichever way an alert becomes sent, it keeps no earlier attempt's error."""
    store.outbox_enqueue(alert("cas"))
    store.outbox_transition("cas", "pending", "sending")
    store.outbox_transition("cas", "sending", "failed", error="invalid_blocks")
    assert store.outbox_get("cas").last_error == "invalid_blocks"  # type: ignore[union-attr]
    store.outbox_transition("cas", "failed", "pending")
    store.outbox_transition("cas", "pending", "sending")
    assert store.outbox_get("cas").last_error == "invalid_blocks"  # type: ignore[union-attr]
    assert store.outbox_transition("cas", "sending", "sent", slack_ts="1.2") is True
    assert (store.outbox_get("cas").state, store.outbox_get("cas").last_error) == ("sent", None)  # type: ignore[union-attr]

    store.outbox_enqueue(alert("admin"))
    store.outbox_mark("admin", "pending", error="ratelimited")
    assert store.outbox_get("admin").last_error == "ratelimited"  # type: ignore[union-attr]
    assert store.outbox_mark("admin", "sent", slack_ts="1.3") is True
    assert store.outbox_get("admin").last_error is None  # type: ignore[union-attr]
