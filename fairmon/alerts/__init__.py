"""Slack alerts: pure Block Kit rendering, slack-sdk delivery and an exactly-once outbox.

``render`` builds messages (no I/O); ``SlackSender`` posts them through slack-sdk's ``WebClient`` with
its retry handlers; ``Outbox`` guarantees one message per fingerprint over a repository protocol the
store implements (``InMemoryOutboxRepository`` for tests). Importing this package does not import
slack-sdk (the sender does, when constructed).
"""

from __future__ import annotations

from fairmon.alerts.outbox import (
    DeliveryReport,
    InMemoryOutboxRepository,
    MessageSender,
    Outbox,
    OutboxRepository,
    alert_fingerprint,
)
from fairmon.alerts.render import (
    EVENT_TYPE,
    AlertContext,
    SlackMessage,
    render_data_validation,
    render_feu_followup,
    render_finding,
    report_path,
    report_url,
)
from fairmon.alerts.slack import SlackSender

__all__ = [
    "EVENT_TYPE",
    "AlertContext",
    "DeliveryReport",
    "InMemoryOutboxRepository",
    "MessageSender",
    "Outbox",
    "OutboxRepository",
    "SlackMessage",
    "SlackSender",
    "alert_fingerprint",
    "render_data_validation",
    "render_feu_followup",
    "render_finding",
    "report_path",
    "report_url",
]
