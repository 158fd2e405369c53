"""The cross-validated recommendation gate for small validation splits (issue 16, session 8).

Folds cover train ∪ validation exactly once; the out-of-fold path is taken below ``cv_below_rows`` and
not above; a candidate that only looks good on an unrepresentative validation split is recommended by
the validation gate and refused by the cross-validated one (the test split agrees); the honest "none"
still works.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _feu_data import group_effect_frame

from fairmon.errors import ConfigError, InsufficientDataError
from fairmon.feu import FEUSettings, predict_proba, search
from fairmon.feu._choose import _production, _recommend
from fairmon.feu._crossval import NO_BETTER_CV, OutOfFold, Recipe, cv_gate, fold_ids, out_of_fold, use_cv
from fairmon.feu._data import _prepare
from fairmon.feu._evaluate import _Evaluator

LIGHT = dict(population=6, generations=2, epoch_bounds=(3, 10),
             gesd={"explainer": "gradient", "sample_size": 30, "n_perturbations": 3, "stratify": True,
                   "min_group_size": 5})
FEATURES = dict(features=["x1", "x2", "sex"], sensitive="sex", label="y")


def test_folds_cover_every_row_once_stratified_by_label_and_group() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(703) < 0.7).astype(int)
    s = rng.choice(["F", "M"], 703, p=[0.3, 0.7])
    f = fold_ids(y, s, 5, random_state=1)
    assert f.min() == 0 and f.max() == 4 and len(f) == 703  # every row in exactly one fold
    for k in range(5):
        for g in ("F", "M"):
            for c in (0, 1):  # every label x group cell split evenly (within one row)
                n = ((y == c) & (s == g)).sum()
                assert abs(((f == k) & (y == c) & (s == g)).sum() - n / 5) < 1
    assert (fold_ids(y, s, 5, random_state=1) == f).all()
    with pytest.raises(InsufficientDataError, match="fewer than the 5 folds"):
        fold_ids(np.r_[np.ones(20), np.zeros(3)].astype(int), np.repeat("a", 23), 5, random_state=0)
    assert use_cv(200, 1000) and not use_cv(1000, 1000) and not use_cv(200, 0)


def test_out_of_fold_decisions_cover_every_pooled_row_exactly_once() -> None:
    df = group_effect_frame(300, 0, effect=1.5)
    Z = np.column_stack([df.x1, df.x2, (df.sex == "M").astype(float)])
    y, s = df.y.to_numpy(), df.sex.to_numpy()
    codes = (s == "M").astype(int)
    recipes = [Recipe(1e-2, 5, 0.5, 1), Recipe(1e-2, 5, 0.4, 2, fairness_weight=10.0),
               Recipe(1e-2, 5, 0.5, 3, parity_shift=1.0)]
    kw = dict(production_threshold=0.5, folds=4, random_state=0, batch_size=32, hidden=(8,), device="cpu")
    oof = out_of_fold(Z, y, s, codes, recipes, production=Recipe(1e-3, 5, 0.5, 0), production_proba=None, **kw)
    assert (oof.covered == 1).all() and oof.proba.shape == (3, 300) and np.isfinite(oof.proba).all()
    assert oof.production_refit and oof.folds == 4 and oof.cpu_s > 0
    assert set(np.unique(oof.thresholds[0])) == {0.5}
    # the parity shift: per fold, group thresholds from that fold's training scores (two groups x four folds)
    assert len(np.unique(oof.thresholds[2])) > 2
    for k in range(4):
        held = oof.fold == k
        assert len(np.unique(oof.thresholds[2][held & (s == "F")])) == 1
    # a given production model is scored as is
    given = np.linspace(0, 1, 300)
    oof2 = out_of_fold(Z, y, s, codes, recipes[:1], production=None, production_proba=given, **kw)
    assert not oof2.production_refit and (oof2.production == (given >= 0.5)).all()
    assert np.allclose(oof2.proba[0], oof.proba[0])  # same folds, seeds and data: the same refits


def test_cv_gate_refuses_a_candidate_below_the_utility_floor() -> None:
    y = np.tile([1, 0], 200)
    s = np.repeat(["a", "b"], 200)
    prod = np.r_[np.ones(200), np.zeros(200)]  # DP 1, balanced accuracy 0.5
    good = y * 0.9 + 0.05  # fair and accurate
    flat = np.full(400, 0.6)  # fair (approves everyone): balanced accuracy 0.5 = production's
    oof = OutOfFold(np.arange(400) % 5, np.vstack([good, flat]), np.full((2, 400), 0.5), prod.astype(int), prod,
                    True, np.ones(400, dtype=int), y=y, s=s)
    g = cv_gate(oof, utility="balanced_accuracy", tolerance=0.02, band=None, n_boot=100, random_state=0)
    assert g.eligible.tolist() == [True, True] and g.records[0]["utility_diff"] == pytest.approx(0.5)
    g = cv_gate(oof, utility="balanced_accuracy", tolerance=0.02, band=0.10, n_boot=100, random_state=0)
    assert g.eligible.tolist() == [True, False]  # approving everyone moves the rate by 0.5
    oof_bad = OutOfFold(oof.fold, np.vstack([1 - good]), np.full((1, 400), 0.5), prod.astype(int), prod, True,
                        oof.covered, y=y, s=s)
    g = cv_gate(oof_bad, utility="balanced_accuracy", tolerance=0.02, band=None, n_boot=100, random_state=0)
    r = g.records[0]
    assert not g.eligible[0] and r["gain_ok"] and not r["utility_ok"] and r["utility_diff_se"] is not None


def _planted(n: int, seed: int, rs: int) -> pd.DataFrame:
    """Group-effect data whose **validation rows** (the ones ``_prepare`` draws at ``rs``: its split reads
    only the row count, the labels and the seed) get a random sex: there sex says nothing about the
    label, everywhere else it says a lot — an unrepresentative validation split."""
    from sklearn.model_selection import train_test_split

    df = group_effect_frame(n, seed, effect=1.5)
    y = df.y.to_numpy()
    rest, _ = train_test_split(np.arange(n), test_size=0.3, random_state=rs, stratify=y)
    _, val = train_test_split(rest, test_size=0.2 / 0.7, random_state=rs, stratify=y[rest])
    df.loc[val, "sex"] = np.random.default_rng(seed + 1).choice(["F", "M"], len(val))
    return df


def test_a_candidate_good_only_on_an_unrepresentative_validation_split_is_not_recommended() -> None:
    """A parity-trained candidate (DP weight 30: it ignores sex) looks fair *and* accurate on a validation
    split where sex carries no signal, so the validation gate recommends it; on folds of train ∪
    validation — and on the test split — it loses far more balanced accuracy than the tolerance."""
    rs = 3
    df = _planted(2000, 0, rs)
    st = FEUSettings.small(**LIGHT, baselines=False)
    prep = _prepare(df, ["x1", "x2", "sex"], "sex", "y", None, st.split, rs)
    assert len(prep.y["validation"]) == 401  # < cv_below_rows (5000): the cross-validated gate applies
    ev = _Evaluator(prep, st, gesd_seed=rs + 1, device="cpu")
    anchor = _production(ev, None, rs)
    ev.anchor = {"selection_rate": anchor.validation["selection_rate"], "utility": anchor.validation[st.utility]}
    (net,) = ev.train([(1e-2, 20, 11)], [30.0])
    # its threshold gives it production's validation positive rate (a point the search could find)
    thr = float(np.quantile(predict_proba(net, prep.Z["validation"]), 1 - anchor.validation["selection_rate"]))
    r = ev.score({k: v.detach().clone() for k, v in net.state_dict().items()}, 1e-2, 20, thr, 11, 30.0)
    r.update(id=0, generation=0)
    assert r["error"] is None and all(c <= 0 for c in r["constraints"])  # feasible on validation
    F = np.asarray([r["objectives"]])
    ev_val = _Evaluator(prep, FEUSettings.small(**LIGHT, baselines=False, cv_below_rows=0), rs + 1, "cpu")
    ev_val.anchor = ev.anchor
    by_validation = _recommend(ev_val, anchor, [r], [0], F, rs)
    assert by_validation.position == 0, by_validation.message  # fooled by the validation split
    cv = _recommend(ev, anchor, [r], [0], F, rs)
    g = cv.gate[0]
    assert cv.position is None and cv.selection["selection"] == "cv5", cv.message
    assert g["gain_ok"] and not g["utility_ok"] and g["utility_diff"] < -0.02, g
    assert g["validation_gate"]["eligible"]
    test = ev.test_metrics(r["state"], thr)
    assert test["balanced_accuracy"] < anchor.test["balanced_accuracy"] - 0.02  # the test split agrees


def test_settings_fields_validate() -> None:
    st = FEUSettings()
    assert (st.cv_below_rows, st.cv_folds) == (5000, 5)
    # Adult's 1,200-row benchmark validation split is gated out of fold (session 14: its validation gate's
    # picks missed the utility floor on test); a 5,000-row split is not
    assert use_cv(1200, st.cv_below_rows) and not use_cv(5000, st.cv_below_rows)
    assert FEUSettings.from_spec({"cv_below_rows": 0, "cv_folds": 3}).cv_folds == 3
    for bad in ({"cv_below_rows": -1}, {"cv_folds": 1}, {"cv_folds": 2.5}, {"cv_below_rows": True}):
        with pytest.raises(ConfigError, match="cv_"):
            FEUSettings(**bad)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def both(tmp_path_factory):  # type: ignore[no-untyped-def]
    df = group_effect_frame(500, 1, effect=1.5)  # validation 100 rows
    out = {}
    for below in (1000, 50):
        reg = tmp_path_factory.mktemp(f"reg{below}")
        out[below] = search(df, **FEATURES, settings=FEUSettings.small(**LIGHT, cv_below_rows=below),
                            registry=str(reg), random_state=1, device="cpu")
    return out


@pytest.mark.slow
def test_the_cv_gate_is_taken_below_the_threshold_and_not_above(both) -> None:  # type: ignore[no-untyped-def]
    cv, val = both[1000], both[50]
    rows = cv.data["split_rows"]
    assert cv.selection["selection"] == "cv5" and cv.selection["oof_rows"] == rows["train"] + rows["validation"] == 350
    assert cv.selection["validation_rows"] == rows["validation"] and cv.selection["production_refit"] is True
    assert cv.selection["cv_cpu_s"] > 0 and cv.to_dict()["selection"] == cv.selection
    versus = val.selection.get("versus_mitigator")  # FEU's pick against the tuned ThresholdOptimizer, when one passed
    assert {k: v for k, v in val.selection.items() if k not in ("versus_mitigator", "timing")} == {
        "selection": "validation", "validation_rows": rows["validation"]}
    assert versus is None or versus["contender"] is None or versus["where"] == "on validation"
    cv_versus = cv.selection.get("versus_mitigator")  # out of fold: the mitigator refit on the same folds
    assert cv_versus is None or cv_versus["contender"] is None or (
        cv_versus["where"].startswith("out of fold") and cv_versus["rows"] == 350)
    # the same search (same seeds): the front is the same, only the gate differs
    assert [c.id for c in cv.pareto] == [c.id for c in val.pareto]
    for c in cv.pareto:
        if c.feasible:
            g = c.recommendation_gate
            assert g is not None and g["selection"] == "cv5" and g["oof_rows"] == 350
            # the recipe's out-of-fold band; the searched model's own validation band is recorded (required only
            # when the searched model is deployed, cv_deploy="searched": test_feu_ensemble.py)
            assert g["eligible"] == (g["gain_ok"] and g["band_ok"] and g["utility_ok"])
            assert g["validation_gate"]["selection"] == "validation"
            assert c.dp_improvement_lb == g["simultaneous_lb"]
    for c in val.pareto:
        if c.feasible:
            assert c.recommendation_gate is not None and c.recommendation_gate["selection"] == "validation"
    if cv.selected is not None:
        assert "out of fold (5 folds of train + validation, 350 rows)" in cv.recommendation
        assert cv.snapshot is not None and cv.snapshot.metrics["selection"]["selection"] == "cv5"
        assert cv.snapshot.metrics["recommendation_gate"] == cv.selected.recommendation_gate
        assert cv.selected.recommendation_gate["eligible"]  # type: ignore[index]
    assert any(r.selected is not None for r in both.values())


@pytest.mark.slow
def test_no_candidate_better_than_a_fair_production_model_out_of_fold(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = search(group_effect_frame(400, 5, effect=0.0), **FEATURES,
                 settings=FEUSettings.small(**LIGHT, baselines=False), registry=str(tmp_path), random_state=5,
                 device="cpu")
    assert res.selected is None and res.model is None and res.snapshot is None
    assert res.recommendation.startswith("no candidate better than production")
    assert not list(tmp_path.rglob("*.json"))
    feasible = [c for c in res.pareto if c.feasible]
    if feasible:
        assert res.recommendation == NO_BETTER_CV.format(n=len(feasible), k=5, rows=280)
        assert all(not c.recommendation_gate["eligible"] for c in feasible)  # type: ignore[index]
