"""Pure Slack rendering: findings → Block Kit message + plain-text fallback + metadata.

The outbox posts one message per monitor-window (:func:`fairmon.alerts.window_message.render_window`,
built from this module's RUMIE / GESD / group pieces); :func:`render_finding` renders a single finding
on its own (messages enqueued before issue 19, tools), and the FEU follow-up and data-validation
templates live here.

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
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from fairmon.alerts.message import (
    EVENT_TYPE,
    AlertContext,
    SlackMessage,
    context_block,
    fields_block,
    header,
    link_block,
    message_text,
    metadata,
    mrkdwn_escape,
    num,
    p_text,
    report_path,
    report_url,
    section,
    window_text,
)
from fairmon.drift.checks import level_text
from fairmon.drift.findings import Finding, finding_fingerprint
from fairmon.drift.window import gesd_by_attribute
from fairmon.fairness.rumie import Evidence
from fairmon.feu.labels import (
    BASELINES,
    baseline_label,
    candidate_notes,
    constraint_note,
    left_out_clause,
    recipe_repeats,
    rumie_target_clause,
)

__all__ = [
    "EVENT_TYPE",
    "AlertContext",
    "SlackMessage",
    "mrkdwn_escape",
    "report_path",
    "report_url",
    "render_finding",
    "render_feu_followup",
    "render_data_validation",
    "data_validation_fingerprint",
]

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


def _rumie_lines(ev: Evidence) -> list[str]:
    """What the message says about RUMIE's group (rule text: the Evidence's rules, else its rule)."""
    rules = list(ev.rules) or ([ev.rule] if ev.rule else [])
    size_txt = f"{int(ev.group_size):,} rows" if ev.status == "ok" or ev.group_size else "n/a"
    size_txt += f" ({float(ev.fraction):.0%} of the window)" if math.isfinite(ev.fraction) else ""
    lines = [
        "Rules describing the group: " + (" | ".join(rules) if rules else "n/a"),
        f"P(favorable) inside the group {num(ev.p_fav_in)} vs outside {num(ev.p_fav_out)}",
        f"Group size {size_txt}",
        f"DScore {num(ev.dscore)} in-sample, honest {num(ev.honest_dscore)} (p = {p_text(ev.p_value)})",
    ]
    if ev.key_attributes:
        lines.append("Key attributes: " + ", ".join(str(a) for a in ev.key_attributes))
    return lines


def _rumie_block(evidence: Evidence) -> tuple[dict[str, Any], str]:
    lines = _rumie_lines(evidence)
    rules = lines[0].split(": ", 1)[1]
    md = ("*Most discriminated group (RUMIE)*\n```" + rules + "```\n" + "\n".join(f"• {ln}" for ln in lines[1:]))
    return section(md), "\n".join(lines)


def _gesd_block(gesd: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    groups = gesd.get("groups") or []
    parts = []
    for g in groups:
        stab = g.get("stability")
        parts.append(f"{g.get('group')}: stability {num(stab)} (n={g.get('size', 'n/a')})")
    across = f" across {gesd['attribute']}" if gesd.get("attribute") else ""
    floor = gesd.get("noise_floor")
    noise = ""
    if isinstance(floor, int | float) and math.isfinite(floor):
        value = gesd.get("value")
        below = isinstance(value, int | float) and value <= floor
        noise = f", noise floor {num(floor)}" + (": within noise" if below else "")
    head = f"GESD{across} {num(gesd.get('value'))} (Mann–Whitney p = {p_text(gesd.get('p_value'))}{noise})"
    text = head + ("; " + "; ".join(parts) if parts else "")
    md = f"*Explanation fairness (GESD)*\n{head}\n" + "\n".join(f"• {p}" for p in parts)
    return section(md), text


def _group_facts(groups: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``Lowest selection rate: Female 0.300 (n=412)`` and the highest, from ``numbers["groups"]``."""
    rate = str(groups.get("rate", "rate")).replace("_", " ")
    out = []
    for label, key in (("Lowest", "disadvantaged"), ("Highest", "advantaged")):
        g = groups.get(key) or {}
        n = f" (n={g['n']:,})" if isinstance(g.get("n"), int) else ""
        out.append((f"{label} {rate}", f"{g.get('group', 'n/a')} {num(g.get('value'))}{n}"))
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
    blocks: list[dict[str, Any]] = [header(f"{finding.severity.upper()} · {ctx.monitor}: {head}")]
    since = finding.since.strftime("%Y-%m-%d") if finding.since else "n/a"
    blocks.append(context_block(ctx, f"*Severity* {finding.severity}", f"*Status* {finding.status}"))
    blocks.append(section(f"{icon} {finding.message}"))
    ci = finding.ci
    ci_txt = f"[{num(ci[0])}, {num(ci[1])}]" if ci else "n/a"
    n = finding.numbers
    level = n.get("ci_level")
    ci_label = f"{level_text(float(level))} interval" if isinstance(level, int | float) else "Interval"
    facts = [("Value", num(finding.value)), (ci_label, ci_txt), ("Baseline", num(finding.baseline)),
             ("Since", since)]
    if groups is not None:
        facts.extend(_group_facts(groups))
    if "p_value" in n:
        facts.append(("p-value", p_text(n["p_value"])))
    if "allowed_low" in n or "allowed_high" in n:
        facts.append(("Allowed range", f"[{num(n.get('allowed_low'))}, {num(n.get('allowed_high'))}]"))
    if "jaccard" in n:
        facts.append(("Jaccard overlap", num(n["jaccard"], 2)))
    blocks.append(fields_block(facts))
    text_lines = [
        f"[{finding.severity}] fairmon {ctx.monitor}: {head}",
        f"Model {ctx.model_version or 'unknown'}, window {window_text(ctx)}",
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
    link, link_txt = link_block(ctx)
    blocks.extend(link)
    thread_of = None
    if resolved and finding.since is not None:
        thread_of = finding_fingerprint(finding.monitor, finding.since, finding.key, "open")
    return SlackMessage(
        text=message_text(text_lines, link_txt),
        blocks=blocks,
        metadata=metadata(fp, ctx, finding_key=finding.key, status=finding.status, severity=finding.severity),
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
    >>> m = render_feu_followup({"candidates": [], "sensitive": "sex"}, AlertContext("demo", datetime(2026, 1, 5, tzinfo=UTC)),
    ...                         parent_fingerprint="p")
    >>> "DP and GESD compare the groups of `sex`, the attribute FEU retrains for" in m.text
    True
    """
    cands: Sequence[Mapping[str, Any]] = feu.get("candidates") or feu.get("pareto") or []
    sel = feu.get("selected")
    sel_id = sel.get("id") if isinstance(sel, Mapping) else None
    snap = feu.get("snapshot") if isinstance(feu.get("snapshot"), Mapping) else None
    lines = []
    chosen_at = [bool(c.get("selected")) or (sel_id is not None and c.get("id") == sel_id) or (
        isinstance(sel, int) and not isinstance(sel, bool) and sel == i) for i, c in enumerate(cands)]
    hps = [c.get("hyperparameters") or {} for c in cands]
    repeats = recipe_repeats(hps)
    notes_at = candidate_notes(hps, [(c.get("metrics") or {}).get("deployment") or (
        sel.get("deployment") if chosen and isinstance(sel, Mapping) else None) for c, chosen in zip(cands, chosen_at)])
    for i, c in enumerate(cands):
        chosen, notes = chosen_at[i], notes_at[i]
        mark = " ← recommended" if chosen else ""
        version = c.get("registry_version") or (snap.get("version") if chosen and snap else None)
        ver = f" [{version}]" if version else ""
        hp = c.get("hyperparameters") or {}
        hp_txt = ", ".join(f"{k} {hp[k]:.3g}" if isinstance(hp[k], float) else f"{k} {hp[k]}" for k in sorted(hp))
        ba = _cand_value(c, "balanced_accuracy")
        rate = _cand_value(c, "selection_rate")
        extra = (f", bal. acc. {num(ba)}" if ba is not None else "") + (f", positive rate {num(rate)}" if rate is not None
                                                                        else "")
        infeasible = " (outside the constraints)" if c.get("feasible") is False else ""
        lines.append(f"#{i + 1}{ver}: AUC {num(_cand_value(c, 'auc'))}{extra}, DP {num(_cand_value(c, 'dp'))}, "
                     f"GESD {num(_cand_value(c, 'gesd'))}{mark}{infeasible}" + (f" ({notes})" if notes else "")
                     + (f" ({hp_txt})" if hp_txt else ""))
    why = "" if parent_fingerprint is not None else ", requested on demand"
    recipes = f", {len(cands) - len(repeats)} distinct recipes" if repeats else ""
    registered = snap is not None or any(c.get("registry_version") for c in cands)
    head = (f"FEU retraining candidates for {ctx.monitor} ({len(cands)} on the Pareto front{recipes}{why}; "
            "proposed, not deployed" + (": production changes only when someone promotes the registered version"
                                         if registered else "")
            + "; the recommendation's before/after figures are out of fold or on validation, the candidate "
            "and baseline lists are on the test split)")
    attr = feu.get("sensitive") or (feu.get("data") or {}).get("sensitive")
    raw_target = feu.get("target")
    target: Mapping[str, Any] = raw_target if isinstance(raw_target, Mapping) else {}
    group = rumie_target_clause(target)
    if group is not None:  # FEU retrained for the group the alert is about
        head += f". {group}"
    elif attr:  # what "DP" means here, and that a group RUMIE found is not what FEU retrains for
        names = ", ".join("`" + str(a).replace("`", "'") + "`" for a in ([attr] if isinstance(attr, str) else attr))
        why = f" ({target['reason']})" if target.get("reason") else ""
        head += (f". DP and GESD compare the groups of {names}, the attribute FEU retrains for "
                 f"(explanations.gesd.attribute, else the first sensitive column); not a group RUMIE found{why}"
                 + left_out_clause(target))
    verdict = str(feu.get("recommendation") or "")
    base_lines = _baseline_lines(feu.get("baselines"))
    fp = finding_fingerprint(ctx.monitor, ctx.window_start, f"feu:{parent_fingerprint or 'on_demand'}", "event")
    body = ("*Candidates (test split):*\n" if lines else "") + "\n".join(f"• {ln}" for ln in lines)  # section() escapes
    if verdict:
        body = f"_{verdict}_\n" + body
    if base_lines:
        body += "\n*Baselines (test split):*\n" + "\n".join(f"• {ln}" for ln in base_lines)
    lines = [*([verdict] if verdict else []), *lines, *base_lines]
    blocks = [section(f"*{head}*\n" + body)]
    where = ""
    if parent_fingerprint is None:  # not in a thread: say which model and window it is about
        blocks.insert(0, context_block(ctx))
        where = f"\nModel {ctx.model_version or 'unknown'}, window {window_text(ctx)}"
    link, link_txt = link_block(ctx)
    blocks.extend(link)
    return SlackMessage(
        text=message_text([head + where, *lines], link_txt),
        blocks=blocks,
        metadata=metadata(fp, ctx, kind="feu", parent=parent_fingerprint),
        fingerprint=fp,
        thread_of=parent_fingerprint,
    )


def _baseline_lines(baselines: Any) -> list[str]:
    """One line per FEU baseline: what the recommendation is compared with (test metrics)."""
    if not isinstance(baselines, Mapping):
        return []
    out = []
    for key in BASELINES:
        test = (baselines.get(key) or {}).get("test") or {}
        val = (baselines.get(key) or {}).get("validation") or {}
        # why a mitigator with a lower DP is not what FEU proposes (fairmon.feu._mitigator_constraints.check_constraints)
        note = constraint_note(val)
        flag = f" ({note})" if note else ""
        if test:
            out.append(f"{baseline_label(key, test.get('tol'))}: bal. acc. {num(test.get('balanced_accuracy'))}, positive rate "
                       f"{num(test.get('selection_rate'))}, DP {num(test.get('dp'))}{flag}")
    return out


def data_validation_fingerprint(monitor: str, window_start: datetime) -> str:
    """Fingerprint of the one data-validation alert of a window."""
    return finding_fingerprint(monitor, window_start, "data_validation:suite:*", "event")


def render_data_validation(failed: Sequence[Mapping[str, Any]], ctx: AlertContext) -> SlackMessage:
    """The data-validation template: the window's data failed its suite, no fairness numbers computed.

    ``failed`` holds the failed expectations (``DataValidationError.failed``): dicts with at least
    ``expectation`` and optionally ``column`` and ``message`` (shown: it names the file or the values),
    else ``observed``.
    """
    fp = data_validation_fingerprint(ctx.monitor, ctx.window_start)
    lines = []
    for f in failed[:20]:
        col = f" on `{f['column']}`" if f.get("column") else ""
        if f.get("message"):  # what fairmon's checks say: the file, the value, the bounds
            lines.append(f"{f.get('expectation', 'expectation')}{col}: {f['message']}")
            continue
        obs = f" (observed {f['observed']})" if f.get("observed") is not None else ""
        lines.append(f"{f.get('expectation', 'expectation')}{col}{obs}")
    if len(failed) > 20:
        lines.append(f"... and {len(failed) - 20} more")
    head = f"Data validation failed: {ctx.monitor}"
    blocks = [
        header(f"CRITICAL · {head}"),
        context_block(ctx, f"*Failed expectations* {len(failed)}"),
        section(":no_entry: The window's data failed its validation suite; fairness metrics were not "
                 "computed for this window.\n" + "\n".join(f"• {ln}" for ln in lines)),
    ]  # no report link: a window whose data failed writes no report (the run row holds the failures)
    text = message_text([f"[critical] fairmon {ctx.monitor}: data validation failed for window {window_text(ctx)} "
                         f"(model {ctx.model_version or 'unknown'}); {len(failed)} failed expectations:", *lines])
    return SlackMessage(text=text, blocks=blocks, metadata=metadata(fp, ctx, kind="data_validation"),
                        fingerprint=fp)
