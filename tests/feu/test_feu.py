"""FEU: small search end to end (Pareto set, selection, registry candidate, determinism) and parts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import ConfigError, DatasetError
from fairmon.feu import (
    FEUSettings,
    chebyshev_select,
    dp_difference,
    eod_difference,
    non_dominated,
    pareto_plot,
    predict_proba,
    search,
    train_mlp,
    train_mlps,
)
from fairmon.feu._data import ERR_COLUMNS

#: CI setting: the issue's population 8 x 3 generations with a very light GESD objective, in the paper's
#: mode (AUC utility, no constraints, no fair-training variable: the search mechanics these tests pin;
#: the default mode's recommendation rule is tested in test_feu_deployable.py)
SETTINGS = FEUSettings.small(
    utility="auc",
    positive_rate_band=None,
    utility_tolerance=None,
    fairness_weight_bounds=None,
    baselines=False,
    epoch_bounds=(3, 8),
    gesd={
        "explainer": "shap+lime",
        "sample_size": 24,
        "n_perturbations": 3,
        "stratify": True,
        "min_group_size": 5,
        "explainer_params": {"kernelshap": {"n_samples": 16, "background_size": 5}, "lime": {"n_samples": 50}},
    },
)


def _data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.4, 0.6])
    x1, x2, x3 = rng.normal(size=(3, n))
    logit = 1.2 * x1 - 0.8 * x2 + 0.6 * (sex == "M")
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "sex": sex, "y": y})


@pytest.fixture(scope="module")
def run(tmp_path_factory):  # type: ignore[no-untyped-def]
    reg = tmp_path_factory.mktemp("registry")
    res = search(_data(), features=["x1", "x2", "x3", "sex"], sensitive="sex", label="y", settings=SETTINGS,
                 registry=str(reg), name="credit-feu", random_state=3, device="cpu")
    return res, reg


def test_small_search_returns_non_dominated_pareto_and_selection(run) -> None:  # type: ignore[no-untyped-def]
    res, _ = run
    assert res.generations_run == 3 and res.stopped_by == "generations"
    assert 8 < len(res.evaluations) <= 24
    F = np.array([c.objectives for c in res.pareto])
    assert len(non_dominated(F)) == len(F)  # nobody in the set dominates another member
    allF = np.array([c.objectives for c in res.evaluations])
    for c in res.evaluations:  # and every evaluation outside the set is dominated by a member
        if c.id not in {p.id for p in res.pareto}:
            assert np.any(np.all(F <= c.objectives, axis=1) & np.any(F < c.objectives, axis=1))
    assert res.selected.chebyshev == min(p.chebyshev for p in res.pareto)  # type: ignore[type-var]
    assert allF.shape[1] == 3
    for c in res.pareto:
        assert set(c.test) >= {"auc", "f1", "dp", "eod", "gesd"}
        assert 1e-4 <= c.lr <= 1e-1 and 3 <= c.epochs <= 8 and 0.2 <= c.threshold <= 0.8
    assert res.selected.test["auc"] > 0.7  # the signal is strong; a trained candidate finds it
    json.dumps(res.to_dict())


def test_selected_model_is_saved_as_candidate_with_metrics_and_schema(run) -> None:  # type: ignore[no-untyped-def]
    from fairmon.registry import Registry

    res, reg = run
    info = res.snapshot
    assert info is not None and info.status == "candidate"
    assert info.metrics["test"]["auc"] == pytest.approx(res.selected.test["auc"])
    assert info.metrics["hyperparameters"]["epochs"] == res.selected.epochs
    assert info.schema_fingerprint == res.model.schema.fingerprint
    loaded = Registry(str(reg)).load("credit-feu", info.version, device="cpu")
    df = _data(50, seed=9)
    assert np.allclose(loaded.predict_proba(df), res.model.predict_proba(df), atol=1e-6)
    assert loaded.threshold == pytest.approx(res.selected.threshold)


def test_search_is_deterministic_for_a_seed(run) -> None:  # type: ignore[no-untyped-def]
    res, _ = run
    again = search(_data(), features=["x1", "x2", "x3", "sex"], sensitive="sex", label="y", settings=SETTINGS,
                   random_state=3, device="cpu")
    assert [c.objectives for c in again.evaluations] == [c.objectives for c in res.evaluations]
    assert again.selected.hyperparameters == res.selected.hyperparameters
    assert again.selected.test == res.selected.test
    assert again.snapshot is None


def test_pareto_plot_writes_png(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = pareto_plot(run[0], tmp_path / "front.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------- parts
def test_chebyshev_and_non_dominated() -> None:
    F = np.array([[0.20, 0.10, 0.010], [0.25, 0.02, 0.005], [0.40, 0.00, 0.000], [0.40, 0.10, 0.010]])
    assert non_dominated(F).tolist() == [0, 1, 2]
    idx, T = chebyshev_select(F[:3], (0.4, 0.3, 0.3), scale="range")
    assert idx == 1
    assert T[2] == pytest.approx(0.4)  # worst AUC of the set: weight 0.4 x normalised distance 1
    idx, T = chebyshev_select(F[:3], (0.4, 0.3, 0.3))  # default "unit": distances to the ideal point as they are
    assert idx == 1
    assert T.tolist() == pytest.approx([0.03, 0.02, 0.08])  # max(0.4*(f1-0.2), 0.3*f2, 0.3*f3)
    with pytest.raises(ConfigError):
        chebyshev_select(F, (0.4, 0.3, 0.3), scale="minmax")  # type: ignore[arg-type]


def test_unit_scale_does_not_inflate_a_noise_level_spread() -> None:
    # rows: an undertrained model A (AUC 0.72), a better model B (AUC 0.80, GESD 0.004 higher: a
    # noise-level difference) and a poor model C (AUC 0.55) that widens the AUC span. Min-max over the
    # set shrinks B's 0.08 AUC lead and stretches its 0.004 GESD to a full unit, so "range" picks A.
    F = np.array([[0.28, 0.0, 0.0005], [0.20, 0.0, 0.004], [0.45, 0.0, 0.0]])
    assert non_dominated(F).tolist() == [0, 1, 2]
    idx, T = chebyshev_select(F, (0.4, 0.3, 0.3), scale="range")
    assert idx == 0 and T.tolist() == pytest.approx([0.128, 0.3, 0.4])
    idx, T = chebyshev_select(F, (0.4, 0.3, 0.3))
    assert idx == 1 and T.tolist() == pytest.approx([0.032, 0.0012, 0.1])
    with pytest.raises(ConfigError):
        FEUSettings(selection_scale="minmax")  # type: ignore[arg-type]


def test_outcome_metrics() -> None:
    s = np.array(["a"] * 4 + ["b"] * 4)
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    yhat = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    assert dp_difference(yhat, s) == pytest.approx(0.75 - 0.25)
    assert eod_difference(y, yhat, s) == pytest.approx(0.5)  # TPR 1 vs .5 and FPR .5 vs 0


def test_batched_training_matches_single_training() -> None:
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(120, 4))
    y = (Z[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    configs = [(3e-3, 4, 11), (1e-3, 2, 12), (5e-4, 3, 13)]
    nets = train_mlps(Z, y, configs, device="cpu")
    for net, (lr, ep, seed) in zip(nets, configs):
        single = train_mlp(Z, y, lr=lr, epochs=ep, seed=seed, device="cpu")
        assert np.allclose(predict_proba(net, Z), predict_proba(single, Z), atol=1e-5)


def test_settings_validation_and_spec_mapping() -> None:
    from fairmon.config import RetrainingSpec

    with pytest.raises(ConfigError, match="lr_bounds"):
        FEUSettings(lr_bounds=(0.1, 0.01))
    with pytest.raises(ConfigError, match="split"):
        FEUSettings(split=(0.5, 0.5, 0.5))
    spec = RetrainingSpec.model_validate(
        {"population": 12, "generations": 4, "time_budget_s": 60, "bounds": {"epochs": [5, 50]},
         "selection_weights": {"auc": 0.5, "dp": 0.25, "gesd": 0.25}}
    )
    st = FEUSettings.from_spec(spec)
    assert (st.population, st.generations, st.time_budget_s, st.epoch_bounds) == (12, 4, 60, (5, 50))
    assert st.weights == (0.5, 0.25, 0.25)
    assert st.split == pytest.approx((0.5, 0.2, 0.3))  # no validation share in the spec -> 0.2 of train
    assert st.selection_scale == "unit"
    assert FEUSettings.from_spec({"selection_scale": "range"}).selection_scale == "range"


def test_spec_and_settings_search_the_same_default_bounds() -> None:
    """One source of truth: a spec without ``retraining.bounds`` searches FEUSettings' bounds (the ones
    benchmarks/feu_paper ran with)."""
    from fairmon.config import RetrainingSpec

    default = FEUSettings()
    from_spec = FEUSettings.from_spec(RetrainingSpec())
    assert (from_spec.lr_bounds, from_spec.epoch_bounds, from_spec.threshold_bounds) == (
        default.lr_bounds, default.epoch_bounds, default.threshold_bounds)
    assert (default.epoch_bounds, default.threshold_bounds) == ((5, 50), (0.2, 0.8))


def test_bad_columns_are_named() -> None:
    with pytest.raises(DatasetError, match=r"missing columns \['nope'\]"):
        search(_data(), features=["x1", "nope"], sensitive="sex", label="y", settings=SETTINGS)
    assert "missing columns" in ERR_COLUMNS


@pytest.mark.gpu
def test_cuda_training_matches_cpu() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("CUDA not available")
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(200, 5))
    y = (Z[:, 0] > 0).astype(int)
    configs = [(1e-3, 3, 1), (3e-3, 2, 2)]
    cpu = train_mlps(Z, y, configs, device="cpu")
    gpu = train_mlps(Z, y, configs, device="cuda")
    for a, b in zip(cpu, gpu):
        assert np.allclose(predict_proba(a, Z), predict_proba(b, Z), atol=1e-4)
