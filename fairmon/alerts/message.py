"""The pieces every Slack message of fairmon is made of: its window context, the message itself, report
links, Slack mrkdwn escaping and the Block Kit primitives.

Every user-controlled string (data values, column and group names, rule text, monitor names) reaches
Slack through :func:`mrkdwn_escape` — the blocks and the fallback text are built by the primitives here,
which escape what they are given — so ``<!channel>`` or ``<http://x|y>`` in a column value shows as
text instead of pinging a channel or hiding a link.

Examples
--------
>>> mrkdwn_escape("a <!channel> & <http://x|y>")
'a &lt;!channel&gt; &amp; &lt;http://x|y&gt;'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.alerts.history import GroupHistory
from fairmon.fairness.rumie import Evidence
from fairmon.results import evidence_from_dict

__all__ = [
    "EVENT_TYPE",
    "AlertContext",
    "SlackMessage",
    "mrkdwn_escape",
    "mrkdwn_unescape",
    "report_path",
    "report_url",
]

#: Slack message-metadata event type of every fairmon message
EVENT_TYPE = "fairmon_alert"
_MAX_SECTION = 2900  # Block Kit section text limit is 3000 characters
_MAX_HEADER = 150


def mrkdwn_escape(text: str) -> str:
    """``text`` with Slack's three control characters escaped (``&``, ``<``, ``>``), as Slack's
    formatting guide asks of every string that is not markup.

    >>> mrkdwn_escape("age <= 30 & x > 1")
    'age &lt;= 30 &amp; x &gt; 1'
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn_unescape(text: str) -> str:
    """What Slack shows of escaped ``text`` (the inverse of :func:`mrkdwn_escape`; for consoles).

    >>> mrkdwn_unescape(mrkdwn_escape("a <b> & c"))
    'a <b> & c'
    """
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower()).strip("-")
    return s or "monitor"


def report_path(monitor: str, window_start: datetime) -> str:
    """Stable relative path of the run report of one monitor and window.

    >>> from datetime import datetime, UTC
    >>> report_path("demo", datetime(2026, 1, 1, tzinfo=UTC))
    'demo/2026-01-01.html'
    """
    return f"{_slug(monitor)}/{window_start:%Y-%m-%d}.html"


def report_url(base_url: str | None, monitor: str, window_start: datetime) -> str | None:
    """``{base_url}/{report_path(...)}`` or None without a base URL.

    >>> from datetime import datetime, UTC
    >>> report_url("https://reports.example.com/fairmon/", "demo", datetime(2026, 1, 1, tzinfo=UTC))
    'https://reports.example.com/fairmon/demo/2026-01-01.html'
    """
    if not base_url:
        return None
    return f"{base_url.rstrip('/')}/{report_path(monitor, window_start)}"


@dataclass(frozen=True)
class AlertContext:
    """What every message of one window shows besides the finding itself.

    ``evidence`` is RUMIE :class:`~fairmon.fairness.rumie.Evidence` (its ``to_dict()`` is decoded to
    one); ``gesd`` is ``{attribute: GESDResult.to_dict()}``
    (or one result, see :func:`fairmon.drift.window.gesd_by_attribute`); both optional. A GESD finding
    shows the result of its own attribute (the finding's ``group``). ``history`` says whether RUMIE's
    group is the previous window's; ``why`` and ``cause`` are pre-rendered (escaped) mrkdwn lines.
    """

    monitor: str
    window_start: datetime
    window_end: datetime | None = None
    model_version: str | None = None
    #: how RUMIE's group relates to the previous window's (:class:`~fairmon.alerts.history.GroupHistory`)
    history: GroupHistory | None = None
    report_base_url: str | None = None
    evidence: Evidence | None = None
    gesd: Mapping[str, Any] | None = None
    #: "why disfavored" lines (mrkdwn, already escaped), shown in the RUMIE / group details block
    why: tuple[str, ...] = ()
    #: "model or data?" line (mrkdwn, already escaped); None when no earlier model version was scored
    cause: str | None = None

    def __post_init__(self) -> None:
        if self.evidence is not None and not isinstance(self.evidence, Evidence):
            object.__setattr__(self, "evidence", evidence_from_dict(self.evidence))

    @property
    def report_url(self) -> str | None:
        return report_url(self.report_base_url, self.monitor, self.window_start)


@dataclass(frozen=True)
class SlackMessage:
    """A rendered message: fallback ``text``, Block Kit ``blocks`` and message ``metadata``."""

    text: str
    blocks: list[dict[str, Any]]
    metadata: dict[str, Any]
    fingerprint: str
    thread_of: str | None = None  #: fingerprint of the message this one replies to
    extra: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """JSON for the outbox row (``from_payload`` inverts it)."""
        return {"text": self.text, "blocks": self.blocks, "metadata": self.metadata,
                "fingerprint": self.fingerprint, "thread_of": self.thread_of, "extra": self.extra}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> SlackMessage:
        """The message an outbox row holds (the inverse of :meth:`to_payload`)."""
        return cls(text=payload["text"], blocks=list(payload.get("blocks") or []),
                   metadata=dict(payload.get("metadata") or {}), fingerprint=payload["fingerprint"],
                   thread_of=payload.get("thread_of"), extra=dict(payload.get("extra") or {}))


def num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(f):
        return "n/a"
    return f"{f:.{digits}f}"


def p_text(x: Any) -> str:
    try:
        return f"{float(x):.2g}"
    except (TypeError, ValueError):
        return "n/a"


def window_text(ctx: AlertContext) -> str:
    if ctx.window_end is not None:
        return f"{ctx.window_start:%Y-%m-%d %H:%M} – {ctx.window_end:%Y-%m-%d %H:%M} UTC"
    return f"{ctx.window_start:%Y-%m-%d}"


def metadata(fingerprint: str, ctx: AlertContext, **extra: Any) -> dict[str, Any]:
    payload = {"fingerprint": fingerprint, "monitor": ctx.monitor, "window_start": ctx.window_start.isoformat()}
    payload.update({k: v for k, v in extra.items() if v is not None})
    return {"event_type": EVENT_TYPE, "event_payload": payload}


def header(title: str) -> dict[str, Any]:
    """A header block (escaped)."""
    return {"type": "header", "text": {"type": "plain_text", "text": mrkdwn_escape(title)[:_MAX_HEADER],
                                       "emoji": True}}


def section(text: str) -> dict[str, Any]:
    """A mrkdwn section of ``text`` (escaped: fairmon's own markup is ``*``, ``_`` and backticks only)."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn_escape(text)[:_MAX_SECTION]}}


def fields_block(facts: list[tuple[str, str]]) -> dict[str, Any]:
    """A section of ``*label*`` / value fields (escaped)."""
    return {"type": "section", "fields": [{"type": "mrkdwn", "text": mrkdwn_escape(f"*{k}*\n{v}")} for k, v in facts]}


def context_block(ctx: AlertContext, *bits: str) -> dict[str, Any]:
    """The monitor / model / window line of a message (escaped), with ``bits`` after it."""
    parts = [f"*Monitor* {ctx.monitor}", f"*Model* {ctx.model_version or 'unknown'}",
             f"*Window* {window_text(ctx)}", *bits]
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn_escape(" · ".join(parts))}]}


def link_block(ctx: AlertContext) -> tuple[list[dict[str, Any]], str]:
    """The report link block and its fallback-text line (none without a report base URL)."""
    url = ctx.report_url
    if not url:
        return [], ""
    link = f":bar_chart: <{mrkdwn_escape(url)}|Open the run report>"  # the one piece of Slack link markup
    return [{"type": "section", "text": {"type": "mrkdwn", "text": link}}], f"\nReport: {url}"


def message_text(lines: list[str], link_text: str = "") -> str:
    """The fallback text of a message: its lines, escaped, and the report line."""
    return mrkdwn_escape("\n".join(lines) + link_text)


