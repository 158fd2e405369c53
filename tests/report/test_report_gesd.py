"""The report's GESD section: one per sensitive attribute, an undefined GESD shown as n/a with its reason."""

from __future__ import annotations

from datetime import UTC, datetime

from fairmon.report.data import ReportData, TrendPoint
from fairmon.report.render import render_html
from fairmon.store import ExplanationMetricRecord, RunRecord

START = datetime(2026, 1, 5, tzinfo=UTC)


def _data() -> ReportData:
    expl = (
        ExplanationMetricRecord("gesd", "gesd", 0.04, explainer="shap+lime", group="sex", p_value=0.02, n=100,
                                group_stability={"F": 0.8, "M": 0.84}, details={"attribute": "sex", "status": "ok"}),
        ExplanationMetricRecord("gesd", "stability", 0.8, explainer="shap+lime", group="sex=F", n=50),
        ExplanationMetricRecord("gesd", "stability", 0.84, explainer="shap+lime", group="sex=M", n=50),
        ExplanationMetricRecord("gesd", "gesd", None, explainer="shap+lime", group="race", n=0,
                                details={"attribute": "race", "status": "insufficient: the sampled rows hold only 1 group(s): ['A']"}),
    )
    run = RunRecord("demo", START, datetime(2026, 1, 6, tzinfo=UTC))
    trend = (TrendPoint(START, "succeeded", "v1", gesd={"sex": 0.04, "race": None}),)
    return ReportData(run=run, explanations=expl, trend=trend)


def test_one_gesd_section_per_attribute_and_undefined_is_not_zero() -> None:
    data = _data()
    assert list(data.gesd) == ["race", "sex"]
    html = render_html(data)
    assert "across <b>sex</b>" in html and "across <b>race</b>" in html
    assert "GESD <b>n/a</b> across <b>race</b>" in html
    assert "insufficient: the sampled rows hold only 1 group(s)" in html
    assert "GESD (sex)" in html and "GESD (race)" in html  # a headline card each


def test_rows_stored_before_per_attribute_gesd_keep_their_attribute() -> None:
    old = ExplanationMetricRecord("gesd", "gesd", 0.03, group="", details={"attribute": "sex"})
    assert old.gesd_attribute == "sex"
    assert ExplanationMetricRecord("gesd", "stability", 0.8, group="sex=F").gesd_attribute is None
    assert list(ReportData(run=_data().run, explanations=(old,)).gesd) == ["sex"]
