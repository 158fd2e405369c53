"""One message per monitor-window (issue 19): merging per phenomenon, labelled p-values, group history,
why / cause lines, report links from the configured base URL, and Slack's Block Kit limits."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import timedelta

import pytest
from alert_helpers import EVIDENCE, RULE, T0, ctx, dp_finding, rumie_finding
from slack_server import block_kit_error

from fairmon.alerts import InMemoryOutboxRepository, Outbox, alert_fingerprint
from fairmon.alerts.grouping import plan_messages, window_fingerprint
from fairmon.alerts.history import GroupHistory
from fairmon.alerts.message import mrkdwn_escape
from fairmon.alerts.window_message import (
    MAX_BLOCKS,
    MAX_HEADER,
    MAX_SECTION,
    MAX_TEXT,
    render_resolution,
    render_window,
)
from fairmon.config import MonitorSpec, resolve_runtime
from fairmon.drift import Finding

CH = "#fairness"


def _range(value: float = 0.187) -> Finding:
    """The allowed-range rule on the honest DScore (what the demo's spec configures)."""
    return Finding(kind="ci_outside_range", metric="rumie_honest_dscore", group="", severity="warning",
                   value=value, ci=(0.15, 0.22), monitor="credit", window_start=T0, window_end=T0 + timedelta(days=1),
                   message="rumie_honest_dscore is 0.187 (95% CI 0.150–0.220), the whole interval above the "
                           "allowed maximum 0.1",
                   numbers={"allowed_low": -1.0, "allowed_high": 0.1}, notify=True, since=T0)


def _threshold() -> Finding:
    return Finding(kind="rumie_dscore", metric="rumie_honest_dscore", group="", severity="warning", value=0.187,
                   ci=(0.15, 0.22), monitor="credit", window_start=T0, window_end=T0 + timedelta(days=1),
                   message="the most discriminated group found by RUMIE has an honest DScore of 0.187, "
                           "significantly above the threshold 0.1 (p = 1.2e-11)",
                   numbers={"threshold": 0.1, "p_value": 1.2e-11, "p_value_zero": 1.2e-13, "alpha": 0.05},
                   notify=True, since=T0)


def _series(attr: str, kind: str = "ci_outside_range", rule_len: int = 0) -> Finding:
    extra = " and " + "x" * rule_len if rule_len else ""
    return dataclasses.replace(dp_finding(), kind=kind, group=attr, message=f"dp_difference for {attr} is 0.163{extra}")


def _window(findings: list[Finding], **kw):  # type: ignore[no-untyped-def]
    (plan,) = plan_messages(findings)
    return render_window(plan, ctx(**kw))


def _limits_ok(msg) -> None:  # type: ignore[no-untyped-def]
    assert block_kit_error(msg.text, msg.blocks) is None
    assert len(msg.blocks) <= MAX_BLOCKS and len(msg.text) <= MAX_TEXT
    for b in msg.blocks:
        t = (b.get("text") or {}).get("text", "")
        assert len(t) <= (MAX_HEADER if b["type"] == "header" else MAX_SECTION)


def test_range_and_threshold_on_the_honest_dscore_are_one_entry_listing_both_rules() -> None:
    m = _window([_range(), _threshold()])
    sections = [b for b in m.blocks if b["type"] == "section"]
    group_blocks = [b for b in sections if "Most discriminated group (RUMIE)*" in b["text"]["text"]]
    assert len(group_blocks) == 1  # one details block for the phenomenon
    details = group_blocks[0]["text"]["text"]
    assert "allowed range on rumie_honest_dscore + DScore threshold" in details
    assert details.count(mrkdwn_escape(RULE)) == 1 and details.count("0.412") == 1  # rules and sizes once
    assert m.text.count(mrkdwn_escape(RULE)) == 1
    assert "*2 rules fired on 1 phenomenon*" in sections[0]["text"]["text"]
    assert m.blocks[0]["text"]["text"] == "WARNING · credit: Most discriminated group (RUMIE)"
    assert m.extra["findings"][0]["entry"] == m.extra["findings"][1]["entry"] == "rumie"
    assert m.metadata["event_payload"]["findings"] == 2


def test_same_series_merges_other_series_stay_apart_and_severity_is_the_highest() -> None:
    change = dataclasses.replace(dp_finding(), kind="significant_change", severity="critical", baseline=0.05,
                                 message="dp_difference for sex rose to 0.163 (p = 3e-06)",
                                 numbers={"p_value": 3e-6, "test": "t", "history": 7, "alpha": 0.01, "n_tests": 5})
    m = _window([dp_finding(), change, _series("race"), rumie_finding()])
    (plan,) = plan_messages([dp_finding(), change, _series("race"), rumie_finding()])
    assert [e.key for e in plan.entries] == ["dp_difference:sex", "rumie", "dp_difference:race"]  # critical first
    assert m.blocks[0]["text"]["text"].startswith("CRITICAL · credit: ")
    sex = next(b["text"]["text"] for b in m.blocks if b["type"] == "section" and "*dp_difference — sex*" in b["text"]["text"])
    assert "significant change + allowed range (critical)" in sex and "Baseline: 0.050" in sex
    assert "4 rules fired on 3 phenomena" in m.text


def test_every_p_value_says_which_test_it_comes_from() -> None:
    """Issue 22 item 6: one finding showed 'p = 1.2e-11' and '(p = 1.2e-13)' without saying which is which."""
    m = _window([_range(), _threshold(), rumie_finding()])
    ps = re.findall(r"(.{0,40})p = [0-9.e+-]+( by )?", m.text)
    assert len(ps) == 3 and all(by or before.endswith("test's ") for before, by in ps), ps
    assert "p = 1.2e-11 by a one-sided Wald test of DScore ≤ 0.1" in m.text
    assert "p = 4e-05 by a one-sided t test against those 14 baseline windows" in m.text
    assert "the held-out two-proportion z test's p = 0.0004" in m.text
    assert "1.2e-13" not in m.text  # the threshold rule's copy of the held-out p is not repeated


def test_group_history_why_and_cause_lines_are_rendered_once_and_not_re_escaped() -> None:
    h = GroupHistory(previous_window=T0 - timedelta(days=1), jaccard=0.83, min_jaccard=0.5, dscore_before=0.12,
                     dscore_now=0.19, added=("region = north",), removed=("age <= 25",))
    why = ("• `account_years` lowers P(favorable) by 0.08 more inside the group (&lt;1 year)",)
    cause = "_Model or data?_ with v1 on this window's data the honest DScore would be 0.05: the change follows the model"
    m = _window([_range(), _threshold()], history=h, why=why, cause=cause)
    blocks = json.dumps(m.blocks, ensure_ascii=False)
    assert "same group (Jaccard 0.83 with the 2026-01-04 window’s group), honest DScore 0.12 → 0.19" in blocks
    assert "rules changed: +`region = north`, −`age &lt;= 25`" in blocks
    group = next(b["text"]["text"] for b in m.blocks
                 if "Most discriminated group (RUMIE)*" in b.get("text", {}).get("text", ""))
    assert why[0] in group and group.count(why[0]) == 1  # under the group's details, as given, once
    summary = m.blocks[2]["text"]["text"]
    assert summary.endswith(cause)  # under the summary of what fired
    assert "&amp;lt;" not in blocks and "&amp;lt;" not in m.text  # pre-escaped lines are not escaped twice
    assert "(&lt;1 year)" in m.text and cause in m.text
    # no RUMIE entry (only a declared group's disparity fired): the why lines go under that entry
    only_dp = _window([dp_finding()], why=why)
    assert why[0] in next(b["text"]["text"] for b in only_dp.blocks if "*dp_difference — sex*" in b.get("text", {}).get("text", ""))
    new = dataclasses.replace(h, jaccard=0.2)
    assert "new group (Jaccard 0.20" in _window([_threshold()], history=new).text
    assert "new group (no RUMIE group in an earlier window)" in _window(
        [_threshold()], history=dataclasses.replace(h, previous_window=None)).text


def test_report_links_use_the_configured_base_url_env_winning_over_the_spec() -> None:
    from fairmon.config._monitor import EXAMPLE

    spec = MonitorSpec.model_validate({**EXAMPLE, "alerts": {**EXAMPLE.get("alerts", {}),
                                                             "report_base_url": "https://spec.example.com/r"}})
    assert resolve_runtime(spec, env={}).report_base_url == "https://spec.example.com/r"
    s = resolve_runtime(spec, env={"FAIRMON_REPORT_BASE_URL": "http://reports.internal:8081"})
    assert (s.report_base_url, s.report_base_url_from) == ("http://reports.internal:8081", "env")
    with pytest.raises(Exception, match="FAIRMON_REPORT_BASE_URL"):
        resolve_runtime(spec, env={"FAIRMON_REPORT_BASE_URL": "reports.internal"})
    m = _window([_threshold(), dp_finding()], report_base_url=s.report_base_url)
    urls = re.findall(r"https?://[^\s|>]+", json.dumps(m.blocks) + m.text)
    assert urls and all(u.startswith("http://reports.internal:8081/credit/2026-01-05.html") for u in urls), urls


def test_twenty_groups_and_long_rules_stay_within_block_kit_limits_and_slack_accepts_it(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    long_rules = [" AND ".join(f"feature_{i}_{j} in {{{', '.join('v' * 12 for _ in range(6))}}}" for j in range(8))
                  for i in range(20)]
    ev = {**EVIDENCE, "rules": long_rules, "key_attributes": [f"feature_{i}" for i in range(20)]}
    findings = [_range(), _threshold()] + [_series(f"attribute_{i:02d}", rule_len=400) for i in range(20)]
    m = _window(findings, evidence=ev)
    _limits_ok(m)
    assert "see the run report" in json.dumps(m.blocks)  # the long rules were cut with a link
    assert sum("attribute_" in b.get("text", {}).get("text", "") for b in m.blocks[3:]) == 20  # every group has its block
    # 61 entries: more than the 45 blocks left — the rest summarised — the rest summarised with the report link, never refused
    many = _window([_threshold()] + [_series(f"attr_{i:02d}") for i in range(60)], evidence=ev)
    _limits_ok(many)
    assert len(many.blocks) == MAX_BLOCKS and "… and 16 more: see" in many.blocks[-2]["text"]["text"]
    assert "credit/2026-01-05.html" in many.blocks[-2]["text"]["text"]
    header = many.blocks[0]["text"]["text"]
    assert len(header) <= MAX_HEADER and header.endswith("…")
    # the fake Slack enforces the same limits and accepts both messages
    ob = Outbox(InMemoryOutboxRepository(), sender)
    ob.notify_findings(findings, ctx(evidence=ev), channels=CH)
    ob.notify_findings([dataclasses.replace(f, window_start=T0 + timedelta(days=1)) for f in findings],
                       ctx(1, evidence=ev), channels=CH)
    assert len(ob.deliver().sent) == 2 and len(slack_server.posted(CH)) == 2
    assert block_kit_error("x" * 40_001, []) == "msg_too_long"  # the fake refuses what Slack refuses
    assert block_kit_error("x", [{"type": "section", "text": {"type": "mrkdwn", "text": "y" * 3001}}]) == "invalid_blocks"


def test_resolutions_one_per_earlier_message_in_its_thread(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    assert len(ob.notify_findings([rumie_finding(0), dp_finding(0)], ctx(0), channels=CH)) == 1
    ob.deliver()
    resolved = [rumie_finding(4, status="resolved", since_day=0),
                dataclasses.replace(dp_finding(4), status="resolved", since=T0)]
    (fp,) = ob.notify_findings(resolved, ctx(4), channels=CH)  # both drifts of that message: one resolution
    ob.deliver()
    first, res = slack_server.posted(CH)
    assert res["thread_ts"] == first["ts"] and res["reply_broadcast"] is True
    assert res["blocks"][0]["text"]["text"].startswith("RESOLVED · credit")
    assert "2 rules cleared on 2 phenomena" in res["text"]
    assert repo.outbox_get(fp).payload["thread_of"] == alert_fingerprint(window_fingerprint("credit", T0), CH)  # type: ignore[union-attr]


def test_the_last_resolution_of_an_alert_names_the_rules_that_cleared_earlier(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """Session 24: the drift policy holds a rule's resolution until the last drift of its alert clears
    (fairmon.drift.policy, one resolution per alert); the resolution then posted names the held ones, and a
    resolution without held rules says nothing of the kind."""
    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    assert len(ob.notify_findings([rumie_finding(0), dp_finding(0)], ctx(0), channels=CH)) == 1
    ob.deliver()
    held = dataclasses.replace(dp_finding(3), status="resolved", since=T0, notify=False,
                               numbers={"held": "another drift of the same alert is still open"})
    assert ob.notify_findings([held], ctx(3), channels=CH) == []
    last = rumie_finding(5, status="resolved", since_day=0)
    last = dataclasses.replace(last, numbers={**last.numbers, "cleared_earlier": ["ci_outside_range on dp_difference for sex"]})
    (fp,) = ob.notify_findings([last], ctx(5), channels=CH)
    ob.deliver()
    first, res = slack_server.posted(CH)
    assert res["thread_ts"] == first["ts"] and "1 rule cleared on 1 phenomenon" in res["text"]
    assert "Cleared in earlier windows, held back until this last rule: ci_outside_range on dp_difference for sex." in res["text"]
    # a channel that only takes critical findings got the alert; the resolution standing for it (a warning
    # rule's, the critical one held) still reaches it
    crit = Outbox(InMemoryOutboxRepository(), sender)
    assert len(crit.notify_findings([rumie_finding(0), dp_finding(0)], ctx(0), channels={CH: "critical"})) == 1
    warning_last = dataclasses.replace(dp_finding(3), status="resolved", since=T0, numbers={
        "cleared_earlier": ["rumie_rise on rumie_honest_dscore"], "alert_severity": "critical"})
    assert len(crit.notify_findings([warning_last], ctx(3), channels={CH: "critical"})) == 1
    plain = plan_messages([rumie_finding(5, status="resolved", since_day=0)])
    assert "Cleared in earlier windows" not in render_resolution(plain[0], ctx(5)).text


def test_resolution_of_a_drift_opened_before_grouping_threads_under_its_old_message(slack_server, sender) -> None:  # type: ignore[no-untyped-def]
    """A drift whose opening message was one per finding (before issue 19) still gets its thread."""
    from fairmon.alerts import render_finding

    repo = InMemoryOutboxRepository()
    ob = Outbox(repo, sender)
    opened = rumie_finding(0)
    old_fp = alert_fingerprint(opened.fingerprint, CH)
    ob.enqueue(render_finding(opened, ctx(0), fingerprint=old_fp), channel=CH, monitor="credit",
               window_start=T0, severity="critical")
    ob.deliver()
    (fp,) = ob.notify_findings([rumie_finding(3, status="resolved", since_day=0)], ctx(3), channels=CH)
    assert repo.outbox_get(fp).payload["thread_of"] == old_fp  # type: ignore[union-attr]
    ob.deliver()
    first, res = slack_server.posted(CH)
    assert res["thread_ts"] == first["ts"]
