"""Allowed ranges judged on the interval (default) or on the value (issue 22, item 3).

A compliance team reads the four-fifths rule on the point value: ``dp_ratio`` 0.794 with
``allowed_ranges: {dp_ratio: [0.8, 1.0]}`` gave no finding on main because the whole confidence
interval had to lie below 0.8. ``judge: value`` makes that window a finding; the list form keeps
today's meaning (and the spec's fingerprint); the report says which rule each range uses.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fairmon.config import AllowedRange, DriftSpec, MonitorSpec, parse_spec
from fairmon.config._monitor import EXAMPLE
from fairmon.drift import WindowSummary, decide
from fairmon.drift.checks import CIOutsideRange
from fairmon.drift.spec import settings_from_spec
from fairmon.report.data import ReportData
from fairmon.report.render import RANGE_RULES, render_html
from fairmon.store.records import FindingRecord, MetricRecord, RunRecord

START = datetime(2026, 1, 5, tzinfo=UTC)
END = datetime(2026, 1, 6, tzinfo=UTC)
#: issue 22's window: 395 rows, dp_ratio 0.794 with a bootstrap interval reaching above 0.8
ROW = {"metric": "dp_ratio", "attribute": "sex", "value": 0.794, "ci_low": 0.70, "ci_high": 0.88, "n": 395}


def _spec(ranges: Any) -> MonitorSpec:
    return MonitorSpec.model_validate({**EXAMPLE, "drift": {"allowed_ranges": ranges, "persistence": {"m": 1, "n": 1}}})


def _range_findings(spec: MonitorSpec) -> list[Any]:
    s = settings_from_spec(spec.drift, spec.alerts)
    window = WindowSummary.build("m", START, END, outcome=[ROW])
    return [f for f in decide(window, [], **s.kwargs()) if f.kind == "ci_outside_range"]


def test_the_list_form_is_judged_on_the_interval_and_keeps_the_fingerprint() -> None:
    listed = _spec({"dp_ratio": [0.8, 1.0]})
    assert listed.drift.allowed_ranges["dp_ratio"] == AllowedRange(range=(0.8, 1.0), judge="interval")
    written = _spec({"dp_ratio": {"range": [0.8, 1.0], "judge": "interval"}})
    default = MonitorSpec.model_validate({**EXAMPLE, "drift": {"persistence": {"m": 1, "n": 1}}})
    assert listed.fingerprint == written.fingerprint == default.fingerprint
    assert listed.model_dump(mode="json")["drift"]["allowed_ranges"] == {"dp_ratio": [0.8, 1.0]}
    assert _range_findings(listed) == []  # the interval reaches 0.88: no finding (today's rule)


def test_judge_value_fires_on_the_point_value_the_four_fifths_rule() -> None:
    spec = _spec({"dp_ratio": {"range": [0.8, 1.0], "judge": "value"}})
    assert spec.fingerprint != _spec({"dp_ratio": [0.8, 1.0]}).fingerprint
    assert spec.model_dump(mode="json")["drift"]["allowed_ranges"] == {
        "dp_ratio": {"range": [0.8, 1.0], "judge": "value"}
    }
    (finding,) = _range_findings(spec)
    assert finding.status == "open" and finding.severity == "warning"
    assert finding.numbers["judge"] == "value"
    assert finding.numbers["gap"] == pytest.approx(0.006)
    assert "0.794" in finding.message and "below the allowed minimum 0.8 (judged on the value; 95% CI" in finding.message
    # a value inside the range is no finding under either rule
    inside = CIOutsideRange(metric="dp_ratio", low=0.8, high=1.0, judge="value")
    ok = WindowSummary.build("m", START, END, outcome=[{**ROW, "value": 0.81}])
    assert [e.violation for e in inside.evaluate(ok, None)] == [None]  # type: ignore[arg-type]


def test_bad_judge_and_bad_range_name_the_field() -> None:
    base = (
        "spec_version: 1\nidentity: {name: m}\nmodel: {registry_uri: r}\n"
        "data: {files: {pattern: 'd/{start:%Y-%m-%d}.csv'}}\ncolumns: {features: [a, sex], sensitive: [sex]}\n"
        "schedule: {start_date: 2026-01-01}\n"
    )
    with pytest.raises(Exception) as exc:
        parse_spec(base + "drift:\n  allowed_ranges: {dp_ratio: {range: [0.8, 1.0], judge: point}}\n", source="s.yaml")
    assert "drift.allowed_ranges.dp_ratio.judge" in str(exc.value) and "interval" in str(exc.value)
    with pytest.raises(Exception) as exc:
        parse_spec(base + "drift:\n  allowed_ranges: {dp_ratio: {range: [1.0, 0.8], judge: value}}\n", source="s.yaml")
    assert "drift.allowed_ranges.dp_ratio" in str(exc.value) and "low <= high" in str(exc.value)
    assert DriftSpec().allowed_ranges["dp_ratio"].judge == "interval"


def test_the_report_marks_the_rule_of_each_range() -> None:
    spec = _spec({"dp_ratio": {"range": [0.8, 1.0], "judge": "value"}, "dp_difference": [0.0, 0.1]})
    (finding,) = _range_findings(spec)
    data = ReportData(
        run=RunRecord("m", START, END, run_id=1),
        metrics=(MetricRecord("dp_ratio", 0.794, attribute="sex", ci_low=0.70, ci_high=0.88, n=395),
                 MetricRecord("dp_difference", 0.05, attribute="sex", ci_low=0.0, ci_high=0.1, n=395)),
        findings=(FindingRecord.from_finding(finding),),
        allowed_ranges=tuple((m, r.low, r.high, r.judge) for m, r in sorted(spec.drift.allowed_ranges.items())),
    )
    html = render_html(data)
    assert "[0.8, 1] · value" in html and "[0, 0.1] · interval" in html
    assert "dp_ratio [0.8, 1], " + RANGE_RULES["value"] in html
    assert "dp_difference [0, 0.1], " + RANGE_RULES["interval"] in html
    assert "outside its allowed range (judged on the value)" in html
    # without the spec (a rebuild without --spec) the report shows no range column
    assert "judged on" not in render_html(ReportData(run=RunRecord("m", START, END, run_id=1), metrics=data.metrics))
