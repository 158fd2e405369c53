"""Pure Slack rendering: findings → Block Kit message + plain-text fallback + metadata.

Nothing here talks to the network or the store; the same inputs give the same message (so a
re-rendered alert is byte-identical and its fingerprint is stable). Every message carries Slack
message metadata ``{"event_type": "fairmon_alert", "event_payload": {"fingerprint": ...}}``, which is
what :class:`~fairmon.alerts.outbox.Outbox` looks for in ``conversations.history`` before re-posting.

The report link is ``{report_base_url}/{report_path(monitor, window_start)}``; :func:`report_path`
is the one definition of that path (the report step writes its file there).

Example
-------
>>> from datetime import datetime, UTC
>>> report_path("Credit scoring", datetime(2026, 1, 5, tzinfo=UTC))
'credit-scoring/2026-01-05.html'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.drift.checks import level_text
from fairmon.drift.findings import Finding, finding_fingerprint
from fairmon.drift.window import evidence_value, gesd_by_attribute

__all__ = [
    "EVENT_TYPE",
    "AlertContext",
    "SlackMessage",
    "report_path",
    "report_url",
    "render_finding",
    "render_feu_followup",
    "render_data_validation",
    "data_validation_fingerprint",
]

#: Slack message-metadata event type of every fairmon message
EVENT_TYPE = "fairmon_alert"

_SEVERITY_ICON = {"info": ":information_source:", "warning": ":warning:", "critical": ":rotating_light:"}
_TITLES = {
    "ci_outside_range": "{metric} outside its allowed range",
    "significant_change": "significant change in {metric}",
    "rumie_dscore": "discriminated group above threshold (RUMIE)",
    "rumie_rise": "discrimination of the most affected group rose (RUMIE)",
    "rumie_new_group": "a new discriminated group (RUMIE)",
    "rumie_key_attributes": "the discriminated group's attributes changed (RUMIE)",
    "gesd_rise": "explanation fairness (GESD) got worse",
}
_MAX_SECTION = 2900  # Block Kit section text limit is 3000 characters


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

    ``evidence`` is RUMIE ``Evidence.to_dict()``; ``gesd`` is ``{attribute: GESDResult.to_dict()}``
    (or one result, see :func:`fairmon.drift.window.gesd_by_attribute`); both optional. A GESD finding
    shows the result of its own attribute (the finding's ``group``).
    """

    monitor: str
    window_start: datetime
    window_end: datetime | None = None
    model_version: str | None = None
    report_base_url: str | None = None
    evidence: Mapping[str, Any] | None = None
    gesd: Mapping[str, Any] | None = None

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
        return cls(text=payload["text"], blocks=list(payload.get("blocks") or []),
                   metadata=dict(payload.get("metadata") or {}), fingerprint=payload["fingerprint"],
                   thread_of=payload.get("thread_of"), extra=dict(payload.get("extra") or {}))


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(f):
        return "n/a"
    return f"{f:.{digits}f}"


def _p(x: Any) -> str:
    try:
        return f"{float(x):.2g}"
    except (TypeError, ValueError):
        return "n/a"


def _window_text(ctx: AlertContext) -> str:
    if ctx.window_end is not None:
        return f"{ctx.window_start:%Y-%m-%d %H:%M} – {ctx.window_end:%Y-%m-%d %H:%M} UTC"
    return f"{ctx.window_start:%Y-%m-%d}"


def _metadata(fingerprint: str, ctx: AlertContext, **extra: Any) -> dict[str, Any]:
    payload = {"fingerprint": fingerprint, "monitor": ctx.monitor, "window_start": ctx.window_start.isoformat()}
    payload.update({k: v for k, v in extra.items() if v is not None})
    return {"event_type": EVENT_TYPE, "event_payload": payload}


def _header(title: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": title[:150], "emoji": True}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:_MAX_SECTION]}}


def _context_block(ctx: AlertContext, *bits: str) -> dict[str, Any]:
    parts = [f"*Monitor* {ctx.monitor}", f"*Model* {ctx.model_version or 'unknown'}",
             f"*Window* {_window_text(ctx)}", *bits]
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(parts)}]}


def _link_block(ctx: AlertContext) -> tuple[list[dict[str, Any]], str]:
    url = ctx.report_url
    if not url:
        return [], ""
    return [_section(f":bar_chart: <{url}|Open the run report>")], f"\nReport: {url}"


def _rumie_lines(evidence: Mapping[str, Any]) -> list[str]:
    rules = evidence_value(evidence, "rules") or []
    if isinstance(rules, str):
        rules = [rules]
    p_in = evidence_value(evidence, "p_fav_inside")
    p_out = evidence_value(evidence, "p_fav_outside")
    size = evidence_value(evidence, "group_size")
    frac = evidence_value(evidence, "size_fraction")
    attrs = [a.get("name", a) if isinstance(a, Mapping) else a
             for a in (evidence_value(evidence, "key_attributes") or [])]
    size_txt = f"{int(size):,} rows" if isinstance(size, int | float) and math.isfinite(float(size)) else "n/a"
    if frac is not None:
        size_txt += f" ({float(frac):.0%} of the window)"
    lines = [
        "Rules describing the group: " + (" | ".join(str(r) for r in rules) if rules else "n/a"),
        f"P(favorable) inside the group {_num(p_in)} vs outside {_num(p_out)}",
        f"Group size {size_txt}",
        f"DScore {_num(evidence_value(evidence, 'dscore'))} in-sample, "
        f"honest {_num(evidence_value(evidence, 'honest_dscore'))} (p = {_p(evidence_value(evidence, 'p_value'))})",
    ]
    if attrs:
        lines.append("Key attributes: " + ", ".join(str(a) for a in attrs))
    return lines


def _rumie_block(evidence: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    lines = _rumie_lines(evidence)
    rules = lines[0].split(": ", 1)[1]
    md = ("*Most discriminated group (RUMIE)*\n```" + rules + "```\n" + "\n".join(f"• {ln}" for ln in lines[1:]))
    return _section(md), "\n".join(lines)


def _gesd_block(gesd: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    groups = gesd.get("groups") or []
    parts = []
    for g in groups:
        stab = g.get("stability")
        parts.append(f"{g.get('group')}: stability {_num(stab)} (n={g.get('size', 'n/a')})")
    across = f" across {gesd['attribute']}" if gesd.get("attribute") else ""
    head = f"GESD{across} {_num(gesd.get('value'))} (Mann–Whitney p = {_p(gesd.get('p_value'))})"
    text = head + ("; " + "; ".join(parts) if parts else "")
    md = f"*Explanation fairness (GESD)*\n{head}\n" + "\n".join(f"• {p}" for p in parts)
    return _section(md), text


def _group_facts(groups: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``Lowest selection rate: Female 0.300 (n=412)`` and the highest, from ``numbers["groups"]``."""
    rate = str(groups.get("rate", "rate")).replace("_", " ")
    out = []
    for label, key in (("Lowest", "disadvantaged"), ("Highest", "advantaged")):
        g = groups.get(key) or {}
        n = f" (n={g['n']:,})" if isinstance(g.get("n"), int) else ""
        out.append((f"{label} {rate}", f"{g.get('group', 'n/a')} {_num(g.get('value'))}{n}"))
    return out


def _finding_gesd(ctx: AlertContext, finding: Finding) -> Mapping[str, Any] | None:
    """The GESD result a GESD finding is about: its attribute's (the only one when there is one)."""
    by_attr = gesd_by_attribute(ctx.gesd)
    if finding.group in by_attr:
        return by_attr[finding.group]
    return next(iter(by_attr.values())) if len(by_attr) == 1 else None


def render_finding(finding: Finding, ctx: AlertContext, *, fingerprint: str | None = None) -> SlackMessage:
    """Render one finding (open, escalated or resolved) as a Slack message.

    ``fingerprint`` defaults to the finding's; the outbox passes a per-channel one. A resolution
    replies in the thread of the alert that opened the drift (``thread_of``).

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 5, tzinfo=UTC)
    >>> f = Finding(kind="ci_outside_range", metric="dp_difference", group="sex", severity="warning",
    ...             value=0.21, ci=(0.16, 0.26), monitor="demo", window_start=t, message="DP too high")
    >>> m = render_finding(f, AlertContext("demo", t, model_version="v2"))
    >>> "0.210" in m.text and m.metadata["event_type"]
    'fairmon_alert'
    """
    fp = fingerprint or finding.fingerprint
    title = _TITLES.get(finding.kind, "{metric}").format(metric=finding.metric)
    groups = finding.numbers.get("groups") if isinstance(finding.numbers.get("groups"), Mapping) else None
    if finding.group:
        title += f" — {finding.group}"
        if groups is not None:
            title += f": {groups['disadvantaged']['group']} vs {groups['advantaged']['group']}"
    resolved = finding.status == "resolved"
    icon = ":white_check_mark:" if resolved else _SEVERITY_ICON.get(finding.severity, "")
    head = f"{'Resolved: ' if resolved else ''}{title}"
    blocks: list[dict[str, Any]] = [_header(f"{finding.severity.upper()} · {ctx.monitor}: {head}")]
    since = finding.since.strftime("%Y-%m-%d") if finding.since else "n/a"
    blocks.append(_context_block(ctx, f"*Severity* {finding.severity}", f"*Status* {finding.status}"))
    blocks.append(_section(f"{icon} {finding.message}"))
    ci = finding.ci
    ci_txt = f"[{_num(ci[0])}, {_num(ci[1])}]" if ci else "n/a"
    n = finding.numbers
    level = n.get("ci_level")
    ci_label = f"{level_text(float(level))} interval" if isinstance(level, int | float) else "Interval"
    facts = [("Value", _num(finding.value)), (ci_label, ci_txt), ("Baseline", _num(finding.baseline)),
             ("Since", since)]
    if groups is not None:
        facts.extend(_group_facts(groups))
    if "p_value" in n:
        facts.append(("p-value", _p(n["p_value"])))
    if "allowed_low" in n or "allowed_high" in n:
        facts.append(("Allowed range", f"[{_num(n.get('allowed_low'))}, {_num(n.get('allowed_high'))}]"))
    if "jaccard" in n:
        facts.append(("Jaccard overlap", _num(n["jaccard"], 2)))
    blocks.append({"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{k}*\n{v}"} for k, v in facts]})
    text_lines = [
        f"[{finding.severity}] fairmon {ctx.monitor}: {head}",
        f"Model {ctx.model_version or 'unknown'}, window {_window_text(ctx)}",
        finding.message,
        " · ".join(f"{k}: {v}" for k, v in facts),
    ]
    show_rumie = finding.kind.startswith("rumie") or finding.kind in ("ci_outside_range", "significant_change")
    if ctx.evidence and show_rumie and not resolved:
        block, txt = _rumie_block(ctx.evidence)
        blocks.append(block)
        text_lines.append(txt)
    gesd = _finding_gesd(ctx, finding) if finding.kind.startswith("gesd") and not resolved else None
    if gesd:
        block, txt = _gesd_block(gesd)
        blocks.append(block)
        text_lines.append(txt)
    link, link_txt = _link_block(ctx)
    blocks.extend(link)
    thread_of = None
    if resolved and finding.since is not None:
        thread_of = finding_fingerprint(finding.monitor, finding.since, finding.key, "open")
    return SlackMessage(
        text="\n".join(text_lines) + link_txt,
        blocks=blocks,
        metadata=_metadata(fp, ctx, finding_key=finding.key, status=finding.status, severity=finding.severity),
        fingerprint=fp,
        thread_of=thread_of,
    )


def _cand_value(c: Mapping[str, Any], name: str) -> Any:
    """A candidate metric: top level (pipeline shape) or under ``test`` / ``metrics.test`` (FEUResult)."""
    if c.get(name) is not None:
        return c[name]
    for holder in (c.get("test"), (c.get("metrics") or {}).get("test")):
        if isinstance(holder, Mapping) and holder.get(name) is not None:
            return holder[name]
    return None


def render_feu_followup(feu: Mapping[str, Any], ctx: AlertContext, *, parent_fingerprint: str | None) -> SlackMessage:
    """The threaded follow-up listing FEU retraining candidates.

    ``parent_fingerprint`` None: FEU was requested at a window without an alerted drift, and the
    candidates are a message of their own (no thread; the header says they were requested).

    Accepts ``FEUResult.to_dict()`` (``pareto`` candidates with ``test`` metrics, ``selected`` as a
    candidate dict, ``snapshot``) or the pipeline's flattened form (``candidates`` with ``auc``, ``dp``,
    ``gesd``, ``selected`` flags / index).

    >>> from datetime import datetime, UTC
    >>> m = render_feu_followup({"candidates": [{"auc": 0.8, "dp": 0.05, "gesd": 0.01, "selected": True}]},
    ...                         AlertContext("demo", datetime(2026, 1, 5, tzinfo=UTC)), parent_fingerprint="p")
    >>> "AUC 0.800, DP 0.050, GESD 0.010" in m.text and m.thread_of
    'p'
    """
    cands: Sequence[Mapping[str, Any]] = feu.get("candidates") or feu.get("pareto") or []
    sel = feu.get("selected")
    sel_id = sel.get("id") if isinstance(sel, Mapping) else None
    snap = feu.get("snapshot") if isinstance(feu.get("snapshot"), Mapping) else None
    lines = []
    for i, c in enumerate(cands):
        chosen = bool(c.get("selected")) or (sel_id is not None and c.get("id") == sel_id) or (
            isinstance(sel, int) and not isinstance(sel, bool) and sel == i)
        mark = " ← recommended" if chosen else ""
        version = c.get("registry_version") or (snap.get("version") if chosen and snap else None)
        ver = f" [{version}]" if version else ""
        hp = c.get("hyperparameters") or {}
        hp_txt = ", ".join(f"{k} {hp[k]:.3g}" if isinstance(hp[k], float) else f"{k} {hp[k]}" for k in sorted(hp))
        lines.append(f"#{i + 1}{ver}: AUC {_num(_cand_value(c, 'auc'))}, DP {_num(_cand_value(c, 'dp'))}, "
                     f"GESD {_num(_cand_value(c, 'gesd'))}{mark}" + (f" ({hp_txt})" if hp_txt else ""))
    why = "" if parent_fingerprint is not None else ", requested on demand"
    head = (f"FEU retraining candidates for {ctx.monitor} ({len(cands)} on the Pareto front{why}; "
            "proposed, not deployed)")
    fp = finding_fingerprint(ctx.monitor, ctx.window_start, f"feu:{parent_fingerprint or 'on_demand'}", "event")
    blocks = [_section(f"*{head}*\n" + "\n".join(f"• {ln}" for ln in lines))]
    where = ""
    if parent_fingerprint is None:  # not in a thread: say which model and window it is about
        blocks.insert(0, _context_block(ctx))
        where = f"\nModel {ctx.model_version or 'unknown'}, window {_window_text(ctx)}"
    link, link_txt = _link_block(ctx)
    blocks.extend(link)
    return SlackMessage(
        text=head + where + "\n" + "\n".join(lines) + link_txt,
        blocks=blocks,
        metadata=_metadata(fp, ctx, kind="feu", parent=parent_fingerprint),
        fingerprint=fp,
        thread_of=parent_fingerprint,
    )


def data_validation_fingerprint(monitor: str, window_start: datetime) -> str:
    """Fingerprint of the one data-validation alert of a window."""
    return finding_fingerprint(monitor, window_start, "data_validation:suite:*", "event")


def render_data_validation(failed: Sequence[Mapping[str, Any]], ctx: AlertContext) -> SlackMessage:
    """The data-validation template: the window's data failed its suite, no fairness numbers computed.

    ``failed`` holds the failed expectations (``DataValidationError.failed``): dicts with at least
    ``expectation`` and optionally ``column`` and ``observed``.
    """
    fp = data_validation_fingerprint(ctx.monitor, ctx.window_start)
    lines = []
    for f in failed[:20]:
        col = f" on `{f['column']}`" if f.get("column") else ""
        obs = f" (observed {f['observed']})" if f.get("observed") is not None else ""
        lines.append(f"{f.get('expectation', 'expectation')}{col}{obs}")
    if len(failed) > 20:
        lines.append(f"... and {len(failed) - 20} more")
    head = f"Data validation failed: {ctx.monitor}"
    blocks = [
        _header(f"CRITICAL · {head}"),
        _context_block(ctx, f"*Failed expectations* {len(failed)}"),
        _section(":no_entry: The window's data failed its validation suite; fairness metrics were not "
                 "computed for this window.\n" + "\n".join(f"• {ln}" for ln in lines)),
    ]
    link, link_txt = _link_block(ctx)
    blocks.extend(link)
    text = (f"[critical] fairmon {ctx.monitor}: data validation failed for window {_window_text(ctx)} "
            f"(model {ctx.model_version or 'unknown'}); {len(failed)} failed expectations:\n"
            + "\n".join(lines) + link_txt)
    return SlackMessage(text=text, blocks=blocks, metadata=_metadata(fp, ctx, kind="data_validation"),
                        fingerprint=fp)
