"""Group codes and cell counts (issue 21 req 3): identical to the string-label implementation they
replace, across column types, and equal to fairlearn's values."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairmon.fairness._outcome_counts import N_STATES, group_stats, row_states
from fairmon.fairness._outcome_groups import MISSING_GROUP, codes_of, group_key, groupings
from fairmon.fairness.outcome import outcome_metrics


def _reference_groupings(frame: pd.DataFrame, intersections: bool) -> list[tuple[str, list[str], np.ndarray]]:
    """The string-label implementation (fairmon before issue 21): one ``str`` label per row, groupby."""
    labels = {}
    for c in frame.columns:
        missing = frame[c].isna().to_numpy()
        lab = frame[c].astype(object).map(str).to_numpy(dtype=object)
        lab[missing] = MISSING_GROUP
        labels[c] = lab
    cols = list(frame.columns)
    combos = [tuple(c) for r in range(2, len(cols) + 1) for c in itertools.combinations(cols, r)] if intersections else []
    out = []
    for combo in [(c,) for c in cols] + combos:
        parts = pd.DataFrame({str(i): labels[name] for i, name in enumerate(combo)})
        grouped = parts.groupby(list(parts.columns), sort=True)
        keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
        names = [str(k[0]) if len(combo) == 1 else group_key(k) for k in keys]
        out.append((combo[0] if len(combo) == 1 else group_key(combo), names, grouped.ngroup().to_numpy()))
    return out


def _columns(n: int, rng: np.random.Generator) -> dict[str, pd.Series]:
    strs = rng.choice(["b", "a&x", "c\\d", "(missing)", "Z"], n)
    with_na = pd.Series(strs, dtype=object)
    with_na[rng.random(n) < 0.2] = None
    ints = pd.Series(rng.integers(-2, 3, n))
    floats = pd.Series(rng.choice([0.5, -0.0, 0.0, 2.0, np.nan], n))
    mixed = pd.Series(rng.choice(np.array([1, 1.0, True, "1", None, 10], dtype=object), n), dtype=object)
    return {
        "str": with_na,
        "cat": pd.Series(pd.Categorical(rng.choice(["y", "x", "w"], n), categories=["y", "x", "w", "unused"])),
        "int": ints,
        "nullable": ints.astype("Int64").mask(rng.random(n) < 0.1),
        "float": floats,
        "float_plain": pd.Series(rng.choice([1.5, 10.0, 2.0, np.nan], n)),
        "bool": pd.Series(rng.random(n) < 0.5),
        "mixed": mixed,
        "date": pd.Series(pd.to_datetime(rng.choice(["2026-01-02", "2025-12-31"], n))).mask(rng.random(n) < 0.1),
        "strdtype": pd.Series(rng.choice(["q", "p"], n), dtype="string"),
    }


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 300), picks=st.lists(st.integers(0, 9), min_size=1, max_size=3))
def test_groupings_equal_the_string_label_groupings(seed: int, n: int, picks: list[int]) -> None:
    rng = np.random.default_rng(seed)
    cols = _columns(n, rng)
    names = list(cols)
    frame = pd.DataFrame({f"{names[p]}_{i}": cols[names[p]] for i, p in enumerate(picks)})
    got = groupings(frame, True)
    want = _reference_groupings(frame, True)
    assert [(k, g) for k, g, _ in got] == [(k, g) for k, g, _ in want]
    for (_, _, a), (_, _, b) in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_codes_of_keeps_distinct_strings_of_equal_values_apart() -> None:
    # 1, 1.0 and True are equal Python values but three different groups by their text
    names, codes = codes_of(pd.Series([1, 1.0, True, None], dtype=object))
    assert names == ["(missing)", "1", "1.0", "True"] and codes.tolist() == [1, 2, 3, 0]
    names, codes = codes_of(pd.Series([0.0, -0.0, 1.0]))
    assert names == ["-0.0", "0.0", "1.0"] and codes.tolist() == [1, 0, 2]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 200), groups=st.integers(1, 5))
def test_cell_counts_equal_the_masked_sums(seed: int, n: int, groups: int) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, groups, n)
    pred = rng.choice([0.0, 1.0, np.nan], n, p=[0.45, 0.45, 0.1])
    label = rng.choice([0.0, 1.0, np.nan], n, p=[0.4, 0.4, 0.2])
    counts = np.bincount(codes * N_STATES + row_states(pred, label), minlength=groups * N_STATES).reshape(-1, N_STATES)
    names = [str(g) for g in range(groups)]
    stats = group_stats(names, counts, np.random.default_rng(1), 50)
    rng_ref = np.random.default_rng(1)
    pred_ok = ~np.isnan(pred)
    lab_ok = pred_ok & ~np.isnan(label)
    for g, s in enumerate(stats):  # the pre-issue-21 loop, draw for draw
        m = codes == g
        pm, lm = m & pred_ok, m & lab_ok
        p, y = pred[lm], label[lm]
        cells = [np.sum((p == 1) & (y == 1)), np.sum((p == 1) & (y == 0)), np.sum((p == 0) & (y == 1)),
                 np.sum((p == 0) & (y == 0))]
        assert (s.n_pred, s.n_pred_nan, s.fav, s.n_lab, s.n_lab_nan) == (
            int(pm.sum()), int((m & ~pred_ok).sum()), int(pred[pm].sum()), int(lm.sum()), int((m & ~lab_ok).sum()))
        assert s.cells.tolist() == cells
        if pm.sum() > 0:
            np.testing.assert_array_equal(s.boot_sr, rng_ref.binomial(int(pm.sum()), pred[pm].sum() / pm.sum(), 50) / pm.sum())
        if lm.sum() > 0:
            np.testing.assert_array_equal(s.boot_cells, rng_ref.multinomial(int(lm.sum()), np.array(cells) / lm.sum(), 50))


def test_point_values_equal_fairlearn() -> None:
    fm = pytest.importorskip("fairlearn.metrics")
    rng = np.random.default_rng(7)
    n = 5000
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "race": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])})
    y_true = rng.integers(0, 2, n)
    y_pred = (rng.random(n) < np.where(frame["race"] == "c", 0.3, 0.5)).astype(int)
    r = outcome_metrics(y_pred, sensitive_features=frame, y_true=y_true, min_group_size=1, n_bootstrap=0)
    for attr in ("sex", "race"):
        s = frame[attr]
        assert r.get("dp_difference", attr).value == pytest.approx(
            fm.demographic_parity_difference(y_true, y_pred, sensitive_features=s), abs=1e-12)
        assert r.get("dp_ratio", attr).value == pytest.approx(
            fm.demographic_parity_ratio(y_true, y_pred, sensitive_features=s), abs=1e-12)
        assert r.get("eodds_difference", attr).value == pytest.approx(
            fm.equalized_odds_difference(y_true, y_pred, sensitive_features=s), abs=1e-12)
    both = frame[["sex", "race"]]
    assert r.get("dp_difference", "sex&race").value == pytest.approx(
        fm.demographic_parity_difference(y_true, y_pred, sensitive_features=both), abs=1e-12)
