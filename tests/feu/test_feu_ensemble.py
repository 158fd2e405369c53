"""The fold ensemble the cross-validated gate deploys (``cv_deploy="ensemble"``, session 9).

Its predictions are the mean of its members'; it survives a registry save/load round trip (with and
without group thresholds); and in a search the registered model's members are exactly the fold models
whose out-of-fold decisions the gate judged (recomputed from the loaded model, they give the gate's
recorded out-of-fold DP and positive rate).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _feu_data import group_effect_frame

from fairmon.errors import ConfigError
from fairmon.feu import FEUSettings, predict_proba, search, train_mlps
from fairmon.feu._crossval import fold_ids
from fairmon.feu._data import _prepare
from fairmon.feu._ensemble import ENSEMBLE_BUILDER, ensemble_cut, fold_ensemble, member_proba, member_rates
from fairmon.feu._group_thresholds import group_thresholds, parity_quantiles, row_thresholds
from fairmon.feu._metrics import outcome_metrics
from fairmon.registry import Registry
from fairmon.registry.model import Model
from fairmon.schema import FeatureSchema

LIGHT = dict(population=6, generations=2, epoch_bounds=(3, 10),
             gesd={"explainer": "gradient", "sample_size": 30, "n_perturbations": 3, "stratify": True,
                   "min_group_size": 5})
FEATURES = dict(features=["x1", "x2", "sex"], sensitive="sex", label="y")


def _members(k: int = 3) -> tuple[pd.DataFrame, FeatureSchema, np.ndarray, list[object]]:
    df = group_effect_frame(200, 0, effect=1.0)
    schema = FeatureSchema.fit(df[["x1", "x2", "sex"]])
    Z = schema.transform(df[["x1", "x2", "sex"]])
    nets = train_mlps(Z, df.y.to_numpy(), [(1e-2, 3 + i, i) for i in range(k)], hidden=(8, 4), device="cpu")
    return df, schema, Z, list(nets)


def test_the_ensemble_predicts_the_mean_of_its_members_probabilities() -> None:
    df, schema, Z, nets = _members()
    ens = fold_ensemble(nets, n_inputs=schema.n_encoded, hidden=(8, 4))
    mean = np.mean([predict_proba(n, Z) for n in nets], axis=0)  # type: ignore[arg-type]
    assert np.allclose(predict_proba(ens, Z), mean, atol=1e-6)
    assert np.allclose(member_proba(ens, Z), [predict_proba(n, Z) for n in nets], atol=1e-7)  # type: ignore[arg-type]
    m = Model(ens, schema, framework="torch", threshold=0.45, device="cpu")
    assert np.allclose(m.predict_proba(df)[:, 1], mean, atol=1e-6)
    assert (m.predict(df) == (m.predict_proba(df)[:, 1] >= 0.45)).all()
    # extreme logits stay finite (log-sum-exp form) and the ensemble is differentiable
    import torch

    x = torch.tensor(Z[:5] * 1e3, dtype=torch.float32, requires_grad=True)
    out = ens(x)
    assert torch.isfinite(out).all()
    out.sum().backward()
    assert x.grad is not None and m.hidden(torch.as_tensor(Z[:5], dtype=torch.float32)).shape == (5, 3 * 8)


@pytest.mark.parametrize("shift", [None, 0.0, 1.0])
def test_the_ensemble_threshold_and_each_members_own_rule(shift: float | None) -> None:
    """Averaging smooths the score, so ``p̄ >= tau`` approves another share than the members at ``tau``; the
    single-threshold rule approves theirs. A member's own rule (``member_rates``) uses its own group quantiles,
    so at ``s = 1`` each member approves about its rate at ``tau`` in every group."""
    rng = np.random.default_rng(3)
    s = np.repeat(["a", "b"], 300)
    base = rng.normal(np.where(s == "a", 0.8, -0.4), 1.0)
    members = 1.0 / (1.0 + np.exp(-(base + rng.normal(0.0, 1.5, (5, s.size)))))  # noisy members
    mean, tau = members.mean(axis=0), 0.6
    want = float((members >= tau).mean())
    assert abs(float((mean >= tau).mean()) - want) > 0.05  # the smoothing the threshold rule corrects
    thr, groups = ensemble_cut(mean, members, s, tau, shift)
    if shift is None:
        assert groups is None and abs(float((mean >= thr).mean()) - want) <= 1.0 / s.size
    else:  # the recipe's threshold, group quantiles of the ensemble's own scores
        assert thr == tau and groups is not None and len(groups) == 2
    own = member_rates(members, s, members, s, tau, shift)
    assert np.allclose(own, (members >= tau).mean(axis=1), atol=0.0 if shift in (None, 0.0) else 0.01)
    if shift is not None:  # with fold ids, member k's quantiles come from the rows outside fold k only
        fold = np.arange(s.size) % 5
        by_fold = member_rates(members, s, members, s, tau, shift, fold=fold)
        own_rows = fold != 2
        q = parity_quantiles(members[2][own_rows], s[own_rows], tau)
        cut = row_thresholds(s, group_thresholds(tau, q, shift), tau)
        assert by_fold[2] == float((members[2] >= cut).mean())
    if shift == 1.0:  # each member approves its own overall rate in every group
        for g in ("a", "b"):
            in_g = member_rates(members, s, members[:, s == g], s[s == g], tau, shift)
            assert np.allclose(in_g, (members >= tau).mean(axis=1), atol=1.0 / 300)


@pytest.mark.parametrize("group", [False, True])
def test_the_ensemble_survives_a_registry_round_trip(tmp_path, group: bool) -> None:  # type: ignore[no-untyped-def]
    df, schema, Z, nets = _members()
    ens = fold_ensemble(nets, n_inputs=schema.n_encoded, hidden=(8, 4))
    kw = dict(group_thresholds={"F": 0.4, "M": 0.6}, group_columns=["sex"]) if group else {}
    model = Model(ens, schema, framework="torch", threshold=0.5, device="cpu", **kw)  # type: ignore[arg-type]
    reg = Registry(str(tmp_path))
    info = reg.register(model, name="ens", status="candidate")
    assert info.module_config is not None and info.module_config["target"] == ENSEMBLE_BUILDER
    back = reg.load("ens", info.version, device="cpu")
    assert np.array_equal(back.predict_proba(df), model.predict_proba(df))
    assert (back.predict(df) == model.predict(df)).all() and back.group_thresholds == model.group_thresholds
    assert len(back.estimator.inner.members) == 3


def test_cv_deploy_validates() -> None:
    assert FEUSettings().cv_deploy == "ensemble"
    assert FEUSettings.from_spec({"cv_deploy": "searched"}).cv_deploy == "searched"
    with pytest.raises(ConfigError, match="cv_deploy"):
        FEUSettings(cv_deploy="refit")  # type: ignore[arg-type]
    # the ensemble's nested check leaves out two folds per network: 2 folds leave nothing to train on
    with pytest.raises(ConfigError, match="cv_folds 2 with cv_deploy 'ensemble'.*needs cv_folds >= 3"):
        FEUSettings(cv_folds=2)
    assert FEUSettings(cv_folds=2, cv_deploy="searched").cv_folds == 2


#: data and search seed with a recommendation on the cross-validated path (seed 1 had one until the band's
#: margin became the fresh-sample SE, session 13)
SEED = 5


@pytest.fixture(scope="module")
def runs(tmp_path_factory):  # type: ignore[no-untyped-def]
    df = group_effect_frame(500, SEED, effect=1.5)  # validation 100 rows: the cross-validated gate
    out = {}
    for deploy in ("ensemble", "searched"):
        reg = tmp_path_factory.mktemp(deploy)
        out[deploy] = (df, reg, search(df, **FEATURES, settings=FEUSettings.small(**LIGHT, cv_deploy=deploy),
                                       registry=str(reg), random_state=SEED, device="cpu"))
    return out


@pytest.mark.slow
def test_the_deployed_ensemble_is_the_gates_fold_models(runs) -> None:  # type: ignore[no-untyped-def]
    df, reg, res = runs["ensemble"]
    assert res.selection["selection"] == "cv5" and res.selection["deploy"] == "fold_ensemble"
    assert res.selected is not None, res.recommendation  # this data has a recommendation
    sel, gate = res.selected, res.selected.recommendation_gate
    assert gate is not None and gate["eligible"] and "fold ensemble of its 5 fold models" in res.recommendation
    dep = sel.deployment
    assert dep is not None and dep["model"] == "fold_ensemble" and dep["members"] == 5
    assert dep["validation_held_out"] is False
    # the ensemble's own figures, the searched network's beside them
    searched = next(c for c in res.pareto if c.id == sel.id)
    assert dep["searched"]["test"] == searched.test and sel.test != searched.test
    assert res.snapshot is not None and res.snapshot.metrics["deployment"]["model"] == "fold_ensemble"
    assert res.snapshot.metrics["test"] == sel.test
    # the registered model's members, on the rows each did not see, give the gate's out-of-fold figures
    st = res.settings
    prep = _prepare(df, FEATURES["features"], "sex", "y", None, st.split, SEED)
    Z = np.vstack([prep.Z["train"], prep.Z["validation"]])
    y, s = np.concatenate([prep.y["train"], prep.y["validation"]]), np.concatenate([prep.s["train"], prep.s["validation"]])
    fold = fold_ids(y, s, 5, random_state=SEED)
    model = Registry(str(reg)).load(res.snapshot.name, res.snapshot.version, device="cpu")
    P = member_proba(model.estimator, Z)
    oof = P[fold, np.arange(len(y))]
    tau = dep["recipe_threshold"]  # the members decide at the recipe's threshold, the ensemble at its own
    assert dep["threshold"] == sel.threshold
    m = outcome_metrics(y, oof, s, tau)
    assert m["dp"] == pytest.approx(gate["oof"]["dp"], abs=1e-9)
    assert m["selection_rate"] == pytest.approx(gate["oof"]["selection_rate"], abs=1e-9)
    # the ensemble's threshold approves on train + validation the share its members approve there
    pooled = pd.concat([prep.X["train"], prep.X["validation"]], ignore_index=True)
    ensemble_rate = float((model.predict_proba(pooled)[:, 1] >= sel.threshold).mean())
    assert abs(ensemble_rate - float((P >= tau).mean())) <= 1.0 / len(y) + 1e-12
    # and the registered ensemble is what the result reports on test
    assert outcome_metrics(prep.y["test"], model.predict_proba(prep.X["test"])[:, 1], prep.s["test"],
                           sel.threshold)["dp"] == pytest.approx(sel.test["dp"], abs=1e-9)
    # the searched network's validation band is recorded, not required
    for c in res.pareto:
        g = c.recommendation_gate
        if c.feasible and g is not None:
            assert g["eligible"] == (g["gain_ok"] and g["band_ok"] and g["utility_ok"])


@pytest.mark.slow
def test_searched_deploy_keeps_the_searched_network_and_both_bands(runs) -> None:  # type: ignore[no-untyped-def]
    _, _, res = runs["searched"]
    assert res.selection["deploy"] == "searched"
    for c in res.pareto:
        g = c.recommendation_gate
        if c.feasible and g is not None:
            assert g["eligible"] == (g["gain_ok"] and g["band_ok"] and g["utility_ok"]
                                     and g["validation_gate"]["band_ok"])
    if res.selected is not None:
        assert res.selected.deployment == {"model": "searched"}
        assert res.selected.test == next(c for c in res.pareto if c.id == res.selected.id).test
        assert type(res.model.estimator).__name__ == "MLP"  # type: ignore[union-attr]
