"""The alert lines of a window's diagnosis (issue 19): top three features, escaping, the cause line."""

from __future__ import annotations

from fairmon.alerts.diagnosis import cause_line, why_lines
from fairmon.alerts.message import AlertContext
from fairmon.store import AttributionGapRecord, RescoreRecord


def _feat(name: str, d: float, lo: float, hi: float) -> dict[str, object]:
    return {"feature": name, "inside": d, "outside": 0.0, "difference": d, "ci_low": lo, "ci_high": hi}


def test_why_lines_rumie_first_top_three_escaped() -> None:
    declared = AttributionGapRecord("declared", "ok", group_label="sex=<F>", features=(_feat("age", -0.1, -0.2, -0.05),))
    rumie = AttributionGapRecord("rumie", "ok", group_label="age <= 30", features=(
        _feat("account_years", -0.08, -0.1, -0.06), _feat("inc&me", 0.05, 0.01, 0.09),
        _feat("region", -0.03, -0.05, 0.01), _feat("branch", 0.02, 0.01, 0.03), _feat("student", 0.015, 0.005, 0.02)))
    small = AttributionGapRecord("declared", "insufficient", reason="3 rows")
    lines = why_lines([declared, rumie, small])
    assert len(lines) == 2
    assert lines[0].startswith("_Why disfavored_ (the RUMIE group): `account_years` lowers P(favorable) by 0.08 "
                               "more inside the group [-0.10, -0.06]; `inc&amp;me` raises")
    assert "region" not in lines[0]  # its interval includes 0: nothing to act on
    assert "branch" in lines[0] and "student" not in lines[0]  # the top three of those beyond their noise
    assert "`sex=&lt;F&gt;`" in lines[1] and "<" not in lines[1]


def test_a_group_whose_gaps_are_all_within_noise_gets_no_line() -> None:
    """Found trying the demo: a declared group's three features, every interval including 0, filled the
    alert with numbers that say nothing (the report still lists them)."""
    noise = AttributionGapRecord("declared", "ok", group_label="race=asian", features=(
        _feat("income", 0.01, -0.01, 0.04), _feat("education", -0.006, -0.02, 0.01)))
    assert why_lines([noise]) == ()
    tiny = AttributionGapRecord("declared", "ok", group_label="race=asian", features=(
        _feat("student", 0.002, 0.001, 0.003),))  # certain, but too small to act on
    assert why_lines([tiny]) == ()


def test_cause_line_prefers_rumie_and_counts_the_rest() -> None:
    ok = RescoreRecord("rumie_dscore", "rumie_honest_dscore", old_version="v1", new_version="v2",
                       value_old=0.05, value_new=0.19, verdict="model")
    other = RescoreRecord("ci_outside_range", "dp_ratio", group="sex", old_version="v1", new_version="v2",
                          value_old=0.9, value_new=0.7, verdict="model")
    skipped = RescoreRecord("gesd_rise", "gesd", group="sex", old_version="v1", new_version="v2", status="skipped")
    line = cause_line([other, skipped, ok])
    assert line is not None and line.startswith("_Model or data?_ with v1 on this window's data the DScore")
    assert line.endswith("the change follows the model, not the data (+1 more in the report)")
    assert cause_line([skipped]) is None and cause_line([]) is None


def test_one_series_rescored_for_several_rules_is_one_answer() -> None:
    """The demo's three RUMIE rules each rescored the honest DScore: "+2 more in the report" led to three
    identical rows."""
    same = [RescoreRecord(kind, "rumie_honest_dscore", old_version="v1", new_version="v2", value_old=0.04,
                          value_new=0.2, verdict="model") for kind in ("rumie_dscore", "rumie_rise", "ci_outside_range")]
    line = cause_line(same)
    assert line is not None and "more in the report" not in line
    from fairmon.report._diagnosis import diagnosis_context

    rows = diagnosis_context([], same, lambda *a, **k: None)["rescores"]
    assert len(rows) == 1 and rows[0]["kind"] == "rumie_dscore, rumie_rise, ci_outside_range"
    # rules that define their series differently keep each definition (the first one's stood for all)
    defined = [RescoreRecord(kind, "rumie_honest_dscore", old_version="v1", new_version="v2", value_old=0.04,
                             value_new=0.2, verdict="model", definition=d)
               for kind, d in (("rumie_dscore", "held-out"), ("rumie_rise", "in-sample"), ("ci_outside_range", "held-out"))]
    rows = diagnosis_context([], defined, lambda *a, **k: None)["rescores"]
    assert len(rows) == 1 and rows[0]["definition"] == "held-out · in-sample"


def test_alert_context_carries_the_fields() -> None:
    from datetime import UTC, datetime

    ctx = AlertContext(monitor="m", window_start=datetime(2026, 1, 8, tzinfo=UTC), why=("a",), cause="b")
    assert ctx.why == ("a",) and ctx.cause == "b"
    assert AlertContext(monitor="m", window_start=datetime(2026, 1, 8, tzinfo=UTC)).cause is None
