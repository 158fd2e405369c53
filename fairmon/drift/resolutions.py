"""One resolution per alert: a rule's resolution waits for the last drift of its alert message.

Why: one window posts one message with every rule that fired (:mod:`fairmon.alerts.grouping`), but each
rule resolved on its own — the DScore threshold a window before the DScore rise — so one drift event
got two or three "resolved" messages (benchmarks/alert_quality: 1.25 per event, 15 / 20 events with
exactly one). The drift policy (:mod:`fairmon.drift.policy`) calls :func:`one_resolution_per_alert` on
each window's findings after its transitions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from fairmon.drift.findings import SEVERITIES, Finding, Severity

__all__ = ["one_resolution_per_alert", "HELD"]

#: ``numbers["held"]`` of a resolution that waits for another drift of its alert
HELD = "another drift of the same alert is still open"


class _State(Protocol):
    """What the policy's per-series state offers here (``fairmon.drift.policy._KeyState``)."""

    active: bool
    opened_notified: bool
    since: datetime | None
    held_for: datetime | None
    severity: Severity
    kind: str
    metric: str
    group: str


def _label(st: _State) -> str:
    """How a resolution names another rule of its alert: ``rumie_rise on rumie_honest_dscore``."""
    return f"{st.kind} on {st.metric}" + (f" for {st.group}" if st.group else "")


def one_resolution_per_alert(
    findings: list[Finding], states: Mapping[str, Any], since_of: Callable[[str, datetime | None], datetime | None],
) -> list[Finding]:
    """A notified resolution waits while another drift that opened notified in the same window (the same
    alert message) is still active: one problem, one resolution, when its last rule is back.

    ``states`` are the policy's series states after this window's transitions (updated here: a held
    key remembers its alert in ``held_for``, kept when the series drifts again — that is a new drift);
    ``since_of(key, since)`` gives a drift's true start (the store's, for one older than the history).
    The held finding stays stored, not notified (``numbers["held"]``); the resolution finally posted
    names the rules that cleared earlier (``numbers["cleared_earlier"]``) and carries the alert's
    highest severity (``numbers["alert_severity"]``), so a channel that only takes that severity gets it.
    """
    out = []
    for f in findings:
        if f.status != "resolved" or not f.notify or f.since is None:
            out.append(f)
            continue
        since = since_of(f.key, f.since)
        active = [st for k, st in states.items() if k != f.key and st.active and st.opened_notified
                  and since_of(k, st.since) == since]
        if active:
            states[f.key].held_for = since
            out.append(dataclasses.replace(f, notify=False, numbers={**f.numbers, "held": HELD}))
            continue
        held: list[_State] = [st for k, st in states.items() if k != f.key and st.held_for == since]
        if not held:
            out.append(f)
            continue
        numbers = {**f.numbers, "cleared_earlier": sorted(_label(st) for st in held),
                   "alert_severity": max((f.severity, *(st.severity for st in held)), key=SEVERITIES.index)}
        for st in held:
            st.held_for = None
        out.append(dataclasses.replace(f, numbers=numbers))
    return out
