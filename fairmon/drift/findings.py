"""Typed drift findings: what was decided about one window, with the numbers behind it.

A :class:`Finding` is the unit that is stored (``findings`` table) and, when ``notify`` is set, sent
as an entry of its window's one Slack message (merged with the other findings on the same series or
RUMIE group, :mod:`fairmon.alerts.grouping`; one ``alert_history_findings`` row each). Its
:attr:`Finding.fingerprint` is derived from (monitor, window start, finding key, status) only, so a
retried task or a re-run window produces the same fingerprint.

Example
-------
>>> from datetime import datetime, UTC
>>> f = Finding(kind="ci_outside_range", metric="dp_difference", group="sex", severity="warning",
...             value=0.21, ci=(0.16, 0.26), monitor="demo",
...             window_start=datetime(2026, 1, 5, tzinfo=UTC), message="...")
>>> f.key
'ci_outside_range:dp_difference:sex'
>>> len(f.fingerprint)
32
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from fairmon.results import register

__all__ = [
    "Severity",
    "FindingStatus",
    "SEVERITIES",
    "severity_at_least",
    "Finding",
    "finding_fingerprint",
    "finding_key",
]

Severity = Literal["info", "warning", "critical"]
#: ``pending``: violated but not yet persistent; ``open``: a drift starts (alerted);
#: ``ongoing``: still drifting; ``resolved``: a drift cleared; ``event``: a one-off (data validation)
FindingStatus = Literal["pending", "open", "ongoing", "resolved", "event"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "critical")


def severity_at_least(severity: str, minimum: str) -> bool:
    """Whether ``severity`` is at or above ``minimum`` in info < warning < critical.

    >>> severity_at_least("critical", "warning"), severity_at_least("info", "warning")
    (True, False)
    """
    return SEVERITIES.index(severity) >= SEVERITIES.index(minimum)


def finding_key(kind: str, metric: str, group: str) -> str:
    """The series a policy tracks, ``kind:metric:group`` (``*`` for no group): one name for checks,
    findings and the store's open drifts.

    >>> finding_key("ci_outside_range", "dp_ratio", "")
    'ci_outside_range:dp_ratio:*'
    """
    return f"{kind}:{metric}:{group or '*'}"


def finding_fingerprint(monitor: str, window_start: datetime, key: str, status: str) -> str:
    """Stable 32-hex id of one finding of one window (the outbox's dedup key).

    >>> from datetime import datetime, UTC
    >>> finding_fingerprint("m", datetime(2026, 1, 1, tzinfo=UTC), "k", "open")[:8]
    '79bfafcd'
    """
    raw = json.dumps([monitor, window_start.isoformat(), key, status], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    return value


@dataclass(frozen=True)
class Finding:
    """One drift decision for one window.

    Parameters
    ----------
    kind : str
        The check that produced it (``ci_outside_range``, ``significant_change``, ``rumie_dscore``,
        ``rumie_rise``, ``rumie_new_group``, ``rumie_key_attributes``, ``gesd_rise``,
        ``data_validation``).
    metric, group : str
        The series (``dp_difference`` / ``sex``; ``rumie_honest_dscore`` / ``""``).
    severity : {"info", "warning", "critical"}
    value : float or None
        The current window's value; ``ci`` its interval; ``baseline`` the comparison value.
    numbers : dict
        Everything else a reader needs (p-value, allowed range, history size, Jaccard, ...);
        ``ci_level`` is the confidence level of ``ci``; for a disparity, ``groups`` names the compared
        groups (``rate``, ``disadvantaged`` and ``advantaged`` with ``group``, ``value``, ``n``; see
        :func:`fairmon.drift.checks.compared_groups`).
    status : {"pending", "open", "ongoing", "resolved", "event"}
    notify : bool
        Whether the policy wants this finding sent (channel routing may still filter by severity).
    since : datetime or None
        Start of the window where this drift opened.
    """

    kind: str
    metric: str
    group: str
    severity: Severity
    value: float | None
    monitor: str
    window_start: datetime
    message: str
    ci: tuple[float, float] | None = None
    baseline: float | None = None
    numbers: dict[str, Any] = field(default_factory=dict)
    status: FindingStatus = "open"
    notify: bool = False
    since: datetime | None = None
    window_end: datetime | None = None

    @property
    def key(self) -> str:
        """Finding key ``kind:metric:group`` (the series the policy tracks)."""
        return finding_key(self.kind, self.metric, self.group)

    @property
    def fingerprint(self) -> str:
        """Dedup id from (monitor, window start, key, status)."""
        return finding_fingerprint(self.monitor, self.window_start, self.key, self.status)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (non-finite numbers → None, datetimes → ISO strings)."""
        out: dict[str, Any] = _clean(
            {
                "kind": self.kind,
                "metric": self.metric,
                "group": self.group,
                "severity": self.severity,
                "value": self.value,
                "ci": list(self.ci) if self.ci is not None else None,
                "baseline": self.baseline,
                "numbers": self.numbers,
                "status": self.status,
                "notify": self.notify,
                "message": self.message,
                "monitor": self.monitor,
                "window_start": self.window_start,
                "window_end": self.window_end,
                "since": self.since,
                "key": self.key,
                "fingerprint": self.fingerprint,
            }
        )
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """Inverse of :meth:`to_dict` (for findings read back from the store)."""
        ci = data.get("ci")
        return cls(
            kind=data["kind"],
            metric=data["metric"],
            group=data.get("group") or "",
            severity=data["severity"],
            value=data.get("value"),
            monitor=data["monitor"],
            window_start=_dt(data["window_start"]),  # type: ignore[arg-type]
            window_end=_dt(data.get("window_end")),
            message=data.get("message", ""),
            ci=(float(ci[0]), float(ci[1])) if ci and ci[0] is not None and ci[1] is not None else None,
            baseline=data.get("baseline"),
            numbers=dict(data.get("numbers") or {}),
            status=data.get("status", "open"),
            notify=bool(data.get("notify", False)),
            since=_dt(data.get("since")),
        )


def _dt(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


# findings travel between steps through the one codec of typed results, like the method results
register("finding", Finding, Finding.to_dict, Finding.from_dict)
