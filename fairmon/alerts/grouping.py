"""Which findings of one monitor-window go into which Slack message, and which into one entry of it.

One window posts **one** message with every notified finding that is not a resolution (severity: the
highest of them), plus **one resolution message per earlier message** whose drifts cleared at this
window (in that message's thread). The drift policy notifies a message's resolution only once its last
drift cleared (:func:`fairmon.drift.resolutions.one_resolution_per_alert`). Inside a message, findings about the same phenomenon are merged
into one entry that lists every rule that fired:

* every RUMIE finding (``rumie_*`` kinds) and every rule on a RUMIE series (``metric`` starting with
  ``rumie_``, e.g. the allowed-range rule on ``rumie_honest_dscore``) describe the window's one
  discriminated group: one entry;
* otherwise findings on the same series — the same ``metric`` and ``group`` (grouping attribute) —
  are one entry (``ci_outside_range`` and ``significant_change`` on ``dp_ratio`` / ``sex``).

Fingerprints are per window (not per finding): a retried or re-run window enqueues the same message
fingerprint and the outbox refuses the second one, so the window's message goes out exactly once.

Examples
--------
>>> from datetime import datetime, UTC
>>> t = datetime(2026, 1, 8, tzinfo=UTC)
>>> def f(kind, metric):
...     return Finding(kind=kind, metric=metric, group="", severity="warning", value=0.19, monitor="demo",
...                    window_start=t, message="...", notify=True)
>>> plans = plan_messages([f("ci_outside_range", "rumie_honest_dscore"), f("rumie_dscore", "rumie_honest_dscore")])
>>> [(p.kind, [e.key for e in p.entries], [len(e.findings) for e in p.entries]) for p in plans]
[('window', ['rumie'], [2])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from fairmon.drift.findings import SEVERITIES, Finding, Severity, finding_fingerprint

__all__ = [
    "Entry",
    "MessagePlan",
    "phenomenon_key",
    "group_entries",
    "plan_messages",
    "window_fingerprint",
    "resolution_fingerprint",
    "RUMIE_KEY",
]

#: the entry key of the window's RUMIE group
RUMIE_KEY = "rumie"


def phenomenon_key(finding: Finding) -> str:
    """The entry a finding belongs to: ``rumie`` for the RUMIE group, else ``metric:group``.

    >>> from datetime import datetime, UTC
    >>> f = Finding(kind="significant_change", metric="dp_ratio", group="sex", severity="warning",
    ...             value=0.7, monitor="m", window_start=datetime(2026, 1, 1, tzinfo=UTC), message="")
    >>> phenomenon_key(f)
    'dp_ratio:sex'
    """
    if finding.kind.startswith("rumie_") or finding.metric.startswith("rumie_"):
        return RUMIE_KEY
    return f"{finding.metric}:{finding.group or '*'}"


def _max_severity(findings: Sequence[Finding]) -> Severity:
    return max((f.severity for f in findings), key=SEVERITIES.index)


@dataclass(frozen=True)
class Entry:
    """One phenomenon of a message: the findings (rules) that fired on it, most severe first."""

    key: str
    findings: tuple[Finding, ...]

    @property
    def severity(self) -> Severity:
        """The highest severity of its findings."""
        return _max_severity(self.findings)

    @property
    def is_rumie(self) -> bool:
        """Whether the entry is the RUMIE group."""
        return self.key == RUMIE_KEY


def group_entries(findings: Sequence[Finding]) -> list[Entry]:
    """Merge ``findings`` into entries (first appearance order; within an entry, most severe first).

    Entries are ordered by severity (critical first), then by first appearance.
    """
    order: list[str] = []
    by_key: dict[str, list[Finding]] = {}
    for f in findings:
        k = phenomenon_key(f)
        if k not in by_key:
            order.append(k)
            by_key[k] = []
        by_key[k].append(f)
    entries = [Entry(k, tuple(sorted(by_key[k], key=lambda f: -SEVERITIES.index(f.severity)))) for k in order]
    return sorted(entries, key=lambda e: -SEVERITIES.index(e.severity))  # stable: ties keep their order


def window_fingerprint(monitor: str, window_start: datetime) -> str:
    """Fingerprint of a window's one alert message (before the per-channel one of the outbox).

    >>> from datetime import datetime, UTC
    >>> window_fingerprint("m", datetime(2026, 1, 1, tzinfo=UTC)) == window_fingerprint("m", datetime(2026, 1, 1, tzinfo=UTC))
    True
    """
    return finding_fingerprint(monitor, window_start, "message:window", "open")


def resolution_fingerprint(monitor: str, window_start: datetime, since: datetime) -> str:
    """Fingerprint of the resolution message posted at ``window_start`` into the thread of the message
    of window ``since`` (where the cleared drifts opened)."""
    return finding_fingerprint(monitor, window_start, f"message:resolved:{since.isoformat()}", "resolved")


@dataclass(frozen=True)
class MessagePlan:
    """One message to post: the window's alert (``kind="window"``) or a resolution in the thread of the
    message of window ``since`` (``kind="resolution"``)."""

    kind: Literal["window", "resolution"]
    monitor: str
    window_start: datetime
    entries: tuple[Entry, ...]
    since: datetime | None = None

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of the message, entry by entry."""
        return tuple(f for e in self.entries for f in e.findings)

    @property
    def severity(self) -> Severity:
        """The highest severity of its findings."""
        return _max_severity(self.findings)

    @property
    def fingerprint(self) -> str:
        """The message's fingerprint (window or resolution)."""
        if self.kind == "window":
            return window_fingerprint(self.monitor, self.window_start)
        assert self.since is not None
        return resolution_fingerprint(self.monitor, self.window_start, self.since)

    @property
    def parent_fingerprint(self) -> str | None:
        """For a resolution: the fingerprint of the message it replies to (the ``since`` window's)."""
        if self.kind != "resolution" or self.since is None:
            return None
        return window_fingerprint(self.monitor, self.since)


def plan_messages(findings: Sequence[Finding]) -> list[MessagePlan]:
    """The messages of one window's notified findings (``notify`` set; others are left out).

    The window's alert first (when any non-resolution finding notifies), then one resolution per
    opening window (oldest first). A resolved finding without ``since`` replies to nothing and is
    reported in a resolution message of its own window.
    """
    notified = [f for f in findings if f.notify]
    if not notified:
        return []
    monitor, start = notified[0].monitor, notified[0].window_start
    out: list[MessagePlan] = []
    alerts = [f for f in notified if f.status != "resolved"]
    if alerts:
        out.append(MessagePlan("window", monitor, start, tuple(group_entries(alerts))))
    by_since: dict[datetime, list[Finding]] = {}
    for f in notified:
        if f.status == "resolved":
            by_since.setdefault(f.since or f.window_start, []).append(f)
    for since in sorted(by_since):
        out.append(MessagePlan("resolution", monitor, start, tuple(group_entries(by_since[since])), since=since))
    return out
