"""Drift decisions: checks, cold start, persistence, cooldown, resolution, history discipline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairmon.drift import (
    AlertPolicy,
    Baseline,
    CIOutsideRange,
    DScoreAbove,
    Finding,
    KeyAttributesChanged,
    NewGroup,
    SignificantChange,
    WindowSummary,
    decide,
    default_checks,
    replay,
)
from fairmon.drift.policy import ERR_HISTORY_ORDER
from fairmon.errors import ConfigError, MethodError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _rows(dp: float, half: float = 0.02) -> list[dict]:
    return [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": dp,
             "ci_low": dp - half, "ci_high": dp + half, "n": 5000, "n_nan": 0, "status": "ok"}]


def _w(i: int, dp: float = 0.03, *, evidence: dict | None = None, gesd: dict | None = None,
       overlap: float | None = None, status: str = "completed") -> WindowSummary:
    return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=_rows(dp),
                         evidence=evidence, gesd=gesd, group_overlap=overlap, status=status)


def _kinds(findings: list[Finding], kind: str) -> list[str]:
    return [f.status for f in findings if f.kind == kind]


def test_ci_outside_range_single_window_policy_and_message() -> None:
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1, critical_margin=0.1)]
    f = decide(_w(1, 0.15), [_w(0)], checks=checks, policy=pol)
    assert len(f) == 1 and f[0].status == "open" and f[0].notify and f[0].severity == "warning"
    assert "0.150" in f[0].message and "0.130" in f[0].message and "allowed maximum 0.1" in f[0].message
    assert f[0].ci == pytest.approx((0.13, 0.17))
    crit = decide(_w(1, 0.40), [_w(0)], checks=checks, policy=pol)
    assert crit[0].severity == "critical"
    # interval touching the range → no violation (Clarify rule is about the whole interval)
    assert decide(_w(1, 0.115), [_w(0)], checks=checks, policy=pol) == []


def test_cold_start_then_significant_rise_with_persistence_and_resolution() -> None:
    rng = np.random.default_rng(0)
    base = list(0.03 + rng.normal(0, 0.005, 8))
    series = base + [0.12, 0.12, 0.12, 0.03, 0.03, 0.03]
    ws = [_w(i, v) for i, v in enumerate(series)]
    checks = [SignificantChange(metric="dp_difference", alpha=0.01, min_effect=0.02)]
    out = replay(ws, checks=checks, baseline=Baseline(trailing_n=8, min_history=8))
    # cold start: nothing in the first windows even if values moved
    assert all(o == [] for o in out[:8])
    assert _kinds(out[8], "significant_change") == ["pending"]
    assert _kinds(out[9], "significant_change") == ["open"] and out[9][0].notify
    assert out[9][0].since == ws[9].window_start
    assert out[9][0].baseline == pytest.approx(np.mean(base[-8:]), abs=1e-9)
    assert "p = " in out[9][0].message
    # the drifting windows did not become the baseline: still ongoing at the third
    assert _kinds(out[10], "significant_change") == ["ongoing"] and not out[10][0].notify
    assert _kinds(out[11], "significant_change") == ["ongoing"]  # 2 of last 3 still violated
    res = out[12]
    assert _kinds(res, "significant_change") == ["resolved"] and res[0].notify
    assert "resolved" in res[0].message and res[0].since == ws[9].window_start
    assert out[13] == []


def test_decide_equals_replay_and_rerun_does_not_rewrite_later_decisions() -> None:
    rng = np.random.default_rng(1)
    values = list(0.03 + rng.normal(0, 0.01, 20))
    values[12:15] = [0.2, 0.21, 0.2]
    ws = [_w(i, v) for i, v in enumerate(values)]
    full = replay(ws)
    assert any(x.notify for x in full[13])
    for k in (5, 12, 13, 16):
        again = decide(ws[k], list(reversed(ws[:k])))
        assert [f.to_dict() for f in again] == [f.to_dict() for f in full[k]]
    # a later window's data never influences an earlier decision
    changed = ws[:14] + [_w(14, 0.9)] + ws[15:]
    assert [f.to_dict() for f in replay(changed)[13]] == [f.to_dict() for f in full[13]]


def test_history_must_be_earlier_and_incomplete_windows_are_ignored() -> None:
    with pytest.raises(MethodError) as ei:
        decide(_w(3), [_w(1), _w(3)])
    assert str(ei.value) == ERR_HISTORY_ORDER.format(current=_w(3).window_start.isoformat(),
                                                     bad=_w(3).window_start.isoformat())
    pol = AlertPolicy(persistence_m=2, persistence_n=2)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    # the failed window's violation does not count towards persistence
    assert _kinds(decide(_w(2, 0.5), [_w(1, 0.5, status="failed")], checks=checks, policy=pol),
                  "ci_outside_range") == ["pending"]
    assert _kinds(decide(_w(2, 0.5), [_w(1, 0.5)], checks=checks, policy=pol), "ci_outside_range") == ["open"]


def test_cooldown_suppresses_flapping_notifications() -> None:
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=3)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    ws = [_w(0, 0.5), _w(1, 0.0), _w(2, 0.5), _w(3, 0.0), _w(4, 0.0), _w(5, 0.5)]
    out = replay(ws, checks=checks, policy=pol)
    assert [(f.status, f.notify) for f in out[0]] == [("open", True)]
    assert [(f.status, f.notify) for f in out[1]] == [("resolved", True)]
    assert [(f.status, f.notify) for f in out[2]] == [("open", False)]
    assert out[2][0].numbers["suppressed"] == "cooldown"
    assert [(f.status, f.notify) for f in out[3]] == [("resolved", False)]  # its opening was not sent
    assert [(f.status, f.notify) for f in out[5]] == [("open", True)]


def test_min_severity_and_escalation() -> None:
    pol = AlertPolicy(persistence_m=1, persistence_n=1, min_severity="critical")
    checks = [CIOutsideRange(metric="dp_difference", high=0.1, critical_margin=0.2)]
    out = replay([_w(0, 0.2), _w(1, 0.5)], checks=checks, policy=pol)
    assert [(f.status, f.severity, f.notify) for f in out[0]] == [("open", "warning", False)]
    assert [(f.status, f.severity, f.notify) for f in out[1]] == [("ongoing", "critical", True)]


def _ev(honest: float, p: float, attrs: list[str]) -> dict:
    return {"dscore": honest + 0.05, "honest_dscore": honest, "p_value": p, "key_attributes": attrs,
            "rules": ["age <= 30 OR region = north"], "p_fav_inside": 0.4, "p_fav_outside": 0.6,
            "size_fraction": 0.48, "group_size": 2400,
            "significance": {"n_test": 2500, "test_group_size": 1200, "test_p_fav_in": 0.4, "test_p_fav_out": 0.65}}


def test_rumie_threshold_new_group_and_key_attributes() -> None:
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    checks = [DScoreAbove(threshold=0.2), NewGroup(min_jaccard=0.5), KeyAttributesChanged()]
    prev = _w(0, evidence=_ev(0.05, 0.01, ["age", "region"]))
    cur = _w(1, evidence=_ev(0.25, 1e-6, ["age", "income"]), overlap=0.3)
    f = {x.kind: x for x in decide(cur, [prev], checks=checks, policy=pol)}
    assert f["rumie_dscore"].notify and "0.250" in f["rumie_dscore"].message
    se = f["rumie_dscore"].numbers["se"]
    assert se == pytest.approx((0.4 * 0.6 / 1200 + 0.65 * 0.35 / 1300) ** 0.5)
    # just above the threshold is not significantly above it
    near = _w(1, evidence=_ev(0.21, 1e-6, ["age", "region"]), overlap=0.9)
    assert decide(near, [prev], checks=[DScoreAbove(threshold=0.2)], policy=pol) == []
    assert f["rumie_new_group"].numbers["jaccard"] == 0.3
    assert f["rumie_new_group"].numbers["previous_rules"] == ["age <= 30 OR region = north"]
    ka = f["rumie_key_attributes"]
    assert ka.severity == "info" and not ka.notify and ka.numbers["added"] == ["income"]
    # an insignificant group is not news
    calm = _w(1, evidence=_ev(0.25, 0.2, ["income"]), overlap=0.1)
    assert decide(calm, [prev], checks=checks, policy=pol) == []
    weak = _w(1, evidence=_ev(0.08, 1e-6, ["age", "region"]), overlap=0.1)
    assert decide(weak, [prev], checks=[NewGroup(min_dscore=0.1)], policy=pol) == []
    assert decide(weak, [prev], checks=[NewGroup(min_dscore=0.05)], policy=pol)[0].kind == "rumie_new_group"
    # nor are the changing key attributes of a weak (significant but below-threshold) group
    moved = _w(1, evidence=_ev(0.08, 1e-6, ["income"]), overlap=0.9)
    assert decide(moved, [prev], checks=[KeyAttributesChanged(min_dscore=0.1)], policy=pol) == []
    assert decide(moved, [prev], checks=[KeyAttributesChanged(min_dscore=0.05)], policy=pol)[0].numbers["added"] == [
        "income"]
    # a monitor's rule set gives both RUMIE group checks its DScore threshold
    monitor = {type(c).__name__: c for c in default_checks(dscore_threshold=0.12)}
    assert monitor["KeyAttributesChanged"].min_dscore == monitor["NewGroup"].min_dscore == 0.12


def test_gesd_rise_against_trailing_baseline() -> None:
    rng = np.random.default_rng(3)
    ws = [_w(i, gesd={"value": float(0.02 + rng.normal(0, 0.003)), "p_value": 0.5}) for i in range(10)]
    ws.append(_w(10, gesd={"value": 0.08, "p_value": 1e-4}))
    checks = [SignificantChange(metric="gesd", min_effect=0.03, kind="gesd_rise")]
    f = decide(ws[-1], ws[:-1], checks=checks, policy=AlertPolicy(persistence_m=1, persistence_n=1))
    assert _kinds(f, "gesd_rise") == ["open"] and f[0].severity == "critical"


def test_gesd_series_per_sensitive_attribute() -> None:
    """The pipeline's GESD is ``{attribute: result}``: each attribute is its own series, so a rise on
    race is found (and named) while sex stays flat."""
    rng = np.random.default_rng(4)

    def gesd(race: float) -> dict:
        return {"sex": {"value": float(0.02 + rng.normal(0, 0.003)), "p_value": 0.5, "attribute": "sex"},
                "race": {"value": race, "p_value": 0.5, "attribute": "race"}}

    ws = [_w(i, gesd=gesd(float(0.02 + rng.normal(0, 0.003)))) for i in range(10)]
    ws.append(_w(10, gesd=gesd(0.09)))
    assert {k for k in ws[-1].measurements() if k[0] == "gesd"} == {("gesd", "sex"), ("gesd", "race")}
    checks = [SignificantChange(metric="gesd", min_effect=0.03, kind="gesd_rise")]
    f = decide(ws[-1], ws[:-1], checks=checks, policy=AlertPolicy(persistence_m=1, persistence_n=1))
    assert [(x.kind, x.group, x.status) for x in f if x.status != "pending"] == [("gesd_rise", "race", "open")]
    # an undefined GESD (None) is no measurement at all, not a zero
    assert ("gesd", "race") not in _w(11, gesd={"race": {"value": None, "status": "insufficient: ..."}}).measurements()


def test_reference_baseline_uses_interval_z_test() -> None:
    base = Baseline(mode="reference", reference_start=T0, min_history=2, trailing_n=5)
    checks = [SignificantChange(metric="dp_difference", min_effect=0.02)]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    f = decide(_w(1, 0.10, ), [_w(0, 0.03)], checks=checks, baseline=base, policy=pol)
    assert f and f[0].baseline == pytest.approx(0.03) and f[0].numbers["test"] == "z"
    assert decide(_w(1, 0.04), [_w(0, 0.03)], checks=checks, baseline=base, policy=pol) == []
    # no window holds the reference date: nothing to compare with — no error, no trailing fallback
    assert decide(_w(3, 0.30), [_w(1), _w(2)], checks=checks, baseline=base, policy=pol) == []


def test_bonferroni_divides_alpha_by_the_tested_series() -> None:
    ws = [_w(i, 0.03 + 0.002 * (i % 3)) for i in range(8)]
    cur = _w(8, 0.062)  # t ≈ 2.9 with 6 df: p ≈ 0.013, between 0.05/41 and 0.05
    one = [SignificantChange(metric="dp_difference", alpha=0.05, correction="bonferroni")]
    many = one + [SignificantChange(metric="dp_difference", alpha=0.05, correction="bonferroni", kind=f"k{i}")
                  for i in range(40)]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    assert _kinds(decide(cur, ws, checks=one, policy=pol), "significant_change") == ["open"]
    assert _kinds(decide(cur, ws, checks=many, policy=pol), "significant_change") == []


def test_settings_from_spec_defaults_match_default_checks() -> None:
    from fairmon.config import DriftSpec
    from fairmon.drift import default_checks, settings_from_spec

    s = settings_from_spec(DriftSpec())
    assert s.checks == default_checks()
    assert s.baseline == Baseline() and s.policy == AlertPolicy()


def test_policy_and_baseline_validate() -> None:
    with pytest.raises(ConfigError, match="persistence_m"):
        AlertPolicy(persistence_m=3, persistence_n=2)
    with pytest.raises(ConfigError, match="reference_start"):
        Baseline(mode="reference")


def test_finding_round_trip_and_fingerprint_stability() -> None:
    f = decide(_w(1, 0.5), [_w(0, 0.5)], checks=[CIOutsideRange(metric="dp_difference", high=0.1),
                                                  CIOutsideRange(metric="dp_difference", low=0.6, kind="low")])
    assert len(f) == 2
    for x in f:
        y = Finding.from_dict(x.to_dict())
        assert y.fingerprint == x.fingerprint and y.to_dict() == x.to_dict()
    assert len({x.fingerprint for x in f}) == len(f)


def test_window_summary_reads_store_metric_records() -> None:
    from fairmon.store.records import MetricRecord

    recs = [MetricRecord("dp_difference", 0.12, attribute="sex", ci_low=0.08, ci_high=0.16, n=5000),
            MetricRecord("selection_rate", 0.4, attribute="sex", group="female", ci_low=0.38, ci_high=0.42),
            MetricRecord("tpr", None, attribute="sex", group="male")]
    w = WindowSummary.build("mon", T0, outcome=recs)
    m = w.measurements()
    assert m[("dp_difference", "sex")].ci == (0.08, 0.16)
    assert m[("selection_rate", "sex=female")].value == 0.4
    assert ("tpr", "sex=male") not in m


def test_settings_from_spec_reference_baseline_and_suppress() -> None:
    from datetime import date
    from zoneinfo import ZoneInfo

    from fairmon.config import AlertsSpec, DriftSpec
    from fairmon.drift import settings_from_spec

    d = DriftSpec.model_validate({"baseline": {"kind": "reference", "window": date(2026, 1, 1)},
                                  "cold_start": {"min_history": 4, "rule": "suppress"},
                                  "persistence": {"m": 1, "n": 1}, "gesd_threshold": 0.05})
    s = settings_from_spec(d, AlertsSpec(min_severity="critical", send_resolved=False),
                           tz=ZoneInfo("Europe/Berlin"))
    assert s.baseline.mode == "reference"
    assert s.baseline.reference_start == datetime(2026, 1, 1, tzinfo=ZoneInfo("Europe/Berlin"))
    assert s.policy.suppress_before == 4 and s.policy.min_severity == "critical"
    assert not s.policy.notify_resolution
    assert any(getattr(c, "metric", "") == "gesd" and getattr(c, "high", None) == 0.05 for c in s.checks)
    # suppress: a violation in the first windows is recorded but not notified
    out = replay([_w(i, 0.5) for i in range(6)], checks=[CIOutsideRange(metric="dp_difference", high=0.1)],
                 policy=s.policy)
    assert [(f.status, f.notify) for f in out[0]] == [("open", False)]


def _group_rows(attr: str, metric: str, rates: dict[str, tuple[float, int]]) -> list[dict]:
    return [{"metric": metric, "attribute": attr, "group": g, "value": v, "ci_low": v - 0.02, "ci_high": v + 0.02,
             "n": n, "status": "ok"} for g, (v, n) in rates.items()]


def test_disparity_findings_name_the_disadvantaged_and_advantaged_groups() -> None:
    rows = [{"metric": "dp_ratio", "attribute": "sex", "group": None, "value": 0.6, "ci_low": 0.55, "ci_high": 0.65,
             "n": 1000, "status": "ok"},
            *_group_rows("sex", "selection_rate", {"Male": (0.5, 588), "Female": (0.3, 412)}),
            # another grouping's rates must not leak into the sex finding
            *_group_rows("race", "selection_rate", {"A": (0.1, 300), "B": (0.9, 700)})]
    cur = WindowSummary("mon", T0 + timedelta(days=1), metrics=rows)
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    [f] = decide(cur, [], checks=[CIOutsideRange(metric="dp_ratio", low=0.8)], policy=pol)
    assert f.message.startswith("sex: Female selection rate 0.300 (n=412) vs Male 0.500 (n=588): dp_ratio 0.600")
    assert "(95% CI 0.550–0.650), the whole interval below the allowed minimum 0.8" in f.message
    g = f.numbers["groups"]
    assert g["rate"] == "selection_rate"
    assert (g["disadvantaged"]["group"], g["disadvantaged"]["n"]) == ("Female", 412)
    assert (g["advantaged"]["group"], g["advantaged"]["value"]) == ("Male", 0.5)
    # without per-group rows the message still names the grouping (and says nothing invented)
    bare = WindowSummary("mon", T0 + timedelta(days=1), metrics=rows[:1])
    [b] = decide(bare, [], checks=[CIOutsideRange(metric="dp_ratio", low=0.8)], policy=pol)
    assert b.message.startswith("dp_ratio for sex is 0.600") and "groups" not in b.numbers


def test_equalized_odds_names_the_rate_with_the_larger_spread_and_significant_change_names_groups() -> None:
    def window(i: int, eodds: float) -> WindowSummary:
        rows = [{"metric": "eodds_difference", "attribute": "race", "group": None, "value": eodds,
                 "ci_low": eodds - 0.01, "ci_high": eodds + 0.01, "n": 900, "status": "ok"},
                *_group_rows("race", "tpr", {"A": (0.70, 300), "B": (0.75, 600)}),
                *_group_rows("race", "fpr", {"A": (0.40, 300), "B": (0.40 - eodds, 600)})]
        return WindowSummary("mon", T0 + timedelta(days=i), metrics=rows)

    hist = [window(i, 0.05 + 0.002 * (i % 3)) for i in range(6)]
    check = SignificantChange(metric="eodds_difference", min_effect=0.02)
    [f] = decide(window(6, 0.20), hist, checks=[check], policy=AlertPolicy(persistence_m=1, persistence_n=1))
    assert f.message.startswith("race: B false-positive rate 0.200 (n=600) vs A 0.400 (n=300): "
                                "eodds_difference rose to 0.200 from a baseline of"), f.message
    assert f.numbers["groups"]["rate"] == "fpr" and f.numbers["p_value"] < 0.01


def test_interval_level_follows_the_outcome_confidence() -> None:
    """The outcome's confidence level reaches the message, the finding and the standard error."""
    import pandas as pd

    from fairmon.fairness.outcome import outcome_metrics

    rng = np.random.default_rng(0)
    sex = pd.Series(rng.choice(["Female", "Male"], 4000), name="sex")
    pred = (rng.random(4000) < np.where(sex == "Female", 0.3, 0.5)).astype(float)
    res = outcome_metrics(pred, sensitive_features=sex, n_bootstrap=200, confidence=0.9, intersections=False)
    cur = WindowSummary.build("mon", T0, outcome=res)
    assert cur.ci_level == 0.9
    [f] = decide(cur, [], checks=[CIOutsideRange(metric="dp_ratio", low=0.8)],
                 policy=AlertPolicy(persistence_m=1, persistence_n=1))
    assert "(90% CI " in f.message and "95%" not in f.message
    assert f.numbers["ci_level"] == 0.9
    n_female = int((sex == "Female").sum())
    assert f.message.startswith("sex: Female selection rate ") and f"(n={n_female:,})" in f.message

    # reference z test: the standard error is the interval width over 2 z at the interval's level
    def ref_window(i: int, dp: float, level: float) -> WindowSummary:
        return WindowSummary("mon", T0 + timedelta(days=i), metrics=_rows(dp, 0.02), ci_level=level)

    base = Baseline(mode="reference", reference_start=T0, min_history=2, trailing_n=5)
    checks = [SignificantChange(metric="dp_difference", min_effect=0.0, alpha=0.05)]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    for level, z in ((0.95, 1.959964), (0.90, 1.644854)):
        [g] = decide(ref_window(1, 0.08, level), [ref_window(0, 0.03, level)], checks=checks, baseline=base,
                     policy=pol)
        assert g.numbers["scale"] == pytest.approx(np.hypot(0.04 / (2 * z), 0.04 / (2 * z)), rel=1e-5)


def test_gesd_change_within_its_noise_floor_is_no_drift() -> None:
    """A GESD rise that is significant against a quiet history but stays within GESD's own noise floor
    (the permutation null at this sample size) is no finding; the same rise above the floor is."""
    from datetime import UTC, datetime, timedelta

    from fairmon.drift import WindowSummary, decide

    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def w(i: int, g: float, floor: float | None) -> WindowSummary:
        gesd = {"sex": {"value": g, "p_value": 0.01, "noise_floor": floor}}
        return WindowSummary.build("m", t0 + timedelta(days=i), t0 + timedelta(days=i + 1), gesd=gesd)

    hist = [w(i, 0.010 + 0.001 * (i % 2), 0.05) for i in range(8)]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    noisy = decide(w(8, 0.04, 0.05), hist, policy=pol)
    assert not [f for f in noisy if f.kind == "gesd_rise"]
    real = decide(w(8, 0.04, 0.02), hist, policy=pol)
    assert [f.kind for f in real if f.kind == "gesd_rise"] == ["gesd_rise"]


def test_a_window_without_the_series_neither_resolves_nor_counts() -> None:
    """Session 23: a drift of a group's series, then two quiet days with the group below min_group_size (no
    row for the series): it used to resolve ("back within the rule", notified) and reopen the next day.
    Now it stays ongoing, saying it was not measured, and closes only after persistence_n such windows."""
    pol = AlertPolicy(persistence_m=2, persistence_n=3)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    quiet = WindowSummary("mon", T0, T0, metrics=[])

    def at(i: int, w: WindowSummary | None = None) -> WindowSummary:
        src = w if w is not None else _w(i, 0.2)
        return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=src.metrics)

    ws = [at(i, _w(i, 0.03)) for i in range(3)] + [at(i) for i in range(3, 5)]
    ws += [at(i, quiet) for i in range(5, 7)] + [at(i) for i in range(7, 9)]
    out = replay(ws, checks=checks, policy=pol)
    statuses = [[f.status for f in fs] for fs in out]
    assert statuses == [[], [], [], ["pending"], ["open"], ["ongoing"], ["ongoing"], ["ongoing"], ["ongoing"]]
    assert "not measured in this window" in out[5][0].message and out[5][0].value is None
    assert not any(f.notify for fs in out[5:] for f in fs)
    closing = replay(ws[:5] + [at(i, quiet) for i in range(5, 9)], checks=checks, policy=pol)
    assert [f.status for f in closing[-1]] == ["resolved"] and "has not been measured for 4 windows" in (
        closing[-1][0].message)
    assert closing[-1][0].notify  # the opening was notified: so is the close, saying why


def test_reference_test_with_two_zero_width_intervals_does_not_crash() -> None:
    """Session 23: a reference baseline whose window and reference both had zero-width intervals divided by
    zero (ZeroDivisionError in decide)."""
    base = Baseline(mode="reference", reference_start=T0, min_history=2, trailing_n=5)
    checks = [SignificantChange(metric="dp_difference")]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    flat = WindowSummary("mon", T0 + timedelta(days=1), T0 + timedelta(days=2), metrics=_rows(0.0, half=0.0))
    ref = WindowSummary("mon", T0, T0 + timedelta(days=1), metrics=_rows(0.0, half=0.0))
    assert decide(flat, [ref], checks=checks, baseline=base, policy=pol) == []


def test_a_skewed_interval_holding_the_baseline_is_no_significant_change() -> None:
    """Session 23: a 30-row group with no favourable decision has dp_ratio 0 with interval [0, 1]; the t-test
    on the interval's half-width called it a significant fall from 0.89 (12 notified openings in 100
    stationary windows). The window's own interval holds the baseline: no change."""
    def ratio(i: int, v: float, lo: float, hi: float) -> WindowSummary:
        row = {"metric": "dp_ratio", "attribute": "g", "group": None, "value": v, "ci_low": lo, "ci_high": hi,
               "n": 5030, "n_nan": 0, "status": "ok"}
        return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=[row])

    hist = [ratio(i, 0.89 + 0.01 * (i % 3), 0.6, 1.0) for i in range(7)]
    check = [SignificantChange(metric="dp_ratio", direction="decrease")]
    pol = AlertPolicy(persistence_m=1, persistence_n=1)
    assert decide(ratio(7, 0.0, 0.0, 1.0), hist, checks=check, policy=pol) == []
    assert _kinds(decide(ratio(7, 0.2, 0.05, 0.4), hist, checks=check, policy=pol), "significant_change") == ["open"]


def test_a_drift_of_a_label_metric_waits_for_its_labels() -> None:
    """A review of session 23's change: label metrics are unmeasured in every labels_pending window, so with
    labels later than persistence_n windows an open EOP drift closed, blaming a small group. Windows whose
    labels are pending never count towards closing it, and the finding says why it was not measured."""
    pol = AlertPolicy(persistence_m=2, persistence_n=3)
    checks = [CIOutsideRange(metric="eop_difference", high=0.1)]

    def eop(i: int, value: float | None) -> WindowSummary:
        row = {"metric": "eop_difference", "attribute": "sex", "group": None, "value": value,
               "ci_low": None if value is None else value - 0.02, "ci_high": None if value is None else value + 0.02,
               "n": 5000, "n_nan": 0, "status": "ok" if value is not None else "labels_pending"}
        return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=[row])

    ws = [eop(i, 0.03) for i in range(3)] + [eop(i, 0.2) for i in range(3, 5)] + [eop(i, None) for i in range(5, 12)]
    out = replay(ws, checks=checks, policy=pol)
    assert [f.status for f in out[-1]] == ["ongoing"] and "(labels pending)" in out[-1][0].message


def _two(i: int, sex: float, race: float) -> WindowSummary:
    rows = [{"metric": "dp_difference", "attribute": a, "group": None, "value": v, "ci_low": v - 0.02,
             "ci_high": v + 0.02, "n": 5000, "n_nan": 0, "status": "ok"} for a, v in (("sex", sex), ("race", race))]
    return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=rows)


def test_one_resolution_per_alert_a_rule_that_clears_first_waits_for_the_last() -> None:
    """Session 24: each rule of one alert message resolved on its own, so one drift event got two or more
    resolution messages (alert_quality: 1.25 per event). The first to clear is stored, not notified, until
    the last drift of the same message clears; that one names it."""
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=0)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    series = [(0.03, 0.03), (0.2, 0.2), (0.2, 0.2), (0.03, 0.2), (0.03, 0.2), (0.03, 0.03), (0.03, 0.03)]
    out = replay([_two(i, s, r) for i, (s, r) in enumerate(series)], checks=checks, policy=pol)
    by = [{f.group: f for f in fs} for fs in out]
    assert by[1]["sex"].status == by[1]["race"].status == "open" and by[1]["sex"].notify and by[1]["race"].notify
    held = by[3]["sex"]
    assert held.status == "resolved" and not held.notify
    assert held.numbers["held"] == "another drift of the same alert is still open"
    last = by[5]["race"]
    assert last.status == "resolved" and last.notify and last.since == by[1]["race"].since
    assert last.numbers["cleared_earlier"] == ["ci_outside_range on dp_difference for sex"]
    assert sum(f.notify for fs in out[2:] for f in fs) == 1  # one resolution for the one alert


def test_a_drift_that_opened_without_a_message_holds_back_no_resolution() -> None:
    """A drift below the notified severity was never in the alert message: it does not hold the message's
    resolution (the reviewer's case: held forever, its own resolution never notified)."""
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=0, min_severity="critical")
    checks = [CIOutsideRange(metric="dp_difference", high=0.1, critical_margin=0.2)]
    series = [(0.03, 0.03), (0.5, 0.2), (0.03, 0.2), (0.03, 0.03)]  # sex critical, race only a warning
    out = replay([_two(i, s, r) for i, (s, r) in enumerate(series)], checks=checks, policy=pol)
    by = [{f.group: f for f in fs} for fs in out]
    assert by[1]["sex"].notify and not by[1]["race"].notify
    assert by[2]["sex"].status == "resolved" and by[2]["sex"].notify and "cleared_earlier" not in by[2]["sex"].numbers
    assert by[3]["race"].status == "resolved" and not by[3]["race"].notify


def test_a_held_rule_that_drifts_again_is_still_named_when_its_alert_resolves() -> None:
    """Review (session 24): race cleared (held), drifted again inside the cooldown (not notified, a new
    since), then sex cleared: the resolution went out naming nothing and race's was lost. The held key
    remembers its alert, so the last resolution names it."""
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=3)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    series = [(0.03, 0.03), (0.2, 0.2), (0.2, 0.03), (0.2, 0.2), (0.2, 0.2), (0.03, 0.2)]
    out = replay([_two(i, s, r) for i, (s, r) in enumerate(series)], checks=checks, policy=pol)
    by = [{f.group: f for f in fs} for fs in out]
    assert by[2]["race"].status == "resolved" and not by[2]["race"].notify  # held for sex
    assert by[3]["race"].status == "open" and not by[3]["race"].notify  # again, inside the cooldown
    last = by[5]["sex"]
    assert last.status == "resolved" and last.notify
    assert last.numbers["cleared_earlier"] == ["ci_outside_range on dp_difference for race"]


def test_a_resolution_standing_for_its_alert_carries_the_alerts_highest_severity() -> None:
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=0)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1, critical_margin=0.2)]
    series = [(0.03, 0.03), (0.5, 0.2), (0.03, 0.2), (0.03, 0.03)]  # sex critical clears first, race a warning
    out = replay([_two(i, s, r) for i, (s, r) in enumerate(series)], checks=checks, policy=pol)
    by = [{f.group: f for f in fs} for fs in out]
    assert not by[2]["sex"].notify and by[3]["race"].notify
    assert by[3]["race"].severity == "warning" and by[3]["race"].numbers["alert_severity"] == "critical"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=12),
    st.integers(min_value=1, max_value=3),
    st.integers(min_value=0, max_value=3),
)
def test_every_alert_gets_exactly_one_resolution_once_everything_clears(
    violations: list[list[bool]], m: int, cooldown: int
) -> None:
    """Property (session 24): whatever three series do, a message (the notified openings of one window)
    never gets two resolutions, a resolution is never posted while a drift of its message is open, and
    once every series is back for good each message has got exactly one."""
    pol = AlertPolicy(persistence_m=m, persistence_n=3, cooldown_windows=cooldown)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    attrs = ("a", "b", "c")
    clean = [[False] * 3] * 8

    def window(i: int, row: list[bool]) -> WindowSummary:
        rows = [{"metric": "dp_difference", "attribute": a, "group": None, "value": 0.3 if v else 0.03,
                 "ci_low": (0.3 if v else 0.03) - 0.02, "ci_high": (0.3 if v else 0.03) + 0.02, "n": 5000,
                 "n_nan": 0, "status": "ok"} for a, v in zip(attrs, row, strict=True)]
        return WindowSummary("mon", T0 + timedelta(days=i), T0 + timedelta(days=i + 1), metrics=rows)

    out = replay([window(i, r) for i, r in enumerate([*violations, *clean])], checks=checks, policy=pol)
    notified = {(f.key, f.since) for fs in out for f in fs if f.notify and f.status != "resolved"}
    messages = {since for _, since in notified}
    resolutions: dict[object, int] = {}
    for fs in out:
        posted = {f.since for f in fs if f.notify and f.status == "resolved"}
        active = {f.since for f in fs if f.status in ("open", "ongoing") and (f.key, f.since) in notified}
        assert not posted & active, "a resolution posted while a drift of its message is still open"
        for since in posted:
            resolutions[since] = resolutions.get(since, 0) + 1
    assert all(n == 1 for n in resolutions.values()), resolutions
    assert set(resolutions) == messages  # every message resolved once everything cleared


def test_drifts_older_than_the_history_are_siblings_only_when_the_store_says_they_opened_together() -> None:
    """Two drifts that opened in different windows (different messages) before the history the replay sees
    are both dated to its first window by the replay; the store's starts (open_since) keep them apart, so
    the first to clear is posted, not held for the other's message."""
    pol = AlertPolicy(persistence_m=1, persistence_n=1, cooldown_windows=0)
    checks = [CIOutsideRange(metric="dp_difference", high=0.1)]
    history = [_two(i, 0.2, 0.2) for i in (3, 4)]
    keys = {f.group: f.key for f in replay(history, checks=checks, policy=pol)[0]}
    apart = {keys["sex"]: T0, keys["race"]: T0 + timedelta(days=2)}
    together = {keys["sex"]: T0, keys["race"]: T0}
    for open_since, held in ((apart, False), (together, True)):
        out = {f.group: f for f in decide(_two(5, 0.03, 0.2), history, checks=checks, policy=pol,
                                          open_since=open_since)}
        assert out["sex"].status == "resolved" and out["sex"].since == T0
        assert out["sex"].notify is not held and ("held" in out["sex"].numbers) is held
