"""The Slack outbox: one row per alert fingerprint, moved through its states by compare-and-set.

State machine: pending → sending → sent | failed | pending (retry); failed → pending (requeue);
sending → sending (reclaim a stale claim). ``sent`` clears ``last_error``: a delivered alert carries
no error of an earlier attempt.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from fairmon.store._base import StoreBase
from fairmon.store._rows import alert_from_row, alert_select, jsonable
from fairmon.store._tables import alerts as alerts_table
from fairmon.store._tables import monitors
from fairmon.store.records import AlertRecord, AlertState, RecordError, utc

__all__ = ["ALLOWED_TRANSITIONS", "ERR_TRANSITION", "STALE_CLAIM_S", "Outbox"]

ERR_TRANSITION = "outbox transition {from_state} -> {to_state} is not allowed (allowed: {allowed})"
#: a ``sending`` claim older than this is a delivery that died (its worker was killed) and is reclaimed.
#: A send normally takes seconds (a lookup, a post, at most a 10 s rate-limit wait); 600 s outlived
#: Airflow's default 300 s retry delay, so a killed alert task's retry found its own claim still live and
#: sent nothing until the next day's run (an on-call tryout). A reclaim looks the message up by its
#: fingerprint before posting, which finds a post that landed; a live send still running after 180 s (a
#: degraded Slack: 30 s timeouts, retries, paged lookups) can be doubled — the accepted cost. With
#: ``execution.retry_delay_s`` below 180 s a killed send waits for a later delivery.
STALE_CLAIM_S = 180.0

#: outbox state machine: pending → sending → sent | failed | pending (retry); failed → pending (requeue);
#: sending → sending (reclaim a stale claim; pass ``expected_attempts`` to make it a true CAS); pending →
#: withdrawn (a later attempt of its window no longer raises it) → pending (raised again)
ALLOWED_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "pending": ("sending", "withdrawn"),
    "sending": ("sent", "failed", "pending", "sending"),
    "failed": ("pending",),
    "withdrawn": ("pending",),
    "sent": (),
}

_A = alerts_table.c


def _claim_is_stale(stale_after_s: float) -> sa.ColumnElement[bool]:
    return _A.updated_at < sa.func.now() - sa.func.make_interval(0, 0, 0, 0, 0, 0, float(stale_after_s))


def _state_change(to_state: str, *, slack_ts: str | None, error: str | None) -> dict[str, Any]:
    """The columns a move to ``to_state`` sets besides ``state`` and ``attempts``."""
    values: dict[str, Any] = {"updated_at": sa.func.now()}
    if slack_ts is not None:
        values["slack_ts"] = slack_ts
    if to_state == "sent":
        values["sent_at"] = sa.func.now()
        values["last_error"] = None  # delivered: an earlier attempt's error no longer describes it
    elif error is not None:
        values["last_error"] = error
    return values


class Outbox(StoreBase):
    """:meth:`outbox_enqueue`, :meth:`outbox_claim`, :meth:`outbox_transition`, :meth:`alerts`, …"""

    def outbox_enqueue(self, alert: AlertRecord) -> bool:
        """Insert the alert if its fingerprint is new; ``False`` (and no change) when it already exists.

        This is what makes a retried task never alert twice: the fingerprint is derived from (monitor,
        window, finding), so a re-run enqueues the same fingerprint and gets ``False``. A ``withdrawn``
        alert raised again is queued again, and a still ``pending`` one whose message changed (a re-run
        found something else) takes the new message (both ``True``;
        :func:`fairmon.alerts.outbox.withdraw_window`). A claimed or sent alert never changes.

        Examples
        --------
        >>> store.outbox_enqueue(AlertRecord("fp-1", "fairness", {"text": "DP 0.21"}, monitor="demo"))  # doctest: +SKIP
        True
        """
        with self._tx(alert.monitor) as conn:
            mid = self._ensure_monitor(conn, alert.monitor) if alert.monitor else None
            stmt = pg_insert(alerts_table).values(
                fingerprint=alert.fingerprint,
                kind=alert.kind,
                monitor_id=mid,
                run_id=alert.run_id,
                window_start=alert.window_start,
                severity=alert.severity,
                channel=alert.channel,
                payload=jsonable(alert.payload),
                state=alert.state,
                attempts=alert.attempts,
                last_error=alert.last_error,
                slack_ts=alert.slack_ts,
                thread_ts=alert.thread_ts,
            )
            # a fingerprint seen before is left alone, unless it was withdrawn (raised again: queued again)
            # or is still pending with other content (a re-run's window message says what the re-run found)
            insert = stmt.on_conflict_do_update(
                index_elements=["fingerprint"],
                set_={"state": "pending", "payload": stmt.excluded.payload, "run_id": stmt.excluded.run_id,
                      "severity": stmt.excluded.severity, "last_error": None, "updated_at": sa.func.now()},
                where=sa.or_(_A.state == "withdrawn",
                             sa.and_(_A.state == "pending", _A.payload != stmt.excluded.payload)),
            ).returning(_A.alert_id)
            return conn.execute(insert).first() is not None

    def outbox_get(self, fingerprint: str) -> AlertRecord | None:
        """The alert with this fingerprint, or ``None``.

        Examples
        --------
        >>> store.outbox_get("fp-1").state  # doctest: +SKIP
        'pending'
        """
        with self._read() as conn:
            row = conn.execute(alert_select().where(_A.fingerprint == fingerprint)).mappings().first()
        return None if row is None else alert_from_row(row)

    def outbox_pending(
        self, limit: int = 100, *, stale_after_s: float = STALE_CLAIM_S, monitor: str | None = None,
        up_to: datetime | None = None,
    ) -> list[AlertRecord]:
        """Alerts to deliver: ``pending`` ones plus ``sending`` ones whose claim is older than
        ``stale_after_s`` (a worker died mid-send), oldest first; only ``monitor``'s when given, only
        windows starting at or before ``up_to`` when given.

        Examples
        --------
        >>> [a.fingerprint for a in store.outbox_pending(monitor="demo")]  # doctest: +SKIP
        ['fp-1']
        """
        stmt = alert_select().where(
            sa.or_(_A.state == "pending", sa.and_(_A.state == "sending", _claim_is_stale(stale_after_s)))
        )
        if monitor is not None:
            stmt = stmt.where(monitors.c.name == monitor)
        if up_to is not None:  # windows starting at or before it (alerts without a window too)
            stmt = stmt.where(sa.or_(_A.window_start.is_(None), _A.window_start <= up_to))
        stmt = stmt.order_by(_A.created_at, _A.alert_id).limit(int(limit))
        with self._read(monitor) as conn:
            return [alert_from_row(r) for r in conn.execute(stmt).mappings()]

    def outbox_window_pending(self, monitor: str, window_start: datetime) -> list[AlertRecord]:
        """The still-``pending`` alerts of one window of ``monitor``, oldest first.

        Examples
        --------
        >>> store.outbox_window_pending("demo", datetime(2026, 1, 2, tzinfo=UTC))  # doctest: +SKIP
        []
        """
        stmt = alert_select().where(monitors.c.name == monitor, _A.window_start == window_start,
                                    _A.state == "pending").order_by(_A.created_at, _A.alert_id)
        with self._read(monitor) as conn:
            return [alert_from_row(r) for r in conn.execute(stmt).mappings()]

    def outbox_transition(
        self,
        fingerprint: str,
        from_state: AlertState,
        to_state: AlertState,
        *,
        slack_ts: str | None = None,
        error: str | None = None,
        expected_attempts: int | None = None,
        release: bool = False,
    ) -> bool:
        """Compare-and-set the alert's state; ``True`` only for the caller whose expectation held.

        Moving to ``sending`` increments ``attempts`` (the claim); ``sent`` stamps ``sent_at`` and
        clears ``last_error``; ``slack_ts`` / ``error`` are recorded when given. Two workers racing for
        the same pending alert: exactly one gets ``True``. ``expected_attempts`` additionally pins the
        attempt count (for reclaiming a stale ``sending`` claim safely). ``release`` (``sending`` →
        ``pending``) gives the claim back uncounted: nothing reached Slack (a bad token or channel).

        Examples
        --------
        >>> store.outbox_transition("fp-1", "pending", "sending")  # doctest: +SKIP
        True
        >>> store.outbox_transition("fp-1", "sending", "sent", slack_ts="1712.1")  # doctest: +SKIP
        True
        """
        allowed = ALLOWED_TRANSITIONS.get(from_state)
        if allowed is None or to_state not in allowed:
            raise RecordError(
                ERR_TRANSITION.format(
                    from_state=from_state, to_state=to_state, allowed=", ".join(allowed or ()) or "none"
                )
            )
        if to_state == "sending":
            delta = 1
        else:
            delta = -1 if release and from_state == "sending" else 0
        stmt = (
            sa.update(alerts_table)
            .where(_A.fingerprint == fingerprint, _A.state == from_state)
            .values(
                state=to_state,
                attempts=sa.func.greatest(_A.attempts + delta, 0),
                **_state_change(to_state, slack_ts=slack_ts, error=error),
            )
        )
        if expected_attempts is not None:
            stmt = stmt.where(_A.attempts == int(expected_attempts))
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def outbox_claim(self, fingerprint: str, *, stale_after_s: float = STALE_CLAIM_S) -> bool:
        """Atomically claim an alert for sending: ``pending`` → ``sending``, or re-claim a ``sending``
        alert whose claim is older than ``stale_after_s`` (its worker died). ``attempts`` + 1.

        Exactly one of several concurrent claimers gets ``True``.

        Examples
        --------
        >>> store.outbox_claim("fp-1")  # doctest: +SKIP
        True
        """
        stmt = (
            sa.update(alerts_table)
            .where(
                _A.fingerprint == fingerprint,
                sa.or_(_A.state == "pending", sa.and_(_A.state == "sending", _claim_is_stale(stale_after_s))),
            )
            .values(state="sending", attempts=_A.attempts + 1, updated_at=sa.func.now())
        )
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def outbox_mark(
        self, fingerprint: str, state: AlertState, *, slack_ts: str | None = None, error: str | None = None
    ) -> bool:
        """Set the state whatever it was (admin/compat); prefer :meth:`outbox_transition`.

        Examples
        --------
        >>> store.outbox_mark("fp-1", "failed", error="channel_not_found")  # doctest: +SKIP
        True
        """
        stmt = (
            sa.update(alerts_table)
            .where(_A.fingerprint == fingerprint)
            .values(
                state=state,
                attempts=_A.attempts + (1 if state == "sending" else 0),
                **_state_change(state, slack_ts=slack_ts, error=error),
            )
        )
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def set_thread_ts(self, fingerprint: str, thread_ts: str) -> bool:
        """Remember the Slack thread an alert's follow-ups (FEU candidates, resolution) go to.

        Examples
        --------
        >>> store.set_thread_ts("fp-1", "1712.1")  # doctest: +SKIP
        True
        """
        stmt = (
            sa.update(alerts_table)
            .where(_A.fingerprint == fingerprint)
            .values(thread_ts=thread_ts, updated_at=sa.func.now())
        )
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def alerts(self, monitor: str | None = None, *, since: datetime | None = None) -> list[AlertRecord]:
        """Alert history (all states), oldest first.

        Examples
        --------
        >>> [a.state for a in store.alerts("demo")]  # doctest: +SKIP
        ['sent']
        """
        stmt = alert_select()
        if monitor is not None:
            stmt = stmt.where(monitors.c.name == monitor)
        if since is not None:
            stmt = stmt.where(_A.created_at >= utc(since, name="since"))
        with self._read(monitor) as conn:
            return [
                alert_from_row(r) for r in conn.execute(stmt.order_by(_A.created_at, _A.alert_id)).mappings()
            ]
