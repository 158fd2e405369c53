"""One Slack message per monitor-window: a header with the severity and what fired, one details block
per phenomenon (:mod:`fairmon.alerts.grouping`), the report link — always within Slack's limits.

Layout: header (``SEVERITY · monitor: what fired``) · context (monitor, model, window) · summary (the
entries with every rule that fired on each, the "model or data?" line) · one details section per entry
(its rules with their numbers, each p-value labelled with the test it comes from; for the RUMIE group
its rules, sizes, DScores, relation to the previous window's group and the "why disfavored" lines) ·
the report link.

Slack's limits (Block Kit): at most 50 blocks, 3000 characters per section text, 150 per header, and
40 000 characters of fallback text. A message never exceeds them: a long section is cut at a line
boundary with "… truncated: see the run report", entries beyond the block budget are summarised in a
final "… and N more" section pointing at the report. Nothing is dropped silently and Slack never gets
a message it would refuse (``invalid_blocks`` / ``msg_too_long``).

Example
-------
>>> from datetime import datetime, UTC
>>> from fairmon.alerts.grouping import plan_messages
>>> t = datetime(2026, 1, 8, tzinfo=UTC)
>>> fs = [Finding(kind=k, metric="rumie_honest_dscore", group="", severity="warning", value=0.19,
...               monitor="demo", window_start=t, message="honest DScore 0.19", notify=True)
...       for k in ("ci_outside_range", "rumie_dscore")]
>>> [plan] = plan_messages(fs)
>>> m = render_window(plan, AlertContext("demo", t))
>>> details = [b["text"]["text"] for b in m.blocks if "*Most discriminated group (RUMIE)*" in b.get("text", {}).get("text", "")]
>>> len(details), "allowed range on rumie_honest_dscore + DScore threshold" in details[0]
(1, True)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fairmon.alerts.grouping import Entry, MessagePlan
from fairmon.alerts.message import (
    AlertContext,
    SlackMessage,
    context_block,
    metadata,
    mrkdwn_escape,
    mrkdwn_unescape,
    num,
    p_text,
    window_text,
)
from fairmon.alerts.render import _SEVERITY_ICON, _finding_gesd, _gesd_block, _group_facts, _rumie_lines
from fairmon.drift.checks import level_text
from fairmon.drift.findings import Finding

__all__ = ["render_window", "render_resolution", "p_label", "MAX_BLOCKS", "MAX_SECTION", "MAX_HEADER",
           "MAX_TEXT", "fit"]

#: Slack's Block Kit limits
MAX_BLOCKS, MAX_SECTION, MAX_HEADER, MAX_TEXT = 50, 3000, 150, 40_000

#: the short name of each rule (check kind) in a message
RULE_NAMES = {
    "ci_outside_range": "allowed range",
    "significant_change": "significant change",
    "rumie_dscore": "DScore threshold",
    "rumie_rise": "DScore rise",
    "rumie_new_group": "new group",
    "rumie_key_attributes": "key attributes changed",
    "gesd_rise": "GESD rise",
}
_HELD_OUT = "held-out two-proportion z test"
_P_IN_MESSAGE = re.compile(r"p = ([0-9.eE+-]+)")


def p_label(finding: Finding) -> str | None:
    """Which test the finding's ``numbers["p_value"]`` comes from (None: the finding has no p-value of
    its own — the RUMIE group's held-out p-value, shown once with the group).

    >>> from datetime import datetime, UTC
    >>> f = Finding(kind="rumie_dscore", metric="rumie_honest_dscore", group="", severity="warning", value=0.2,
    ...             monitor="m", window_start=datetime(2026, 1, 1, tzinfo=UTC), message="",
    ...             numbers={"p_value": 1e-5, "threshold": 0.1})
    >>> p_label(f)
    'one-sided Wald test of DScore ≤ 0.1'
    """
    n = finding.numbers
    if finding.kind in ("rumie_new_group", "rumie_key_attributes") or "p_value" not in n:
        return None
    if finding.kind == "rumie_dscore":
        return f"one-sided Wald test of DScore ≤ {float(n.get('threshold', 0.1)):g}"
    if n.get("test") == "z":
        label = "z test against the reference window"
    else:
        hist = n.get("history")
        label = f"t test against those {hist} baseline windows" if isinstance(hist, int) else "t test against the baseline"
    if finding.kind in ("significant_change", "rumie_rise", "gesd_rise") and n.get("direction") != "both":
        label = "one-sided " + label
    n_tests = n.get("n_tests")
    if isinstance(n_tests, int) and n_tests > 1 and isinstance(n.get("alpha"), int | float):
        family = float(n["alpha"]) * n_tests  # the rule's level, split over the window's tested series
        label += (f", Bonferroni level {float(n['alpha']):.2g}: {family:.2g} shared by the {n_tests} series this "
                  "window tests for a change")
    return label


def _labelled(finding: Finding) -> str:
    """The finding's sentence with its p-value labelled (one p-value, said which test)."""
    label = p_label(finding)
    msg = finding.message
    if label is None:
        return _P_IN_MESSAGE.sub(lambda m: f"p = {m.group(1)} by the {_HELD_OUT}", msg)
    if _P_IN_MESSAGE.search(msg):
        return _P_IN_MESSAGE.sub(lambda m: f"p = {m.group(1)} by a {label}", msg, count=1)
    return f"{msg} (p = {p_text(finding.numbers['p_value'])} by a {label})"


def fit(md: str, limit: int, more: str) -> str:
    """``md`` (escaped mrkdwn) within ``limit`` characters: cut at a line boundary, an open code block
    closed, ``more`` (the "see the report" line) appended.

    >>> fit("a\\nbbbb\\ncccc\\ndddd", 13, "…")
    'a\\nbbbb\\n…'
    >>> len(fit("x" * 5000, 3000, "… truncated")) <= 3000
    True
    """
    if len(md) <= limit:
        return md
    room = max(limit - len(more) - 5, 0)
    kept = md[:room]
    cut = kept.rfind("\n")
    if cut >= room // 2:
        kept = kept[:cut]
    amp = kept.rfind("&")
    if amp > kept.rfind(";"):  # never split an escape (&lt; &gt; &amp;)
        kept = kept[:amp]
    if kept.count("```") % 2:
        kept += "```"
    return f"{kept}\n{more}"


def _more(ctx: AlertContext) -> str:
    url = ctx.report_url
    return f"… truncated: <{mrkdwn_escape(url)}|see the run report>" if url else "… truncated (the run report has the rest)"


def _md_section(md: str, ctx: AlertContext) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": fit(md, MAX_SECTION, _more(ctx))}}


def _entry_title(entry: Entry) -> str:
    if entry.is_rumie:
        return "Most discriminated group (RUMIE)"
    f = entry.findings[0]
    if f.metric == "gesd":
        return "Explanation fairness (GESD)" + (f" — {f.group}" if f.group else "")
    title = f.metric + (f" — {f.group}" if f.group else "")
    groups = next((g.numbers["groups"] for g in entry.findings if isinstance(g.numbers.get("groups"), Mapping)), None)
    if groups is not None:
        title += f": {groups['disadvantaged']['group']} vs {groups['advantaged']['group']}"
    return title


def _rule_names(entry: Entry) -> str:
    names = []
    for f in entry.findings:
        name = RULE_NAMES.get(f.kind, f.kind)
        if entry.is_rumie and f.kind == "ci_outside_range":
            name += f" on {f.metric}"
        if name not in names:
            names.append(name)
    return " + ".join(names)


def _facts(entry: Entry) -> str:
    """Value, interval, baseline, allowed range, since and the compared groups of the entry's series."""
    primary = next((f for f in entry.findings if f.metric == "rumie_honest_dscore"), entry.findings[0])
    series = [f for f in entry.findings if f.metric == primary.metric]
    with_ci = next((f for f in series if f.ci), primary)
    level = with_ci.numbers.get("ci_level")
    ci_label = f"{level_text(float(level))} interval" if isinstance(level, int | float) else "Interval"
    ci = with_ci.ci
    facts = [("Value", num(primary.value)), (ci_label, f"[{num(ci[0])}, {num(ci[1])}]" if ci else "n/a")]
    base = next((f.baseline for f in series if f.baseline is not None), None)
    if base is not None:
        facts.append(("Baseline", num(base)))
    rng = next((f.numbers for f in series if "allowed_low" in f.numbers or "allowed_high" in f.numbers), None)
    if rng is not None:
        facts.append(("Allowed range", f"[{num(rng.get('allowed_low'))}, {num(rng.get('allowed_high'))}]"))
    sinces = [f.since for f in entry.findings if f.since is not None]
    facts.append(("Since", min(sinces).strftime("%Y-%m-%d") if sinces else "n/a"))
    groups = next((f.numbers["groups"] for f in series if isinstance(f.numbers.get("groups"), Mapping)), None)
    if groups is not None:
        facts.extend(_group_facts(groups))
    return " · ".join(f"{k}: {v}" for k, v in facts)


def _rumie_details(ctx: AlertContext) -> tuple[list[str], list[str]]:
    """(escaped mrkdwn lines, plain fallback lines) of the RUMIE group: rules, numbers, history, why."""
    ev = ctx.evidence
    md: list[str] = []
    plain: list[str] = []
    if ev is not None:
        lines = _rumie_lines(ev)
        lines[3] = lines[3].replace("(p = ", f"(the {_HELD_OUT}'s p = ")
        rules = lines[0].split(": ", 1)[1]
        md += ["```" + mrkdwn_escape(rules) + "```", *(f"• {mrkdwn_escape(ln)}" for ln in lines[1:])]
        plain += lines
    if ctx.history is not None:
        hist = ctx.history.lines()
        md += [f"• _History:_ {mrkdwn_escape(hist[0])}", *(f"• {mrkdwn_escape(h)}" for h in hist[1:])]
        plain += ["History: " + hist[0], *hist[1:]]
    why_md, why_plain = _why(ctx)
    return md + why_md, plain + why_plain


def _why(ctx: AlertContext) -> tuple[list[str], list[str]]:
    """The "why disfavored" lines (given escaped, each starting with its own label) and their plain fallback."""
    return list(ctx.why), [mrkdwn_unescape(w) for w in ctx.why]


def _entry_block(entry: Entry, ctx: AlertContext, *, resolved: bool, why_here: bool = False) -> tuple[str, list[str]]:
    """One details section; ``why_here``: the message has no RUMIE entry and this (first) entry carries
    the "why disfavored" lines (they are about the most disadvantaged declared group then)."""
    icon = ":white_check_mark:" if resolved else _SEVERITY_ICON.get(entry.severity, "")
    title = _entry_title(entry)
    head = f"{icon} *{mrkdwn_escape(title)}* — {mrkdwn_escape(_rule_names(entry))} ({entry.severity})"
    md = [head]
    plain = [f"{title} — {_rule_names(entry)} ({entry.severity})"]
    for f in entry.findings:
        line = f"{RULE_NAMES.get(f.kind, f.kind)}: {_labelled(f)}"
        md.append(f"• {mrkdwn_escape(line)}")
        plain.append(line)
    facts = _facts(entry)
    md.append(mrkdwn_escape(facts))
    plain.append(facts)
    if not resolved and entry.is_rumie:
        rmd, rplain = _rumie_details(ctx)
        md += rmd
        plain += rplain
    elif not resolved and why_here:
        wmd, wplain = _why(ctx)
        md += wmd
        plain += wplain
    gesd = next((g for f in entry.findings if f.kind.startswith("gesd") and (g := _finding_gesd(ctx, f))), None)
    if gesd and not resolved:
        block, txt = _gesd_block(gesd)
        md.append(block["text"]["text"])
        plain.append(txt)
    return "\n".join(md), plain


def _header_text(prefix: str, entries: Sequence[Entry]) -> str:
    """``prefix: what fired`` (escaped), cut with "…" at Slack's 150 characters (never inside an escape)."""
    what = ", ".join(_entry_title(e).split(":")[0] for e in entries)
    text = mrkdwn_escape(f"{prefix}: {what}")
    if len(text) <= MAX_HEADER:
        return text
    kept = text[: MAX_HEADER - 1]
    amp = kept.rfind("&")
    if amp > kept.rfind(";"):
        kept = kept[:amp]
    return kept + "…"


def _finding_rows(plan: MessagePlan) -> list[dict[str, Any]]:
    """The findings of a message (stored in its payload: one alert-history row per finding)."""
    return [{"fingerprint": f.fingerprint, "key": f.key, "kind": f.kind, "metric": f.metric, "group": f.group,
             "severity": f.severity, "status": f.status, "entry": e.key} for e in plan.entries for f in e.findings]


def _assemble(plan: MessagePlan, ctx: AlertContext, *, fingerprint: str, resolved: bool,
              thread_of: str | None) -> SlackMessage:
    n_rules = len(plan.findings)
    sev = plan.severity
    prefix = f"{'RESOLVED' if resolved else sev.upper()} · {ctx.monitor}"
    header = {"type": "header", "text": {"type": "plain_text", "emoji": True,
                                         "text": _header_text(prefix, plan.entries)}}
    status = "resolved" if resolved else ("open" if any(f.status == "open" for f in plan.findings) else "ongoing")
    ctx_block = context_block(ctx, f"*Severity* {sev}", f"*Status* {status}")
    verb = "cleared" if resolved else "fired"
    what = (f"{n_rules} rule{'s' if n_rules != 1 else ''} {verb} on {len(plan.entries)} "
            f"phenomen{'a' if len(plan.entries) != 1 else 'on'}")
    summary_md = [f"*{what}*"]
    summary_plain: list[str] = []  # the text's first line already says what fired
    for e in plan.entries:
        item = f"{_entry_title(e)}: {_rule_names(e)}"
        summary_md.append(f"• {mrkdwn_escape(item)}")
        summary_plain.append("- " + item)
    if ctx.cause and not resolved:
        summary_md.append(ctx.cause)
        summary_plain.append(mrkdwn_unescape(ctx.cause))
    earlier = sorted({str(x) for f in plan.findings if resolved for x in f.numbers.get("cleared_earlier") or ()})
    if earlier:  # the drift policy held their resolutions until this last one (one resolution per alert)
        done = f"Cleared in earlier windows, held back until this last rule: {', '.join(earlier)}."
        summary_md.append(f"_{mrkdwn_escape(done)}_")
        summary_plain.append(done)
    url = ctx.report_url
    link = ([{"type": "section", "text": {"type": "mrkdwn",
                                          "text": f":bar_chart: <{mrkdwn_escape(url)}|Open the run report>"}}]
            if url else [])
    blocks: list[dict[str, Any]] = [header, ctx_block, _md_section("\n".join(summary_md), ctx)]
    room = MAX_BLOCKS - len(blocks) - len(link) - 1  # one left for "… and N more"
    text_lines = [f"[{sev}] fairmon {ctx.monitor}: {'Resolved: ' if resolved else ''}{what}",
                  f"Model {ctx.model_version or 'unknown'}, window {window_text(ctx)}", *summary_plain]
    shown = 0
    has_rumie = any(e.is_rumie for e in plan.entries)
    for i, e in enumerate(plan.entries):
        md, plain = _entry_block(e, ctx, resolved=resolved, why_here=i == 0 and not has_rumie)
        text_lines += ["", *plain]
        if shown < room:
            blocks.append(_md_section(md, ctx))
            shown += 1
    if shown < len(plan.entries):
        rest = len(plan.entries) - shown
        where = f"<{mrkdwn_escape(url)}|the run report>" if url else "the run report"
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"… and {rest} more: see {where}"}})
    blocks.extend(link)
    text = mrkdwn_escape("\n".join(text_lines) + (f"\nReport: {url}" if url else ""))
    text = fit(text, MAX_TEXT, f"… truncated; report: {mrkdwn_escape(url)}" if url else "… truncated")
    keys = ",".join(sorted({f.key for f in plan.findings}))
    meta = metadata(fingerprint, ctx, status=status, severity=sev, findings=n_rules,
                    finding_keys=keys if len(keys) <= 1000 else keys[:999] + "…")
    extra: dict[str, Any] = {"findings": _finding_rows(plan)}
    if thread_of is not None:
        extra["broadcast"] = True
    return SlackMessage(text=text, blocks=blocks, metadata=meta, fingerprint=fingerprint, thread_of=thread_of,
                        extra=extra)


def render_window(plan: MessagePlan, ctx: AlertContext, *, fingerprint: str | None = None) -> SlackMessage:
    """The window's one alert message (``plan.kind == "window"``); ``fingerprint`` defaults to the plan's."""
    return _assemble(plan, ctx, fingerprint=fingerprint or plan.fingerprint, resolved=False, thread_of=None)


def render_resolution(plan: MessagePlan, ctx: AlertContext, *, fingerprint: str | None = None,
                      thread_of: str | None = None) -> SlackMessage:
    """A resolution message: the drifts of the ``plan.since`` window's message that cleared now, replying in
    its thread (``thread_of`` defaults to that message's fingerprint) and broadcast to the channel."""
    return _assemble(plan, ctx, fingerprint=fingerprint or plan.fingerprint, resolved=True,
                     thread_of=thread_of or plan.parent_fingerprint)
