"""Slack routing and delivery of one window's messages: channel, route, outbox, deliver.

The one gate of every message kind (fairness findings, data validation, FEU follow-up): the spec's
``alerts`` section and the runtime settings say whether and where a message goes; the outbox
(:class:`~fairmon.alerts.outbox.Outbox`) makes a second enqueue a no-op and delivers once. What a
message says is :mod:`fairmon.alerts.render`'s; which window it is about comes in as a
:class:`DispatchContext` (the pipeline's :class:`~fairmon.pipeline.context.RunContext` is one).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from fairmon.alerts.outbox import Outbox
from fairmon.alerts.render import AlertContext
from fairmon.alerts.slack import TOKEN_ENV, SlackSender
from fairmon.config import resolve_runtime
from fairmon.drift.findings import Finding
from fairmon.errors import AlertDeliveryError
from fairmon.store import STALE_CLAIM_S

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.config import MonitorSpec
    from fairmon.store import Store
    from fairmon.window import Window

log = logging.getLogger(__name__)

__all__ = [
    "DispatchContext",
    "route",
    "outbox_for",
    "deliver",
    "rendered_alerts",
    "data_alert",
    "send_alerts",
    "send_followup",
    "NOTE_NO_TOKEN",
    "NOTE_NO_CHANNEL",
]

#: how many queued alerts a "no token" note counts at most
_MAX_QUEUED = 10_000
NOTE_NO_TOKEN = "no token: {env} unset; {queued} alert(s) stay queued"
NOTE_NO_CHANNEL = "monitor %s has no Slack channel (alerts.slack_channel / FAIRMON_SLACK_CHANNEL)"
_SEVERITY_ORDER = ("info", "warning", "critical")


class DispatchContext(Protocol):
    """What dispatch needs of a window's run: its spec, window, store and notification settings."""

    spec: MonitorSpec
    window: Window
    notify: bool

    @property
    def monitor(self) -> str: ...

    @property
    def store(self) -> Store: ...

    def token(self) -> str | None: ...


def route(ctx: DispatchContext) -> tuple[str | None, str | None]:
    """``(channel, None)`` where this window's messages go, or ``(None, reason)`` when none is queued.

    ``alerts.enabled: false`` keeps the Slack messages out of the outbox while runs, findings and
    candidates are still stored.
    """
    if not ctx.spec.alerts.enabled:
        return None, "alerts disabled"
    channel = resolve_runtime(ctx.spec).slack_channel
    if channel is None:
        log.warning(NOTE_NO_CHANNEL, ctx.monitor)
        return None, "no channel"
    return channel, None


def outbox_for(ctx: DispatchContext) -> Outbox:
    """The outbox over the store, with a Slack sender only when notifying and a token exists."""
    token = ctx.token()
    sender = SlackSender(token) if ctx.notify and token else None
    return Outbox(ctx.store, sender)


def deliver(ctx: DispatchContext, outbox: Outbox) -> dict[str, Any]:
    """Deliver this monitor's queued alerts (never another monitor's: each has its own token/channel).

    Notifying without a token sends nothing; the result's ``delivery`` says so and how many alerts
    stay queued, and a warning is logged, rather than the alerts silently waiting.
    """
    if outbox.sender is None:
        if not ctx.notify:
            return {"delivered": False}
        queued = len(ctx.store.outbox_pending(_MAX_QUEUED, monitor=ctx.monitor))
        note = NOTE_NO_TOKEN.format(env=TOKEN_ENV, queued=queued)
        if queued:
            log.warning("%s %s: Slack delivery skipped, %s", ctx.monitor, ctx.window.key, note)
        return {"delivered": False, "delivery": note}
    rep = outbox.deliver(monitor=ctx.monitor, up_to=ctx.window.start)
    # an alert another delivery holds ("sending"): a live one, or one whose worker was killed mid-send,
    # reclaimed once its claim is STALE_CLAIM_S old; "delivered" must not claim it went out
    recent = datetime.now(UTC) - timedelta(days=7)  # a claim is minutes old: not the monitor's whole history
    in_flight = [a.fingerprint for a in ctx.store.alerts(ctx.monitor, since=recent)
                 if a.state == "sending" and (a.window_start is None or a.window_start <= ctx.window.start)]
    if in_flight:
        log.warning("%s %s: %d alert(s) held by another delivery (a killed one is taken over after %.0f s, by "
                    "the next delivery of this monitor): %s", ctx.monitor, ctx.window.key, len(in_flight),
                    STALE_CLAIM_S, ", ".join(in_flight))
    return {
        "delivered": not (rep.deferred or rep.failed or rep.error or in_flight),
        "in_flight": len(in_flight),
        "sent": len(rep.sent),
        "recovered": len(rep.recovered),
        "deferred": len(rep.deferred),
        "failed": len(rep.failed),
        "delivery_error": rep.error,
    }


def _deliver_keeping_window(ctx: DispatchContext, outbox: Outbox, what: str) -> dict[str, Any]:
    """:func:`deliver`, but a Slack configuration error (bad token or channel) is reported, not raised:
    the alert stays pending in the outbox and goes out once the configuration is fixed, and the
    computed window keeps its status."""
    try:
        return deliver(ctx, outbox)
    except AlertDeliveryError as exc:
        if not exc.configuration:
            raise
        log.error("%s %s: the %s was not delivered (the window keeps its status): %s",
                  ctx.monitor, ctx.window.key, what, exc)
        return {"delivered": False, "delivery_error": str(exc), "configuration_error": True}


def rendered_alerts(
    ctx: DispatchContext, *, kind: str | None = None, feu: bool | None = None
) -> list[dict[str, Any]]:
    """The window's alerts in the outbox (what was or would be posted), oldest first.

    ``feu`` keeps only (True) or leaves out (False) the FEU follow-ups, which share the ``fairness``
    kind with the findings' alerts: a re-run window's alert step must not list the follow-up an
    earlier run posted as if it were one of its alerts."""
    out = []
    for rec in ctx.store.alerts(ctx.monitor, since=ctx.window.start):
        if rec.window_start != ctx.window.start or (kind is not None and rec.kind != kind):
            continue
        meta = ((rec.payload or {}).get("metadata") or {}).get("event_payload") or {}
        if feu is not None and (meta.get("kind") == "feu") != feu:
            continue
        out.append(
            {
                "fingerprint": rec.fingerprint,
                "kind": rec.kind,
                "channel": rec.channel,
                "severity": rec.severity,
                "state": rec.state,
                "text": (rec.payload or {}).get("text", ""),
                "thread_of": (rec.payload or {}).get("thread_of"),
            }
        )
    return out


def data_alert(ctx: DispatchContext, alert: AlertContext, *, failed: list[dict[str, Any]]) -> dict[str, Any]:
    """ONE data-validation alert for the window (outbox-deduplicated; sent when notifying).

    Slack's answer must not change what the window is: a configuration error is in the result's
    ``delivery_error`` and the window stays ``data_invalid``; so does an outage or a refused message.
    """
    channel, reason = route(ctx)
    if channel is None:
        return {"queued": None, "reason": reason}
    outbox = outbox_for(ctx)
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    fp = outbox.notify_data_validation(
        failed, alert, channel=channel, backfill=not ctx.notify, notify=ctx.notify,
        run_id=None if run is None else run.run_id,
    )
    try:
        delivery = deliver(ctx, outbox)
    except AlertDeliveryError as exc:
        log.error("%s %s: the data alert was not delivered (the window stays data_invalid): %s",
                  ctx.monitor, ctx.window.key, exc)
        delivery = {"delivered": False, "delivery_error": str(exc)}
    return {"queued": fp, **delivery}


def send_alerts(
    ctx: DispatchContext, alert: AlertContext, findings: Sequence[Finding], *, run_id: int
) -> dict[str, Any]:
    """Enqueue this window's notifiable findings (one message per window and channel, findings merged
    per phenomenon; resolutions in the thread of the message they close) and deliver.

    A Slack configuration error leaves the alerts pending and comes back as ``delivery_error`` with
    ``configuration_error`` set (the caller records it; the computed window keeps its status).
    """
    channel, reason = route(ctx)
    if channel is None:
        return {"queued": 0, "reason": reason, "rendered": []}
    outbox = outbox_for(ctx)
    queued = outbox.notify_findings(
        findings, alert, channels={channel: ctx.spec.alerts.min_severity}, backfill=not ctx.notify,
        notify=ctx.notify, run_id=run_id,
    )
    delivery = _deliver_keeping_window(ctx, outbox, "fairness alert")
    return {"queued": len(queued), **delivery, "rendered": rendered_alerts(ctx, kind="fairness", feu=False)}


def send_followup(
    ctx: DispatchContext, alert: AlertContext, feu_result: Mapping[str, Any], findings: Sequence[Finding], *,
    run_id: int, requested: bool = False,
) -> dict[str, Any]:
    """Post the FEU candidates once per window: in the thread of the window's drift alert, or — FEU
    requested at a window without an alerted drift (``requested``) — as a message of their own."""
    opened = [f for f in findings if f.status == "open" and f.notify]
    if not ctx.notify:  # a backfill without --notify stores the candidates but posts nothing
        return {"status": "skipped", "reason": "not notifying (backfill)"}
    channel, reason = route(ctx)
    if channel is None:
        return {"status": "skipped", "reason": reason}
    if not opened and not requested:
        return {"status": "skipped", "reason": "no alerted drift finding"}
    parent = max(opened, key=lambda f: _SEVERITY_ORDER.index(f.severity)) if opened else None
    outbox = outbox_for(ctx)
    fp = outbox.notify_feu(feu_result, alert, parent_finding=parent, channel=channel, run_id=run_id)
    delivery = _deliver_keeping_window(ctx, outbox, "FEU follow-up")
    posted = rendered_alerts(ctx, feu=True)
    return {"status": "queued" if fp else "already_queued", "fingerprint": fp, "threaded": parent is not None,
            **delivery, "rendered": posted}
