"""The deployed fold ensemble's nested out-of-fold check (fairmon.feu._nested, session 18).

The nested networks train on their own rows only (``train_mlps(rows=...)`` equals training on those
rows alone), no row is decided by an ensemble with a member that saw it, the inner ensemble decides as
the deployed one does (threshold matched to its members' rate on their training rows), and a check
that fails withholds the recommendation and registers nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from _feu_data import group_effect_frame

from fairmon.feu import FEUSettings, _choose, predict_proba, search, train_mlps
from fairmon.feu._crossval import FOLD_SEED_STEP, OutOfFold, Recipe, cv_gate, fold_ids
from fairmon.feu._ensemble import ensemble_threshold
from fairmon.feu._group_thresholds import group_thresholds, parity_quantiles, row_thresholds
from fairmon.feu._nested import NestedEnsemble, nested_check, nested_ensemble, nested_rows, nested_seed
from fairmon.schema import FeatureSchema


def _data(n: int = 150, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    df = group_effect_frame(n, seed, effect=1.0)
    Z = FeatureSchema.fit(df[["x1", "x2", "sex"]]).transform(df[["x1", "x2", "sex"]])
    s = df.sex.to_numpy()
    return Z, df.y.to_numpy(), s, (s == "M").astype(int)


def test_a_network_trained_on_its_own_rows_is_the_network_trained_on_those_rows_alone() -> None:
    Z, y, _, codes = _data()
    a, b = np.arange(0, 100), np.arange(50, 150)  # overlapping, equally many rows
    configs = [(1e-2, 4, 3), (3e-3, 6, 4)]
    stacked = train_mlps(Z, y, configs, rows=[a, b], fairness_weights=[0.5, 2.0], groups=codes, hidden=(8, 4),
                         device="cpu")
    for net, rows, cfg, w in zip(stacked, (a, b), configs, (0.5, 2.0)):
        (alone,) = train_mlps(Z[rows], y[rows], [cfg], fairness_weights=[w], groups=codes[rows], hidden=(8, 4),
                              device="cpu")
        assert np.allclose(predict_proba(net, Z), predict_proba(alone, Z), atol=1e-5)
    # without rows nothing changes: every network on all rows
    plain = train_mlps(Z, y, configs, hidden=(8, 4), device="cpu")
    full = train_mlps(Z, y, configs, rows=[np.arange(150)] * 2, hidden=(8, 4), device="cpu")
    assert all(np.array_equal(predict_proba(p, Z), predict_proba(f, Z)) for p, f in zip(plain, full))


def test_networks_with_unequal_row_counts_visit_the_smallest_count_each_epoch() -> None:
    Z, y, _, _ = _data()
    small, large = np.arange(0, 64), np.arange(0, 100)  # 2 vs 4 mini-batches of 32
    stacked = train_mlps(Z, y, [(1e-2, 3, 3), (1e-2, 3, 3)], rows=[small, large], hidden=(8, 4), device="cpu")
    (alone_small,) = train_mlps(Z[small], y[small], [(1e-2, 3, 3)], hidden=(8, 4), device="cpu")
    (alone_large,) = train_mlps(Z[large], y[large], [(1e-2, 3, 3)], hidden=(8, 4), device="cpu")
    assert np.allclose(predict_proba(stacked[0], Z), predict_proba(alone_small, Z), atol=1e-5)
    # the larger network took 2 steps an epoch on a random 64 of its 100 rows, not 4 on all of them
    assert not np.allclose(predict_proba(stacked[1], Z), predict_proba(alone_large, Z), atol=1e-3)


def test_each_nested_network_leaves_out_its_outer_and_its_inner_fold() -> None:
    fold = np.arange(20) % 4
    pairs, rows = nested_rows(fold)
    assert len(pairs) == 4 * 3 and {f for f, _ in pairs} == {0, 1, 2, 3}
    seeds = {nested_seed(7, f, j, 4) for f, j in pairs} | {7 + FOLD_SEED_STEP * (f + 1) for f in range(4)}
    assert len(seeds) == 12 + 4  # apart from each other and from the fold models' seeds
    for (f, j), r in zip(pairs, rows):
        assert f != j and set(fold[r]) == {0, 1, 2, 3} - {f, j} and len(r) == 10


@pytest.mark.parametrize("shift", [None, 0.7])
def test_every_row_is_decided_by_an_ensemble_of_networks_that_never_saw_it(shift: float | None) -> None:
    Z, y, s, codes = _data(120, 1)
    fold = fold_ids(y, s, 3, random_state=0)
    recipe = Recipe(1e-2, 4, 0.45, 11, 1.0, shift)
    nested = nested_ensemble(Z, s, codes, y, recipe, fold, batch_size=32, hidden=(8, 4), device="cpu")
    assert nested.members == 2 and not np.isnan(nested.proba).any() and not np.isnan(nested.thresholds).any()
    # recompute fold 1's decisions from networks trained on the rows outside folds 1 and j alone
    pairs, rows = nested_rows(fold)
    f, held, fit = 1, fold == 1, fold != 1
    inner = []
    for (outer, j), r in zip(pairs, rows):
        if outer == f:
            seed = nested_seed(recipe.seed, f, j, 3)
            (net,) = train_mlps(Z[r], y[r], [(recipe.lr, recipe.epochs, seed)], fairness_weights=[1.0],
                                groups=codes[r], hidden=(8, 4), device="cpu")
            inner.append(net)
    members_fit = np.vstack([predict_proba(n, Z[fit]) for n in inner])
    p = np.vstack([predict_proba(n, Z[held]) for n in inner]).mean(axis=0)
    assert np.allclose(nested.proba[held], p, atol=1e-5)
    if shift is None:  # the deployed ensemble's threshold rule, on the rows its members were trained on
        assert np.allclose(nested.thresholds[held], ensemble_threshold(members_fit.mean(axis=0), members_fit, 0.45),
                           atol=1e-5)
    else:  # group thresholds from the inner ensemble's own scores on its members' training rows
        q = parity_quantiles(members_fit.mean(axis=0), s[fit], 0.45)
        expected = row_thresholds(s[held], group_thresholds(0.45, q, shift), 0.45)
        assert len(q) == 2 and np.allclose(nested.thresholds[held], expected, atol=1e-5)


@pytest.mark.parametrize("shift", [None, 0.7])
def test_the_labels_of_a_fold_never_reach_its_own_decisions(shift: float | None) -> None:
    """Independent of how the rows are built: flipping fold 2's labels changes every other fold's nested
    decisions (their networks trained on fold 2) and none of fold 2's."""
    Z, y, s, codes = _data(160, 2)
    fold = fold_ids(y, s, 4, random_state=0)
    recipe = Recipe(1e-2, 5, 0.5, 3, 0.5, shift)
    kw = dict(batch_size=32, hidden=(8, 4), device="cpu")
    a = nested_ensemble(Z, s, codes, y, recipe, fold, **kw)  # type: ignore[arg-type]
    flipped = np.where(fold == 2, 1 - y, y)
    b = nested_ensemble(Z, s, codes, flipped, recipe, fold, **kw)  # type: ignore[arg-type]
    held = fold == 2
    assert np.array_equal(a.proba[held], b.proba[held]) and np.array_equal(a.thresholds[held], b.thresholds[held])
    assert not np.allclose(a.proba[~held], b.proba[~held])


def _oof(members: np.ndarray, prod: np.ndarray, y: np.ndarray, s: np.ndarray) -> OutOfFold:
    n = len(y)
    return OutOfFold(np.arange(n) % 5, members[None, :], np.full((1, n), 0.5), prod, prod.astype(float), True,
                     np.ones(n, dtype=int), y=y, s=s)


CHECK = dict(utility="balanced_accuracy", tolerance=0.02, band=0.15, n_boot=200, random_state=0, fresh_rows=400)


def test_the_nested_check_gates_the_band_and_records_the_dp_gain_and_utility() -> None:
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 400), np.repeat(["a", "b"], 200)
    prod = np.r_[rng.random(200) < 0.7, rng.random(200) < 0.3].astype(int)  # DP ~0.4, rate ~0.5
    fair = np.where(rng.random(400) < 0.5, 0.9, 0.1)  # DP ~0, rate ~0.5
    oof = _oof(fair, prod, y, s)
    members = cv_gate(oof, **CHECK).records[0]  # the members' own gate record
    r = nested_check(NestedEnsemble(fair, np.full(400, 0.5), 4, 0.0, 0.0), oof, 0, members, **CHECK)
    assert r["passed"] and r["gain_ok"] and r["utility_ok"] and "why" not in r
    # production's own decisions: no DP gain, recorded; the band holds, so it passes (the members' gate judged the gain)
    unfair = np.where(prod == 1, 0.9, 0.1)
    r = nested_check(NestedEnsemble(unfair, np.full(400, 0.5), 4, 0.0, 0.0), oof, 0, members, **CHECK)
    assert r["passed"] and not r["gain_ok"] and r["simultaneous_lb"] <= 0
    # decisions anti-correlated with a label production predicts well: the utility loss is recorded, not gated
    y2 = np.where(rng.random(400) < 0.9, prod, 1 - prod)
    anti = np.where(y2 == 1, 0.1, 0.9)
    wide = {**CHECK, "band": 0.3}  # its decisions differ from production's on most rows: a wide rate margin
    oof2 = _oof(fair, prod, y2, s)
    r = nested_check(NestedEnsemble(anti, np.full(400, 0.5), 4, 0.0, 0.0), oof2, 0, cv_gate(oof2, **wide).records[0],
                     **wide)
    assert r["passed"] and not r["utility_ok"] and r["utility_diff"] < -0.5 and r["members_utility_diff"] is not None
    # a rate moved off the band fails, and says so
    few = np.where(rng.random(400) < 0.2, 0.9, 0.1)  # rate ~0.2 against production's ~0.5
    r = nested_check(NestedEnsemble(few, np.full(400, 0.5), 4, 0.0, 0.0), oof, 0, members, **CHECK)
    assert not r["passed"] and r["why"].startswith("its positive rate is not inside the band by its noise")


LIGHT = dict(population=6, generations=2, epoch_bounds=(3, 10),
             gesd={"explainer": "gradient", "sample_size": 30, "n_perturbations": 3, "stratify": True,
                   "min_group_size": 5})
FEATURES = dict(features=["x1", "x2", "sex"], sensitive="sex", label="y")
SEED = 5  # test_feu_ensemble's data and seed: a recommendation on the cross-validated path


def test_a_fold_ensemble_that_fails_its_nested_check_is_not_recommended(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    df = group_effect_frame(500, SEED, effect=1.5)
    passed = search(df, **FEATURES, settings=FEUSettings.small(**LIGHT), random_state=SEED, device="cpu")
    check = passed.selection["deploy_check"]
    assert passed.selected is not None and check["passed"] and check["oof_rows"] == 350 and check["members"] == 4
    assert "nested out-of-fold" in passed.recommendation and check["members_rate_diff"] is not None
    # the max-T critical value is taken over the same refit candidates as the members' gate
    assert check["critical_value"] == pytest.approx(passed.selected.recommendation_gate["critical_value"], rel=0.2)

    # the same search, its fold ensemble replaced out of fold by one that approves nobody: DP 0, rate off the band
    def approve_nobody(Z, s, codes, y, recipe, fold, **kw):  # type: ignore[no-untyped-def]
        return NestedEnsemble(np.zeros(len(y)), np.full(len(y), 0.5), 4, 0.0, 0.0)

    monkeypatch.setattr(_choose, "nested_ensemble", approve_nobody)
    withheld = search(df, **FEATURES, settings=FEUSettings.small(**LIGHT), registry=str(tmp_path), random_state=SEED,
                      device="cpu")
    check = withheld.selection["deploy_check"]
    assert withheld.selected is None and withheld.snapshot is None and not check["passed"]
    assert check["oof"]["dp"] == 0.0 and check["oof"]["selection_rate"] == 0.0 and not check["band_ok"]
    assert withheld.recommendation.startswith("no candidate better than production: the chosen candidate")
    assert "positive rate is not inside the band" in withheld.recommendation
    # the search and the gate are the same as in the first run: only the deployed model's check differs
    assert [c.objectives for c in withheld.pareto] == [c.objectives for c in passed.pareto]
