"""The alert outbox: exactly one Slack message per fingerprint, across retries, re-runs and crashes.

States (the store's ``alerts`` table): ``pending → sending → sent | failed``; a transient failure
puts the alert back to ``pending`` (re-delivered on the next run); so does a configuration failure
(bad token or channel: the message is fine, it goes out once the configuration is fixed), without
counting the attempt; only Slack refusing the message itself makes it ``failed``. A ``sending`` row
older than ``stale_after_s`` is a crashed delivery and is reclaimed. A delivery can be limited to one
monitor's alerts: each monitor may have its own token and channel, so a run never sends (or burns)
another monitor's queue.

Why no duplicates
-----------------
1. A re-run or retried task enqueues the same fingerprint (derived from monitor and window: one
   message per window, :mod:`fairmon.alerts.grouping`) and the repository refuses the second insert.
2. Claiming is compare-and-set (``pending → sending``), so two workers never post the same alert.
3. If a worker crashed after Slack accepted the message but before ``sent`` was committed, the row is
   left in ``sending``. Before re-posting such a row (or any row with earlier attempts), the outbox
   searches ``conversations.history`` (a thread reply: ``conversations.replies``) for the fingerprint
   in the message metadata and, when found, records that ``ts`` instead of posting again. The sender
   does the same inside one delivery when a post's reply is lost (5xx, dropped connection).

The repository is a small protocol; :class:`fairmon.store.Store` implements it on Postgres and
:class:`InMemoryOutboxRepository` in memory (unit tests, dry runs).

Example
-------
>>> repo = InMemoryOutboxRepository()
>>> from fairmon.store.records import AlertRecord
>>> repo.outbox_enqueue(AlertRecord("fp-1", kind="fairness", payload={}))
True
>>> repo.outbox_enqueue(AlertRecord("fp-1", kind="fairness", payload={}))
False
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from fairmon.alerts.grouping import MessagePlan, plan_messages, window_fingerprint
from fairmon.alerts.render import (
    AlertContext,
    SlackMessage,
    render_data_validation,
    render_feu_followup,
)
from fairmon.alerts.slack import RateLimitedError
from fairmon.alerts.window_message import render_resolution, render_window
from fairmon.drift.findings import SEVERITIES, Finding, Severity, finding_fingerprint, severity_at_least
from fairmon.errors import AlertDeliveryError
from fairmon.store import STALE_CLAIM_S
from fairmon.store.records import AlertRecord

__all__ = [
    "OutboxRepository",
    "MessageSender",
    "InMemoryOutboxRepository",
    "Outbox",
    "DeliveryReport",
    "alert_fingerprint",
    "withdraw_window",
    "ERR_TRANSITION",
]

ERR_TRANSITION = "outbox transition {from_state} -> {to_state} is not allowed (allowed: {allowed})"
_ALLOWED = {"pending": ("sending", "withdrawn"), "sending": ("sent", "failed", "pending", "sending"),
            "failed": ("pending",), "withdrawn": ("pending",), "sent": ()}

_log = logging.getLogger(__name__)


class OutboxRepository(Protocol):
    """What the outbox needs from storage (``fairmon.store.Store`` implements it)."""

    def outbox_enqueue(self, alert: AlertRecord) -> bool: ...

    def outbox_get(self, fingerprint: str) -> AlertRecord | None: ...

    def outbox_pending(
        self, limit: int = 100, *, stale_after_s: float = STALE_CLAIM_S, monitor: str | None = None,
        up_to: datetime | None = None,
    ) -> list[AlertRecord]: ...

    def outbox_transition(
        self, fingerprint: str, from_state: Any, to_state: Any, *, slack_ts: str | None = None,
        error: str | None = None, expected_attempts: int | None = None, release: bool = False,
    ) -> bool: ...

    def set_thread_ts(self, fingerprint: str, thread_ts: str) -> bool: ...

    def outbox_window_pending(self, monitor: str, window_start: datetime) -> list[AlertRecord]: ...


class MessageSender(Protocol):
    """What the outbox needs from Slack (:class:`~fairmon.alerts.slack.SlackSender`)."""

    def post(self, channel: str, message: SlackMessage, *, thread_ts: str | None = None,
             reply_broadcast: bool | None = None) -> str: ...

    def find(self, channel: str, fingerprint: str, *, oldest: str | None = None,
             thread_ts: str | None = None) -> str | None: ...


def alert_fingerprint(finding_fingerprint: str, channel: str) -> str:
    """Outbox key of one finding in one channel (a finding may go to several channels).

    >>> alert_fingerprint("abc", "#fairness") == alert_fingerprint("abc", "#fairness")
    True
    """
    return hashlib.sha256(f"{finding_fingerprint}|{channel}".encode()).hexdigest()[:32]


def _per_channel(msg: SlackMessage, channel: str) -> SlackMessage:
    """The message under its per-channel fingerprint (in the outbox row and the Slack metadata)."""
    fp = alert_fingerprint(msg.fingerprint, channel)
    meta = {**msg.metadata, "event_payload": {**msg.metadata.get("event_payload", {}), "fingerprint": fp}}
    return dataclasses.replace(msg, fingerprint=fp, metadata=meta)


class InMemoryOutboxRepository:
    """The outbox protocol in memory, with the store's semantics (unit tests and dry runs).

    ``clock`` returns seconds (monotonic by default) and decides staleness of ``sending`` rows.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._rows: dict[str, AlertRecord] = {}
        self._claimed_at: dict[str, float] = {}
        self._order: list[str] = []
        self._clock = clock

    def outbox_enqueue(self, alert: AlertRecord) -> bool:
        old = self._rows.get(alert.fingerprint)
        if old is not None and not (old.state == "withdrawn" or old.state == "pending" and old.payload != alert.payload):
            return False
        if old is not None:  # raised again, or a re-run's other message: queued with this attempt's message
            self._rows[alert.fingerprint] = dataclasses.replace(old, payload=alert.payload, run_id=alert.run_id,
                                                                severity=alert.severity, state="pending",
                                                                last_error=None)
            return True
        self._rows[alert.fingerprint] = dataclasses.replace(alert, created_at=datetime.now(UTC))
        self._order.append(alert.fingerprint)
        return True

    def outbox_get(self, fingerprint: str) -> AlertRecord | None:
        return self._rows.get(fingerprint)

    def outbox_pending(
        self, limit: int = 100, *, stale_after_s: float = STALE_CLAIM_S, monitor: str | None = None,
        up_to: datetime | None = None,
    ) -> list[AlertRecord]:
        now = self._clock()
        out = []
        for fp in self._order:
            r = self._rows[fp]
            if monitor is not None and r.monitor != monitor:
                continue
            if up_to is not None and r.window_start is not None and r.window_start > up_to:
                continue
            if r.state == "pending" or (r.state == "sending" and now - self._claimed_at.get(fp, now) >= stale_after_s):
                out.append(r)
        return out[:limit]

    def outbox_transition(
        self, fingerprint: str, from_state: Any, to_state: Any, *, slack_ts: str | None = None,
        error: str | None = None, expected_attempts: int | None = None, release: bool = False,
    ) -> bool:
        allowed = _ALLOWED.get(from_state)
        if allowed is None or to_state not in allowed:
            raise AlertDeliveryError(ERR_TRANSITION.format(from_state=from_state, to_state=to_state,
                                                           allowed=", ".join(allowed or ()) or "none"))
        r = self._rows.get(fingerprint)
        if r is None or r.state != from_state:
            return False
        if expected_attempts is not None and r.attempts != expected_attempts:
            return False
        changes: dict[str, Any] = {"state": to_state, "updated_at": datetime.now(UTC)}
        if to_state == "sending":
            changes["attempts"] = r.attempts + 1
            self._claimed_at[fingerprint] = self._clock()
        elif release and from_state == "sending":
            changes["attempts"] = max(r.attempts - 1, 0)
        if to_state == "sent":  # a sent message has no error (as the Postgres outbox does)
            changes["sent_at"] = datetime.now(UTC)
            changes["last_error"] = None
        if slack_ts is not None:
            changes["slack_ts"] = slack_ts
        if error is not None:
            changes["last_error"] = error
        self._rows[fingerprint] = dataclasses.replace(r, **changes)
        return True

    def set_thread_ts(self, fingerprint: str, thread_ts: str) -> bool:
        r = self._rows.get(fingerprint)
        if r is None:
            return False
        self._rows[fingerprint] = dataclasses.replace(r, thread_ts=thread_ts)
        return True

    def outbox_window_pending(self, monitor: str, window_start: datetime) -> list[AlertRecord]:
        return [r for fp in self._order if (r := self._rows[fp]).monitor == monitor
                and r.window_start == window_start and r.state == "pending"]

    def all(self) -> list[AlertRecord]:
        """Every row in insertion order (tests)."""
        return [self._rows[fp] for fp in self._order]


def withdraw_window(repository: OutboxRepository, monitor: str, window_start: datetime) -> list[str]:
    """Withdraw a window's still-queued alerts when a new attempt of the window starts; their fingerprints.

    A window re-run (a data fix, an out-of-order run, a changed drift history) recomputes what it says,
    but the first attempt's queued messages stayed in the outbox and the next delivery posted them: "data
    validation failed" for a window that is now fine, a drift the re-run does not open (a new user,
    session 23). They move to ``withdrawn`` (never sent; ``last_error`` says why); whatever the new
    attempt raises again is queued again (:meth:`Outbox.enqueue`), with that attempt's text. An alert
    being sent, or sent, stays as it is.
    """
    out = []
    reason = f"withdrawn: a new attempt of window {window_start:%Y-%m-%dT%H:%M}Z started; it queues what it still finds"
    for rec in repository.outbox_window_pending(monitor, window_start):
        if repository.outbox_transition(rec.fingerprint, "pending", "withdrawn", error=reason):
            out.append(rec.fingerprint)
    if out:
        _log.info("%s %s: withdrew %d queued alert(s) of the window's earlier attempt", monitor,
                  f"{window_start:%Y-%m-%dT%H:%M}Z", len(out))
    return out


def _routed_severity(f: Finding) -> Severity:
    """The severity a channel filter reads: a resolution standing for a whole alert (the drift policy held
    its other rules' resolutions) goes where the alert's most severe rule went."""
    alert = f.numbers.get("alert_severity") if f.status == "resolved" else None
    return alert if alert in SEVERITIES else f.severity  # type: ignore[return-value]


@dataclass
class DeliveryReport:
    """What one :meth:`Outbox.deliver` call did."""

    sent: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  #: found already in Slack, not re-posted
    deferred: list[str] = field(default_factory=list)  #: back to pending (outage, bad config, parent not sent)
    failed: list[str] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)  #: replies whose parent alert was withdrawn (never sent)
    error: str | None = None
    #: when Slack rate-limited beyond the sender's wait cap: the UTC time to deliver again (nothing was posted)
    retry_at: datetime | None = None


class Outbox:
    """Enqueue rendered alerts and deliver them exactly once.

    Parameters
    ----------
    repository : OutboxRepository
        The store (or :class:`InMemoryOutboxRepository`).
    sender : MessageSender
        Usually :class:`~fairmon.alerts.slack.SlackSender`.
    """

    def __init__(self, repository: OutboxRepository, sender: MessageSender | None = None) -> None:
        self.repository = repository
        self.sender = sender

    # ------------------------------------------------------------------ enqueue
    def enqueue(
        self, message: SlackMessage, *, channel: str, kind: str = "fairness", monitor: str | None = None,
        window_start: datetime | None = None, severity: str | None = None, run_id: int | None = None,
    ) -> bool:
        """Queue one message under its fingerprint; False when that fingerprint was queued before."""
        rec = AlertRecord(
            message.fingerprint, kind=kind,  # type: ignore[arg-type]
            payload=message.to_payload(), channel=channel, monitor=monitor,
            run_id=run_id, window_start=window_start, severity=severity,
        )
        return self.repository.outbox_enqueue(rec)

    def notify_findings(
        self,
        findings: Sequence[Finding],
        ctx: AlertContext,
        *,
        channels: str | Mapping[str, Severity],
        backfill: bool = False,
        notify: bool = False,
        run_id: int | None = None,
    ) -> list[str]:
        """Enqueue the window's messages: per channel, ONE message with the findings the policy marked
        ``notify`` at or above the channel's minimum severity (merged per phenomenon, see
        :mod:`fairmon.alerts.grouping`), and one resolution per earlier message whose drifts cleared
        (in that message's thread).

        ``channels`` is one channel name (minimum severity ``info``: the policy already filtered) or
        ``{channel: min_severity}``. Backfilled windows enqueue nothing unless ``notify`` is set
        (their findings are stored by the pipeline either way). Returns the fingerprints queued (new, raised
        again after a withdrawal, or a still-queued message given this attempt's text).
        """
        if backfill and not notify:
            return []
        routes: Mapping[str, Severity] = {channels: "info"} if isinstance(channels, str) else channels
        queued: list[str] = []
        for channel, min_sev in routes.items():
            chosen = [f for f in findings if f.notify and severity_at_least(_routed_severity(f), min_sev)]
            for plan in plan_messages(chosen):
                fp = alert_fingerprint(plan.fingerprint, channel)
                if plan.kind == "window":
                    msg = render_window(plan, ctx, fingerprint=fp)
                else:
                    msg = render_resolution(plan, ctx, fingerprint=fp, thread_of=self._parent_of(plan, channel))
                if self.enqueue(msg, channel=channel, monitor=plan.monitor, window_start=plan.window_start,
                                severity=plan.severity, run_id=run_id):
                    queued.append(fp)
        return queued

    def _parent_of(self, plan: MessagePlan, channel: str) -> str:
        """The outbox fingerprint a resolution replies to: the message of its ``since`` window, or — for a
        drift opened before messages were grouped per window — the opening finding's own message."""
        parent = alert_fingerprint(plan.parent_fingerprint or plan.fingerprint, channel)
        if self.repository.outbox_get(parent) is None and plan.since is not None:
            for f in plan.findings:
                legacy = alert_fingerprint(finding_fingerprint(f.monitor, plan.since, f.key, "open"), channel)
                if self.repository.outbox_get(legacy) is not None:
                    return legacy
        return parent

    def notify_feu(
        self, feu: Mapping[str, Any], ctx: AlertContext, *, parent_finding: Finding | None, channel: str,
        run_id: int | None = None,
    ) -> str | None:
        """Queue the FEU candidates as a threaded reply to the window message holding ``parent_finding``.

        Without a parent (FEU requested at a window without an alerted drift) the candidates go out as
        a message of their own, once per window and channel.
        """
        if parent_finding is not None:
            parent = alert_fingerprint(window_fingerprint(parent_finding.monitor, parent_finding.window_start),
                                       channel)
            msg = render_feu_followup(feu, ctx, parent_fingerprint=parent)
        else:
            msg = _per_channel(render_feu_followup(feu, ctx, parent_fingerprint=None), channel)
        ok = self.enqueue(msg, channel=channel, monitor=ctx.monitor, window_start=ctx.window_start,
                          severity="info", run_id=run_id)
        return msg.fingerprint if ok else None

    def notify_data_validation(
        self, failed: Sequence[Mapping[str, Any]], ctx: AlertContext, *, channel: str, backfill: bool = False,
        notify: bool = False, run_id: int | None = None,
    ) -> str | None:
        """Queue the data-validation alert of a window (same outbox and sender, own template)."""
        if backfill and not notify:
            return None
        msg = _per_channel(render_data_validation(failed, ctx), channel)
        ok = self.enqueue(msg, channel=channel, kind="data", monitor=ctx.monitor, window_start=ctx.window_start,
                          severity="critical", run_id=run_id)
        return msg.fingerprint if ok else None

    # ------------------------------------------------------------------ deliver
    def deliver(
        self, *, monitor: str | None = None, limit: int = 100, stale_after_s: float = STALE_CLAIM_S,
        up_to: datetime | None = None,
    ) -> DeliveryReport:
        """Send what is pending (and reclaim stale ``sending`` rows) — only ``monitor``'s alerts when given,
        and with ``up_to`` only those of windows starting at or before it (a window's run delivers its own
        and earlier windows' alerts: re-running a range, the later windows' queued alerts wait for their
        own attempt, which withdraws or re-raises them, instead of going out before it).

        A transient failure (outage, retries exhausted) puts the alert back to ``pending`` and ends this
        run (``report.error`` says why). A configuration failure (``invalid_auth``,
        ``channel_not_found``, ...) also leaves the alert ``pending`` — the attempt not counted, the
        error in ``last_error`` — and raises :class:`~fairmon.errors.AlertDeliveryError` naming the
        channel, at once: the alert goes out once the token or channel is fixed. Slack refusing the
        message itself (``invalid_blocks``, ``msg_too_long``, ...) marks it ``failed`` and raises.
        """
        if self.sender is None:
            raise AlertDeliveryError("the outbox has no sender configured")
        repo, report = self.repository, DeliveryReport()
        for rec in repo.outbox_pending(limit, stale_after_s=stale_after_s, monitor=monitor, up_to=up_to):
            fp = rec.fingerprint
            parent_fp = (rec.payload or {}).get("thread_of")
            if rec.state == "pending" and parent_fp and (p := repo.outbox_get(parent_fp)) is not None and (
                    p.state == "withdrawn"):
                repo.outbox_transition(fp, "pending", "withdrawn", error="withdrawn: its parent alert was withdrawn")
                report.withdrawn.append(fp)
                continue
            if not repo.outbox_transition(fp, rec.state, "sending", expected_attempts=rec.attempts):
                continue  # another worker claimed it
            claimed = repo.outbox_get(fp)  # the text as claimed: a re-run may have replaced it while queued
            msg = SlackMessage.from_payload((claimed or rec).payload)
            channel = rec.channel or ""
            try:
                # a reply is looked for in its thread: conversations.history does not list thread replies
                parent = repo.outbox_get(msg.thread_of) if msg.thread_of else None
                parent_ts = (parent.thread_ts or parent.slack_ts) if parent is not None else None
                ts = (self.sender.find(channel, fp, thread_ts=parent_ts)
                      if rec.attempts > 0 or rec.state == "sending" else None)
                root = parent_ts  # the thread a reply is in (alerts.thread_ts; a root message: its own ts)
                if ts is not None:
                    report.recovered.append(fp)
                else:
                    thread_ts = None
                    if msg.thread_of:
                        parent = repo.outbox_get(msg.thread_of)
                        if parent is not None and parent.state != "sent":
                            repo.outbox_transition(fp, "sending", "pending", error="waiting for the parent alert")
                            report.deferred.append(fp)
                            continue
                        if parent is not None:
                            thread_ts = root = parent.thread_ts or parent.slack_ts
                    broadcast = True if thread_ts and msg.extra.get("broadcast") else None
                    ts = self.sender.post(channel, msg, thread_ts=thread_ts, reply_broadcast=broadcast)
                    report.sent.append(fp)
            except AlertDeliveryError as exc:
                if exc.retryable:
                    repo.outbox_transition(fp, "sending", "pending", error=str(exc))
                    report.deferred.append(fp)
                    report.error = str(exc)
                    report.retry_at = exc.retry_at if isinstance(exc, RateLimitedError) else None
                    _log.warning("alert delivery deferred: %s", exc)
                    break
                if exc.configuration:
                    repo.outbox_transition(fp, "sending", "pending", error=str(exc), release=True)
                    report.deferred.append(fp)
                    _log.error("alert delivery stopped, alerts stay queued: %s", exc)
                    raise
                repo.outbox_transition(fp, "sending", "failed", error=str(exc))
                report.failed.append(fp)
                raise
            repo.outbox_transition(fp, "sending", "sent", slack_ts=ts)
            if not msg.thread_of:
                repo.set_thread_ts(fp, ts)
            elif root:  # a reply records its thread too (it was left empty: an on-call tryout, session 24)
                repo.set_thread_ts(fp, root)
        return report
