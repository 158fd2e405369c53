"""The report's OpenXAI section: an undefined metric says so with its reason, and RIS/RRS/ROS come with a
note on their scale (issue 22 item 7: RIS of 50k-125k with no guidance; RRS shown equal to ROS)."""

from __future__ import annotations

from datetime import UTC, datetime

from fairmon.explain.openxai import RRS_UNDEFINED_NOTE
from fairmon.report.data import ReportData
from fairmon.report.render import render_html
from fairmon.store.records import ExplanationMetricRecord, RunRecord

RUN = RunRecord("m", datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 1, 6, tzinfo=UTC), run_id=1)


def _row(metric: str, value: float | None, **details: str) -> ExplanationMetricRecord:
    return ExplanationMetricRecord(family="openxai", metric=metric, value=value, explainer="lime", n=50,
                                   n_nan=50 if value is None else 0, details={"note": "", **details})


def test_undefined_rrs_is_shown_as_undefined_with_its_reason_and_a_scale_note() -> None:
    rows = (_row("RIS", 61234.5), _row("RRS", None, status=RRS_UNDEFINED_NOTE), _row("ROS", 4.7))
    html = render_html(ReportData(run=RUN, explanations=rows))
    assert '<td>RRS</td><td class="num">undefined</td>' in html
    assert f"RRS (lime): {RRS_UNDEFINED_NOTE}" in html
    assert 'class="muted openxai-scale"' in html and "10<sup>4</sup>–10<sup>5</sup>" in html
    assert '<td>ROS</td><td class="num">4.7</td>' in html


def test_no_scale_note_without_stability_metrics() -> None:
    html = render_html(ReportData(run=RUN, explanations=(_row("PGI", 0.12),)))
    assert "openxai-scale" not in html and "openxai-undefined" not in html


def test_group_columns_show_their_size_and_a_gap_names_the_groups_left_out() -> None:
    """Session 24: per-group OpenXAI means of 1-7 rows were shown without their size, beside a bold gap they
    decided."""
    note = "range of group means; majority=white; groups with fewer than 10 rows left out: other (1), asian (4)"
    rows = (
        ExplanationMetricRecord(family="openxai", metric="PGI", value=0.02, explainer="lime", group="race=white", n=33),
        ExplanationMetricRecord(family="openxai", metric="PGI", value=0.04, explainer="lime", group="race=other", n=1),
        ExplanationMetricRecord(family="openxai", metric="PGI_fairness", value=0.01, explainer="lime", group="race",
                                n=50, details={"note": note}),
    )
    html = render_html(ReportData(run=RUN, explanations=rows))
    assert '<th class="num">race=other<br><span class="muted">n 1</span></th>' in html
    assert "gap race: groups with fewer than 10 rows left out: other (1), asian (4)" in html
