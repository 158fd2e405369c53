"""Issue 18: undefined bootstrap replicates are skipped and counted; disparity intervals that cover;
intersection groups keyed structurally."""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.fairness.outcome import (
    MetricRow,
    OutcomeResult,
    group_key,
    outcome_metrics,
    parse_group_key,
)


def _toy_eop() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group a: 200 rows, 100 positives all predicted favorable (TPR 1.0). Group b: 40 rows with only
    2 positives, one predicted favorable (TPR 0.5): about 13 % of the replicates draw no positive of b,
    in which b's TPR (and so the EOP of the replicate) is undefined."""
    y = np.r_[np.ones(100), np.zeros(100), [1.0, 1.0], np.zeros(38)]
    pred = np.r_[np.ones(100), np.zeros(100), [1.0, 0.0], np.zeros(38)]
    groups = np.array(["a"] * 200 + ["b"] * 40, dtype=object)
    return y, pred, groups


@pytest.mark.parametrize("metric", ["eop_difference", "eodds_difference"])
def test_undefined_replicates_are_skipped_not_computed_over_the_remaining_groups(metric: str) -> None:
    y, pred, groups = _toy_eop()
    r = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=2000, intersections=False,
                        metrics=(metric,), disparity_ci="percentile", random_state=0)
    row = r.get(metric, "g")
    assert row.value == pytest.approx(0.5)
    # P(no positive of b drawn) = (38/40)^40 = 0.129: those replicates are skipped and counted
    assert 0.129 * 2000 * 0.8 < row.n_skipped < 0.129 * 2000 * 1.2
    assert row.ci_high == pytest.approx(1.0)
    # the skip is what the documented statistic needs: the skipped count equals the replicates in
    # which group b drew no positive, the same for both interval methods (same seed, same draws)
    sim = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=2000, intersections=False,
                          metrics=(metric,), random_state=0).get(metric, "g")
    assert sim.n_skipped == row.n_skipped


def test_undefined_replicates_do_not_drag_the_interval_to_the_one_group_value() -> None:
    """Three groups; group c has 3 positives in 40 rows, none predicted favorable. The replicates
    without a positive of c (4.4 %) were computed as the EOP of a and b alone (about 0.05), which
    dragged the 2.5 % bound from about 0.77 down to about 0.05."""
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(300), np.zeros(300), np.ones(300), np.zeros(300), [1.0, 1.0, 1.0], np.zeros(37)]
    pred = np.r_[rng.random(300) < 0.80, np.zeros(300), rng.random(300) < 0.75, np.zeros(300),
                 [0.0, 0.0, 0.0], np.zeros(37)].astype(float)
    groups = np.array(["a"] * 600 + ["b"] * 600 + ["c"] * 40, dtype=object)
    r = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=2000, intersections=False,
                        metrics=("eop_difference",), disparity_ci="percentile", random_state=1)
    row = r.get("eop_difference", "g")
    # c's TPR is 0 in every defined replicate, so every defined EOP is max(TPR_a, TPR_b) >= 0.7
    assert row.value > 0.7 and row.n_skipped > 0.025 * 2000
    assert row.ci_low > 0.7, row


def test_selection_rate_disparities_skip_nothing_and_rows_round_trip() -> None:
    y, pred, groups = _toy_eop()
    r = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=200, intersections=False)
    assert r.get("dp_difference", "g").n_skipped == 0
    assert r.get("tpr", "g", "b").n_skipped == 0  # Wilson's per-group interval needs no replicate
    pct = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=200, intersections=False,
                          ci_method="percentile")
    assert pct.get("tpr", "g", "b").n_skipped > 0  # the percentile one skips them too
    assert r.disparity_ci == "simultaneous" and r.to_dict()["disparity_ci"] == "simultaneous"
    back = OutcomeResult.from_dict(r.to_dict())
    assert back.rows == r.rows or all(
        a.to_dict().keys() == b.to_dict().keys() for a, b in zip(back.rows, r.rows, strict=True)
    )
    assert [x.n_skipped for x in back.rows] == [x.n_skipped for x in r.rows]
    old = {k: v for k, v in r.rows[0].to_dict().items() if k != "n_skipped"}  # a row stored before the field
    assert MetricRow.from_dict(old).n_skipped == 0


def test_zero_disparity_interval_reaches_zero_and_contains_the_point() -> None:
    rng = np.random.default_rng(0)
    sizes = (80, 160, 260, 300, 1200)
    groups = np.concatenate([[f"g{i}"] * n for i, n in enumerate(sizes)]).astype(object)
    covered = 0
    for w in range(40):
        pred = (rng.random(len(groups)) < 0.4).astype(float)
        row = outcome_metrics(pred, sensitive_features={"g": groups}, n_bootstrap=500, intersections=False,
                              metrics=("dp_difference",), random_state=w).get("dp_difference", "g")
        assert row.ci_low <= row.value <= row.ci_high
        covered += row.ci_low == 0.0
    # the old percentile interval never reached 0 here (coverage 0.00); the simultaneous one does
    assert covered >= 34, covered


def test_intersection_values_with_the_separator_do_not_merge_groups() -> None:
    a = np.array(["x&y"] * 40 + ["x"] * 40, dtype=object)
    b = np.array(["z"] * 40 + ["y&z"] * 40, dtype=object)
    pred = np.r_[np.ones(40), np.zeros(40)]
    r = outcome_metrics(pred, sensitive_features={"a": a, "b": b}, n_bootstrap=0)
    rates = r.by_group("selection_rate", "a&b")
    assert rates == {"x\\&y&z": 1.0, "x&y\\&z": 0.0}  # two groups, not one "x&y&z" at 0.5
    assert r.get("dp_difference", "a&b").value == 1.0
    assert {parse_group_key(k) for k in rates} == {("x&y", "z"), ("x", "y&z")}
    assert r.by_group("selection_rate", "a") == {"x&y": 1.0, "x": 0.0}  # single attribute: the raw value


@pytest.mark.parametrize("values", [("a", "b"), ("a&", "b"), ("\\", "&"), ("", "x\\&y"), ("plain",)])
def test_group_key_round_trips(values: tuple[str, ...]) -> None:
    assert parse_group_key(group_key(values)) == values


def test_a_small_group_without_favourable_decisions_keeps_its_uncertainty() -> None:
    """Session 23 (a statistician's review): a 0/30 group's replicates never move, so the max-t critical
    value fell to ~0.2 — DP interval [0.025, 0.035] beside 150/5,000, the ratio's and the group's [0, 0]."""
    pred = np.r_[np.zeros(30), np.ones(150), np.zeros(4850)]
    groups = {"g": np.array(["A"] * 30 + ["B"] * 5000, dtype=object)}
    r = outcome_metrics(pred, sensitive_features=groups, intersections=False)
    dp, ratio, a = r.get("dp_difference", "g"), r.get("dp_ratio", "g"), r.get("selection_rate", "g", "A")
    assert dp.ci_low == 0.0 and dp.ci_high > 0.08, dp  # 0/30 is likely at a true rate of 3%
    assert ratio.value == 0.0 and ratio.ci_low == 0.0 and ratio.ci_high > 0.8, ratio
    assert a.ci_low == 0.0 and 0.11 < a.ci_high < 0.12, a  # Wilson's [0, 0.114]
    none = outcome_metrics(np.zeros(600), sensitive_features={"g": np.repeat(["A", "B"], 300)}, intersections=False)
    assert (none.get("dp_ratio", "g").ci_low, none.get("dp_ratio", "g").ci_high) == (0.0, 1.0)
    assert none.get("dp_difference", "g").ci_high > 0.0


@pytest.mark.parametrize(("n_small", "rate"), [(30, 0.03), (50, 0.03), (20, 0.10)])
def test_no_disparity_is_not_claimed_from_a_handful_of_favourable_decisions(n_small: int, rate: float) -> None:
    """Equal rates, one small group with an expected 1-2 favourable decisions: before the floor and the
    Newcombe bounds the DP interval excluded 0 in 41% (30 rows), 19% (50) and 11% (20 rows at 10%) of
    windows and the ratio's lay below 0.8 in up to 46%; the nominal share is 5%."""
    rng = np.random.default_rng(n_small)
    groups = {"g": np.array(["A"] * n_small + ["B"] * 3000, dtype=object)}
    excl = below = 0
    windows = 200
    for w in range(windows):
        pred = (rng.random(n_small + 3000) < rate).astype(float)
        r = outcome_metrics(pred, sensitive_features=groups, metrics=("dp_difference", "dp_ratio"),
                            intersections=False, min_group_size=n_small, n_bootstrap=300, random_state=w)
        excl += r.get("dp_difference", "g").ci_low > 0
        below += r.get("dp_ratio", "g").ci_high < 0.8
    assert excl / windows <= 0.08 and below / windows <= 0.08, (excl, below)


def test_equal_opportunity_with_three_positive_labels_in_a_group_covers() -> None:
    """A 30-row group with ~3 positive labels and the same TPR as the rest: the EOP interval excluded 0 in
    45% of windows before the Newcombe bounds."""
    rng = np.random.default_rng(3)
    groups = {"g": np.array(["A"] * 30 + ["B"] * 3000, dtype=object)}
    excl = defined = 0
    for w in range(150):
        y = (rng.random(3030) < np.r_[np.full(30, 0.1), np.full(3000, 0.3)]).astype(float)
        pred = np.where(y == 1, rng.random(3030) < 0.7, rng.random(3030) < 0.1).astype(float)
        row = outcome_metrics(pred, sensitive_features=groups, y_true=y, metrics=("eop_difference",),
                              intersections=False, n_bootstrap=300, random_state=w).get("eop_difference", "g")
        if row.status == "ok":
            defined += 1
            excl += row.ci_low > 0
    assert defined > 100 and excl / defined <= 0.08, (excl, defined)
