"""FEU's opt-in group-specific thresholds (issue 16, requirement 3): the parity shift ``s``.

The thresholds ``tau_g(s)`` themselves, the candidate model applying them from the raw protected column
(and keeping them through the registry), a small search on data with a strong group effect with the
setting on and off at the same seed.
(The spec field: ``tests/config/test_config_group_thresholds.py``.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _feu_data import group_effect_frame

from fairmon.errors import ConfigError, MethodError, SchemaError
from fairmon.feu import FEUSettings, dp_difference, search
from fairmon.feu._group_thresholds import MIN_GROUP_ROWS, group_thresholds, parity_quantiles, row_thresholds
from fairmon.registry import Registry
from fairmon.registry.model import Model, build_mlp
from fairmon.schema import FeatureSchema

GESD = {"explainer": "kernelshap", "sample_size": 16, "n_perturbations": 2, "stratify": True, "min_group_size": 5,
        "explainer_params": {"kernelshap": {"n_samples": 16, "background_size": 5}}}
LIGHT = dict(population=6, generations=2, epoch_bounds=(5, 15), lr_bounds=(3e-3, 3e-2), gesd=GESD)
#: the search comparison: the parity shift is the only fairness lever (no DP-penalty weight), lenient constraints
SEARCH = dict(LIGHT, threshold_bounds=(0.35, 0.65), fairness_weight_bounds=None, utility_tolerance=0.1,
              positive_rate_band=0.2, baselines=False)


_data = group_effect_frame


# ---------------------------------------------------------------------- tau_g(s)
def test_shift_zero_is_the_single_threshold_and_one_equalises_training_rates() -> None:
    rng = np.random.default_rng(0)
    s = rng.choice(["a", "b", "c"], 900, p=[0.5, 0.3, 0.2])
    p = np.clip(rng.beta(2, 3, 900) + 0.25 * (s == "a") - 0.1 * (s == "c"), 0.001, 0.999)
    tau = 0.45
    q = parity_quantiles(p, s, tau)
    assert set(q) == {"a", "b", "c"}
    assert all(t == tau for t in row_thresholds(s, group_thresholds(tau, q, 0.0), tau))
    overall = float((p >= tau).mean())
    thr = row_thresholds(s, group_thresholds(tau, q, 1.0), tau)
    before = [float((p[s == g] >= tau).mean()) for g in ("a", "b", "c")]
    assert max(before) - min(before) > 0.2  # the groups' rates differ at the single threshold
    for g in ("a", "b", "c"):
        assert abs(float((p[s == g] >= thr[s == g]).mean()) - overall) <= 1.0 / (s == g).sum()
    half = group_thresholds(tau, q, 0.5)
    assert all(abs(half[g] - (tau + q[g]) / 2) < 1e-12 for g in q)


def test_small_and_unseen_groups_keep_the_single_threshold() -> None:
    rng = np.random.default_rng(1)
    s = np.r_[np.repeat("a", 200), np.repeat("b", MIN_GROUP_ROWS - 1)]
    p = rng.uniform(size=len(s))
    q = parity_quantiles(p, s, 0.5)
    assert set(q) == {"a"}
    thr = row_thresholds(np.array(["a", "b", "new"]), group_thresholds(0.5, q, 1.0), 0.5)
    assert thr[0] == q["a"] and thr[1] == 0.5 and thr[2] == 0.5


# ---------------------------------------------------------------------- the candidate model
def _toy_model(gthr: dict[str, float] | None) -> tuple[Model, pd.DataFrame]:
    import torch

    df = pd.DataFrame({"x": np.linspace(-2, 2, 40), "sex": ["F", "M"] * 20})
    schema = FeatureSchema.fit(df)
    net = build_mlp(schema.n_encoded, ())
    with torch.no_grad():  # logit = 2 x: P(favourable) depends on x only
        lin = net.net[0]
        lin.weight.zero_()
        lin.bias.zero_()
        lin.weight[0, schema.names.index("x")] = 2.0 / float(schema.column("x").scale)
        lin.bias[0] = 2.0 * float(schema.column("x").mean) / -float(schema.column("x").scale)
    model = Model(net, schema, framework="torch", threshold=0.5, device="cpu",
                  group_thresholds=gthr, group_columns=["sex"] if gthr else ())
    return model, df


def test_candidate_predict_applies_the_group_threshold_read_from_the_raw_column(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plain, df = _toy_model(None)
    model, _ = _toy_model({"F": 0.2, "M": 0.8})
    p = plain.predict_proba(df)[:, 1]
    expected = np.where(df["sex"] == "F", p >= 0.2, p >= 0.8).astype(int)
    assert (model.predict(df) == expected).all()
    assert (model.predict(df) != plain.predict(df)).any()
    flipped = df.assign(sex=df["sex"].map({"F": "M", "M": "F"}))  # same features, other group: other decision
    assert (model.predict(flipped) != model.predict(df)).any()
    with pytest.raises(SchemaError, match="sex"):
        model.thresholds(df[["x"]])
    with pytest.raises(MethodError, match="raw rows"):
        model.predict_encoded(model.schema.transform(df))
    reg = Registry(str(tmp_path))
    info = reg.register(model, name="gt", status="candidate")
    assert info.group_thresholds == {"columns": ["sex"], "thresholds": {"F": 0.2, "M": 0.8}}
    assert (reg.load("gt", info.version).predict(df) == expected).all()
    assert reg.register(plain, name="gt", status="candidate").group_thresholds is None


# ---------------------------------------------------------------------- the search
@pytest.fixture(scope="module")
def runs(tmp_path_factory):  # type: ignore[no-untyped-def]
    df = _data(400, 7, effect=1.5)
    out = {}
    for flag in (False, True):
        reg = tmp_path_factory.mktemp(f"reg{flag}")
        out[flag] = search(df, features=["x1", "x2", "sex"], sensitive="sex", label="y",
                           settings=FEUSettings.small(**SEARCH, group_thresholds=flag),
                           registry=str(reg), random_state=3, device="cpu"), df
    return out


@pytest.mark.slow
def test_the_parity_shift_reaches_the_population_and_lowers_validation_dp(runs) -> None:  # type: ignore[no-untyped-def]
    off, on = runs[False][0], runs[True][0]
    assert all(c.parity_shift is None and c.group_thresholds is None for c in off.evaluations)
    shifts = [c.parity_shift for c in on.evaluations if c.error is None]
    assert all(s is not None and 0.0 <= s <= 1.0 for s in shifts) and len(set(shifts)) > 1
    assert all(set(c.group_thresholds or {}) == {"F", "M"} for c in on.evaluations if c.error is None)
    assert "parity_shift" in on.pareto[0].to_dict()["hyperparameters"]

    def best_dp(res) -> float:  # type: ignore[no-untyped-def]
        return min(c.validation["dp"] for c in res.evaluations if c.error is None)

    assert best_dp(on) < best_dp(off) - 0.1, (best_dp(on), best_dp(off))
    c = min((c for c in on.evaluations if c.error is None), key=lambda c: c.validation["dp"])
    assert c.parity_shift is not None and c.parity_shift > 0.3  # the low DP comes from the shift
    assert c.group_thresholds is not None and c.group_thresholds["F"] < c.group_thresholds["M"]


@pytest.mark.slow
def test_registered_candidate_records_and_applies_its_group_thresholds(runs) -> None:  # type: ignore[no-untyped-def]
    res, df = runs[True]
    if res.selected is None:
        pytest.skip(f"no recommendation at this seed: {res.recommendation}")
    sel, snap = res.selected, res.snapshot
    assert snap is not None and sel.group_thresholds is not None
    decision = snap.metrics["decision"]
    assert decision["group_specific_thresholds"] is True and decision["columns"] == ["sex"]
    assert decision["thresholds"] == pytest.approx(sel.group_thresholds)
    assert snap.group_thresholds == {"columns": ["sex"], "thresholds": pytest.approx(sel.group_thresholds)}
    model = Registry(snap.uri.rsplit("/", 2)[0]).load(snap.name, snap.version)
    p = model.predict_proba(df)[:, 1]
    thr = df["sex"].map(sel.group_thresholds).to_numpy()
    assert (model.predict(df) == (p >= thr)).all()
    assert dp_difference(model.predict(df), df["sex"].to_numpy()) == pytest.approx(
        dp_difference((p >= thr).astype(int), df["sex"].to_numpy()))


def test_group_thresholds_need_the_sensitive_column_as_a_feature_and_no_paper_mode() -> None:
    with pytest.raises(ConfigError, match="among the model features"):
        search(_data(200, 0, 1.0), features=["x1", "x2"], sensitive="sex", label="y",
               settings=FEUSettings.small(**LIGHT, group_thresholds=True), device="cpu")
    with pytest.raises(ConfigError, match="model-agnostic GESD explainer"):
        search(_data(200, 0, 1.0), features=["x1", "x2", "sex"], sensitive="sex", label="y", device="cpu",
               settings=FEUSettings.small(
                   group_thresholds=True, gesd={"explainer": "gradient", "sample_size": 16}))
    with pytest.raises(ConfigError, match="group_thresholds"):
        FEUSettings.paper(group_thresholds=True)
    with pytest.raises(ConfigError, match="group_thresholds"):
        FEUSettings(group_thresholds="yes")  # type: ignore[arg-type]
