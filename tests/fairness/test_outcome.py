"""Outcome fairness: hand-checked values, statuses, errors and Hypothesis invariants."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairmon.errors import MethodError
from fairmon.fairness.outcome import (
    ERR_BOOTSTRAP,
    ERR_NOT_BINARY,
    ERR_UNKNOWN_ATTRIBUTE,
    ERR_UNKNOWN_METRIC,
    MISSING_GROUP,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equalized_odds_difference,
    outcome_metrics,
    selection_rate,
)


def _hand_data() -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    # group a (10 rows): y_true 1 1 1 1 1 0 0 0 0 0, y_pred 1 1 1 1 0 1 0 0 0 0
    #   SR 0.5, TP 4 FN 1 FP 1 TN 4 -> TPR 0.8 FPR 0.2 FNR 0.2
    # group b (10 rows): y_true 1 1 1 1 0 0 0 0 0 0, y_pred 1 0 0 0 1 1 0 0 0 0
    #   SR 0.3, TP 1 FN 3 FP 2 TN 4 -> TPR 0.25 FPR 1/3 FNR 0.75
    y_true = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    y_pred = np.array([1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0])
    s = pd.DataFrame({"g": ["a"] * 10 + ["b"] * 10, "h": ["x", "y"] * 10})
    return y_true, y_pred, s


def test_hand_checked_values() -> None:
    y_true, y_pred, s = _hand_data()
    r = outcome_metrics(y_pred, y_true=y_true, sensitive_features=s, min_group_size=1, n_bootstrap=0)
    assert r.by_group("selection_rate", "g") == pytest.approx({"a": 0.5, "b": 0.3})
    assert r.by_group("tpr", "g") == pytest.approx({"a": 0.8, "b": 0.25})
    assert r.by_group("fpr", "g") == pytest.approx({"a": 0.2, "b": 1 / 3})
    assert r.by_group("fnr", "g") == pytest.approx({"a": 0.2, "b": 0.75})
    assert r.get("dp_difference", "g").value == pytest.approx(0.2)
    assert r.get("dp_ratio", "g").value == pytest.approx(0.6)
    assert r.get("eop_difference", "g").value == pytest.approx(0.55)
    assert r.get("eodds_difference", "g").value == pytest.approx(max(0.55, 1 / 3 - 0.2))
    # intersection g&h: a&x = rows 0,2,4,6,8 -> preds 1,1,0,0,0 -> 0.4
    assert r.by_group("selection_rate", "g&h")["a&x"] == pytest.approx(0.4)
    assert r.get("dp_difference", "g&h").n == 20
    # thin functions agree
    assert demographic_parity_difference(y_pred, sensitive_features=s["g"]) == pytest.approx(0.2)
    assert demographic_parity_ratio(y_pred, sensitive_features=s["g"]) == pytest.approx(0.6)
    assert equal_opportunity_difference(y_true, y_pred, sensitive_features=s["g"]) == pytest.approx(0.55)
    assert equalized_odds_difference(y_true, y_pred, sensitive_features=s["g"]) == pytest.approx(0.55)
    assert selection_rate(y_pred) == pytest.approx(0.4)
    # several columns -> thin functions use the intersection
    assert demographic_parity_difference(y_pred, sensitive_features=s) == pytest.approx(
        r.get("dp_difference", "g&h").value
    )


def test_ci_contains_point_and_is_deterministic() -> None:
    y_true, y_pred, s = _hand_data()
    y_pred = np.tile(y_pred, 20)
    y_true = np.tile(y_true, 20)
    s = pd.concat([s] * 20, ignore_index=True)
    a = outcome_metrics(y_pred, y_true=y_true, sensitive_features=s, n_bootstrap=500, random_state=3)
    b = outcome_metrics(y_pred, y_true=y_true, sensitive_features=s, n_bootstrap=500, random_state=3)
    assert a.to_frame().equals(b.to_frame())
    for row in a.rows:
        if row.status == "ok":
            assert row.ci_low <= row.value + 1e-12 <= row.ci_high + 2e-12, row
    c = outcome_metrics(y_pred, y_true=y_true, sensitive_features=s, n_bootstrap=500, random_state=4)
    assert not a.to_frame().equals(c.to_frame())


def test_insufficient_groups_are_reported_not_dropped() -> None:
    y_pred = np.r_[np.ones(50), np.zeros(50), [1, 0, 1]]
    s = pd.Series(["a"] * 50 + ["b"] * 50 + ["tiny"] * 3, name="grp")
    r = outcome_metrics(y_pred, sensitive_features=s, min_group_size=30, n_bootstrap=0)
    row = r.get("selection_rate", "grp", "tiny")
    assert row.status == "insufficient" and math.isnan(row.value) and row.n == 3
    assert r.get("dp_difference", "grp").value == pytest.approx(1.0)
    assert r.get("dp_difference", "grp").n == 100
    only = outcome_metrics(y_pred[:53], sensitive_features=s[:53].reset_index(drop=True),
                           min_group_size=51, n_bootstrap=0)
    assert only.get("dp_difference", "grp").status == "insufficient"


def test_missing_sensitive_value_is_its_own_group() -> None:
    s = pd.Series(["a", None, "a", "b"] * 10, name="grp")
    r = outcome_metrics(np.ones(40), sensitive_features=s, min_group_size=1, n_bootstrap=0)
    assert r.get("selection_rate", "grp", MISSING_GROUP).n == 10


def test_labels_pending_and_partial_labels() -> None:
    y_true, y_pred, s = _hand_data()
    r = outcome_metrics(y_pred, sensitive_features=s, min_group_size=1, n_bootstrap=0)
    assert r.labels_pending
    assert r.get("tpr", "g", "a").status == "labels_pending"
    assert r.get("eodds_difference", "g").status == "labels_pending"
    assert r.get("dp_difference", "g").status == "ok"
    partial = y_true.astype(float)
    partial[[0, 1]] = np.nan  # two group-a positives missing: TP 2 FN 1 -> TPR 2/3
    r2 = outcome_metrics(y_pred, y_true=partial, sensitive_features=s, min_group_size=1, n_bootstrap=0)
    row = r2.get("tpr", "g", "a")
    assert row.value == pytest.approx(2 / 3) and row.n == 8 and row.n_nan == 2
    assert not r2.labels_pending


def test_errors_name_the_problem() -> None:
    with pytest.raises(MethodError, match="unknown outcome metric 'auc'"):
        outcome_metrics([1, 0], sensitive_features=["a", "b"], metrics=["auc"])
    assert "auc" in ERR_UNKNOWN_METRIC.format(metric="auc", known=[])
    with pytest.raises(MethodError) as ei:
        outcome_metrics([1, 2], sensitive_features=["a", "b"])
    assert str(ei.value) == ERR_NOT_BINARY.format(what="y_pred", value=2.0)
    with pytest.raises(MethodError, match="length mismatch"):
        outcome_metrics([1, 0, 1], sensitive_features=["a", "b"])
    with pytest.raises(MethodError) as ei:
        outcome_metrics([1, 0], sensitive_features=["a", "b"], n_bootstrap=10)
    assert str(ei.value) == ERR_BOOTSTRAP.format(value=10)
    with pytest.raises(MethodError) as ei:
        outcome_metrics([1, 0], sensitive_features={"s": ["a", "b"]}, intersections=[("s", "zzz")])
    assert str(ei.value) == ERR_UNKNOWN_ATTRIBUTE.format(name="zzz", known=["s"])


def test_to_dict_round_trip_columns() -> None:
    y_true, y_pred, s = _hand_data()
    r = outcome_metrics(y_pred, y_true=y_true, sensitive_features=s, min_group_size=1, n_bootstrap=100)
    d = r.to_dict()
    assert d["n_bootstrap"] == 100 and len(d["rows"]) == len(r.rows)
    assert list(r.to_frame().columns) == ["metric", "attribute", "group", "value", "ci_low", "ci_high",
                                          "n", "n_nan", "status"]


# ------------------------------------------------------------------------- Hypothesis invariants

_data = st.integers(min_value=2, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n),
        st.randoms(use_true_random=False),
    )
)


@settings(max_examples=60, deadline=None)
@given(_data)
def test_dp_difference_bounds_and_order_and_renaming(data) -> None:  # type: ignore[no-untyped-def]
    preds, groups, rnd = data
    y = np.array(preds)
    g = np.array(groups, dtype=object)
    d = demographic_parity_difference(y, sensitive_features=g)
    if len(set(groups)) < 2:
        assert math.isnan(d)
        return
    assert 0.0 <= d <= 1.0
    ratio = demographic_parity_ratio(y, sensitive_features=g)
    assert 0.0 <= ratio <= 1.0
    perm = list(range(len(y)))
    rnd.shuffle(perm)
    assert demographic_parity_difference(y[perm], sensitive_features=g[perm]) == pytest.approx(d)
    renamed = np.array([{"a": "zz", "b": "aa", "c": "mm"}[x] for x in g], dtype=object)
    assert demographic_parity_difference(y, sensitive_features=renamed) == pytest.approx(d)
    # bootstrap CIs do not depend on row order either (they depend on the group counts only)
    r1 = outcome_metrics(y, sensitive_features={"g": g}, min_group_size=1, n_bootstrap=50, random_state=1)
    r2 = outcome_metrics(y[perm], sensitive_features={"g": g[perm]}, min_group_size=1, n_bootstrap=50,
                         random_state=1)
    assert r1.to_frame().equals(r2.to_frame())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=4, max_size=40), st.integers(2, 4))
def test_zero_disparity_when_predictions_ignore_the_group(pattern, k) -> None:  # type: ignore[no-untyped-def]
    # every group sees the identical decision pattern -> selection rates equal exactly
    y = np.array(pattern * k)
    g = np.repeat([f"g{i}" for i in range(k)], len(pattern))
    labels = np.array((pattern[::-1]) * k)
    assert demographic_parity_difference(y, sensitive_features=g) == 0.0
    assert demographic_parity_ratio(y, sensitive_features=g) == 1.0
    eo = equalized_odds_difference(labels, y, sensitive_features=g)
    assert eo == 0.0 or math.isnan(eo)


def test_pandas_nullable_missing_is_missing_not_an_error() -> None:
    """A nullable boolean / Int64 column (``pd.NA`` for missing) was refused as "not binary"; it is the same
    as NaN for missing."""
    rng = np.random.default_rng(3)
    s = pd.Series(rng.choice(["a", "b"], 400), name="grp")
    pred = rng.random(400) < 0.4
    label = rng.random(400) < 0.5
    gone = rng.random(400) < 0.1
    nullable = pd.array(np.where(gone, None, pred), dtype="boolean")
    floats = np.where(gone, np.nan, pred.astype(float))
    labels = pd.Series(np.where(rng.random(400) < 0.05, None, label.astype(int)), dtype="Int64")
    want = outcome_metrics(floats, sensitive_features=s, y_true=labels.astype("float64").to_numpy(),
                           n_bootstrap=0, min_group_size=10)
    got = outcome_metrics(nullable, sensitive_features=s, y_true=labels, n_bootstrap=0, min_group_size=10)
    assert [(r.metric, r.group, r.n, r.n_nan) for r in got.rows] == [(r.metric, r.group, r.n, r.n_nan) for r in want.rows]
    assert np.allclose([r.value for r in got.rows], [r.value for r in want.rows], equal_nan=True)
    assert got.get("dp_difference", "grp").n_nan == int(gone.sum())
