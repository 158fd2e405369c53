"""Slack mrkdwn injection (issue 15, item 3): user-controlled strings are escaped in text and blocks."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from fairmon.alerts import AlertContext, render_data_validation, render_finding
from fairmon.alerts.render import render_feu_followup
from fairmon.drift import Finding

T0 = datetime(2026, 1, 5, tzinfo=UTC)
HOSTILE = ("<!channel>", "<http://x|y>")


def _everything(m: object) -> str:
    return json.dumps({"text": m.text, "blocks": m.blocks})  # type: ignore[attr-defined]


def _clean(out: str) -> None:
    for raw in HOSTILE:
        assert raw not in out, raw
    assert "&lt;!channel&gt;" in out and "&lt;http://x|y&gt;" in out


def test_group_names_rules_and_monitor_names_are_escaped() -> None:
    group = "sex=<!channel>"
    f = Finding(kind="ci_outside_range", metric="selection_rate", group=group, severity="warning", value=0.2,
                ci=(0.1, 0.3), monitor="m <http://x|y>", window_start=T0,
                message=f"selection_rate for {group} is 0.200, <http://x|y>",
                numbers={"groups": {"rate": "selection_rate", "disadvantaged": {"group": "<!channel>", "value": 0.2},
                                    "advantaged": {"group": "<http://x|y>", "value": 0.5}}}, notify=True, since=T0)
    ev = {"method": "ie-dt", "status": "ok", "dscore": 0.2, "honest_dscore": 0.15, "p_value": 0.01,
          "rules": ["region = <!channel>"], "rule": "region = <!channel>", "key_attributes": ["<http://x|y>"],
          "p_fav_in": 0.3, "p_fav_out": 0.6, "fraction": 0.4, "group_size": 40}
    m = render_finding(f, AlertContext("m <http://x|y>", T0, model_version="<!channel>", evidence=ev))
    _clean(_everything(m))


def test_column_names_and_values_of_a_data_alert_are_escaped() -> None:
    failed = [{"expectation": "expect_column_values_to_be_in_set", "column": "<!channel>",
               "observed": "<http://x|y>"}]
    _clean(_everything(render_data_validation(failed, AlertContext("demo", T0))))


def test_feu_hyperparameters_are_escaped() -> None:
    feu = {"candidates": [{"auc": 0.8, "dp": 0.05, "gesd": 0.01, "selected": True,
                           "hyperparameters": {"<!channel>": "<http://x|y>"}}]}
    _clean(_everything(render_feu_followup(feu, AlertContext("demo", T0), parent_fingerprint=None)))


def test_the_report_link_stays_a_link() -> None:
    f = Finding(kind="ci_outside_range", metric="selection_rate", group="sex=f", severity="warning", value=0.2,
                ci=(0.1, 0.3), monitor="demo", window_start=T0, message="selection_rate for sex=f is 0.200",
                notify=True, since=T0)
    m = render_finding(f, AlertContext("demo", T0, report_base_url="https://r.example.com"))
    assert "<https://r.example.com/demo/2026-01-05.html|Open the run report>" in json.dumps(m.blocks)
    # a data_invalid window writes no report: its data alert links none (a user found the link dead)
    dv = render_data_validation([], AlertContext("demo", T0, report_base_url="https://r.example.com"))
    assert "r.example.com" not in _everything(dv)
