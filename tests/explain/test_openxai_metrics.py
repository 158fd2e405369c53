"""PGI/PGU, the perturbation scheme, RIS/RRS/ROS, fairness disparities and the evaluate() table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from explain_helpers import mixed_frame, torch_model

from fairmon.errors import MethodError
from fairmon.explain import evaluate, explain
from fairmon.explain.openxai import Layout, group_means, perturb, pgi, pgu, relative_stability
from fairmon.explain.openxai._fairness import ERR_ONE_GROUP
from fairmon.explain.openxai.stability import RRS_UNDEFINED_NOTE


def _f0(Z: np.ndarray) -> np.ndarray:
    """P(class 1) depends on feature 0 only."""
    return 1 / (1 + np.exp(-3 * Z[:, 0]))


def test_pgi_pgu_hand():
    Z = np.zeros((3, 4))
    E_right = np.array([[1.0, 0.1, 0.0, 0.0]] * 3)
    E_wrong = np.array([[0.0, 1.0, 0.2, 0.1]] * 3)
    assert (pgi(_f0, Z, E_wrong, k=1, device="cpu") == 0).all()  # only irrelevant features move
    assert (pgu(_f0, Z, E_right, k=1, device="cpu") == 0).all()
    g = pgi(_f0, Z, E_right, k=1, device="cpu", n_samples=2000)
    # E|sigmoid(3 e) - 1/2| with e ~ N(0, 0.1^2) is close to 3/4 * E|e| = 0.75 * 0.1 * sqrt(2/pi)
    np.testing.assert_allclose(g, 0.75 * 0.1 * math.sqrt(2 / math.pi), rtol=0.05)
    assert (pgu(_f0, Z, E_wrong, k=1, device="cpu") > 0.01).all()


def test_pgi_pgu_zero_explanation_rows_are_nan():
    Z = np.zeros((2, 3))
    E = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    for fn in (pgi, pgu):
        v = fn(_f0, Z, E, k=1, device="cpu")
        assert np.isnan(v[0]) and np.isfinite(v[1])


def test_pgi_auc_and_std_zero():
    Z = np.zeros((2, 4))
    E = np.array([[1.0, 0.5, 0.2, 0.1]] * 2)
    assert (pgi(_f0, Z, E, k=0.5, std=0.0, device="cpu") == 0).all()
    auc = pgi(_f0, Z, E, k=1.0, auc=True, device="cpu")
    per_k = [pgi(_f0, Z, E, k=kk, device="cpu") for kk in (1, 2, 3, 4)]  # same draws for every k
    np.testing.assert_allclose(auc, np.trapezoid(np.array(per_k), np.arange(4) / 3, axis=0), atol=1e-12)


def test_perturbation_keeps_one_hot_valid_and_flips_at_the_documented_rate():
    import torch

    from fairmon.schema import FeatureSchema

    df = mixed_frame(50)
    schema = FeatureSchema.fit(df)
    Z = torch.as_tensor(schema.transform(df)[:4])
    gen = torch.Generator().manual_seed(0)
    std = 0.5
    out = perturb(Z, 20000, std=std, layout=Layout.from_schema(schema), keep=None, generator=gen)
    g = out[:, :, 3:6]
    assert torch.all(g.sum(dim=2) == 1) and torch.all((g == 0) | (g == 1))
    changed = (g != Z[:, None, 3:6]).any(dim=2).double().mean().item()
    assert changed == pytest.approx(math.sqrt(2 / math.pi) * std, abs=0.01)
    cont = out[:, :, 0] - Z[:, None, 0]
    assert cont.std().item() == pytest.approx(std, rel=0.03)
    keep = torch.zeros_like(Z, dtype=torch.bool)
    keep[:, 0] = True
    kept = perturb(Z, 10, std=std, layout=Layout.from_schema(schema), keep=keep, generator=gen)
    assert torch.all(kept[:, :, 0] == Z[:, None, 0])


def test_ris_hand_identity_explainer_is_one_and_constant_explainer_is_zero(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    Zs = Z[:5]
    # e(x) = x  ->  relative explanation change == relative input change -> RIS = 1
    res = relative_stability(model, Zs, Zs, lambda X, y: X, metrics=("RIS",), n_draws=50, n_keep=10, device="cpu")
    np.testing.assert_allclose(res.values["RIS"], 1.0, rtol=1e-9)
    assert (res.n_kept == 10).all()
    const = np.ones_like(Zs)
    res = relative_stability(model, Zs, const, lambda X, y: np.ones_like(X), metrics=("RIS", "ROS"),
                             n_draws=50, n_keep=10, device="cpu")
    np.testing.assert_array_equal(res.values["RIS"], 0.0)
    ros = res.values["ROS"]  # NaN only where the logits cannot move (documented skip)
    assert (ros[~np.isnan(ros)] == 0.0).all() and (~np.isnan(ros)).sum() >= 3


def test_stability_zero_explanations_are_nan_and_counted(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    zero = np.zeros_like(Z[:4])
    zero_fn = lambda X, y: np.zeros_like(X)  # noqa: E731
    res = relative_stability(model, Z[:4], zero, zero_fn, metrics=("RIS",), n_draws=20, n_keep=5, device="cpu")
    assert np.isnan(res.values["RIS"]).all()
    table = evaluate(model, Z[:4], zero, metrics=["RIS"], explainer=zero_fn, device="cpu", stability_draws=20,
                     stability_keep=5)
    row = table.iloc[0]
    assert row["n_nan"] == 4 and np.isnan(row["value"])


def test_rrs_uses_hidden_layer_and_is_undefined_without_one():
    df = mixed_frame(80)
    deep = torch_model(df, hidden=(6,))
    shallow = torch_model(df, hidden=())
    Z = deep.schema.transform(df)[:6]
    for model in (deep, shallow):
        E = explain(model, Z, method="gradient", device="cpu")
        res = relative_stability(model, Z, E, lambda X, y, m=model: explain(m, X, method="gradient", device="cpu"),
                                 n_draws=100, n_keep=20, device="cpu")
        assert set(res.values) == {"RIS", "RRS", "ROS"}
        if model is shallow:  # issue 22 item 7: NaN with the reason, never a copy of ROS
            assert np.isnan(res.values["RRS"]).all() and np.isfinite(res.values["ROS"]).all()
            assert res.notes["RRS"] == RRS_UNDEFINED_NOTE
        else:
            assert "RRS" not in res.notes
            assert not np.allclose(res.values["RRS"], res.values["ROS"])


def test_group_means_and_disparity_hand():
    gm = group_means(np.array([1.0, 0.8, 0.6, 0.2, np.nan]), ["M", "M", "M", "F", "F"], name="sex")
    assert gm.labels == ("M", "F")  # majority first
    np.testing.assert_allclose(gm.means, [0.8, 0.2])
    assert gm.disparity == pytest.approx(0.6)
    assert gm.n_nan.tolist() == [0, 1]
    three = group_means(np.array([0.1, 0.5, 0.9]), ["a", "b", "c"])
    assert three.disparity == pytest.approx(0.8)
    with pytest.raises(MethodError, match="single group"):
        group_means(np.ones(3), ["a", "a", "a"], name="race")
    assert "a disparity needs at least two" in ERR_ONE_GROUP


def test_evaluate_table_with_groups_and_ground_truth(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    Zs = Z[:40]
    E = explain(model, Zs, method="gradient", device="cpu")
    groups = {"h": np.where(Zs[:, 6] == 1, "u", "v")}
    gt = np.linspace(1, 0.1, Z.shape[1])
    t = evaluate(model, Zs, E, groups=groups, ground_truth=gt, explainer="gradient", device="cpu",
                 stability_draws=100, stability_keep=10)
    assert list(t.columns) == ["metric", "group", "value", "n", "n_nan", "note"]
    base = ["PRA", "RC", "FA", "RA", "SA", "SRA", "PGI", "PGU", "RIS", "RRS", "ROS"]
    assert sorted(set(t["metric"])) == sorted(base + [f"{m}_fairness" for m in base])
    for m in base:
        rows = t[t["metric"] == m].set_index("group")
        assert set(rows.index) == {"all", "h=u", "h=v"}
        fair = t[(t["metric"] == f"{m}_fairness")].iloc[0]
        assert fair["value"] == pytest.approx(abs(rows.loc["h=u", "value"] - rows.loc["h=v", "value"]))
        assert rows.loc["all", "n"] == 40
    default = evaluate(model, Zs, E, explainer="gradient", device="cpu", stability_draws=50, stability_keep=5)
    assert list(default["metric"]) == ["PGI", "PGU", "RIS", "RRS", "ROS"]
    assert isinstance(default, pd.DataFrame)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"metrics": ["PGX"]}, "unknown OpenXAI metric"),
        ({"metrics": ["FA"]}, "need ground-truth importances"),
        ({"metrics": ["RIS"]}, "pass explainer="),
        ({"metrics": ["PGI"], "k": 0.0}, "k must be a fraction"),
        ({"metrics": ["PGI"], "groups": {"s": ["a"] * 10}}, "single group"),
        ({"metrics": ["PGI"], "groups": ["a", "b"]}, "has 2 labels but there are 10 rows"),
    ],
)
def test_evaluate_bad_inputs(mixed_model, kwargs, match):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    E = np.ones((10, Z.shape[1]))
    with pytest.raises(MethodError, match=match):
        evaluate(model, Z[:10], E, device="cpu", **kwargs)


def test_evaluate_shape_mismatch(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    with pytest.raises(MethodError, match="explanations have 9 rows"):
        evaluate(model, Z[:10], np.ones((9, Z.shape[1])), metrics=["PGI"], device="cpu")
    with pytest.raises(MethodError, match="NaN"):
        evaluate(model, Z[:2], np.full((2, Z.shape[1]), np.nan), metrics=["PGI"], device="cpu")


def test_sklearn_model_ros_uses_log_odds_and_rrs_is_reported_as_ros():
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model
    from fairmon.schema import FeatureSchema

    df = mixed_frame(120)
    schema = FeatureSchema.fit(df)
    Z = schema.transform(df)
    model = Model(LogisticRegression().fit(Z, (Z[:, 0] + Z[:, 3] > 0).astype(int)), schema, framework="sklearn")
    E = Z[:8] + 1.0
    t = evaluate(model, Z[:8], E, metrics=["PGI", "RIS", "RRS", "ROS"], explainer=lambda X, y: X + 1.0,
                 device="cpu", stability_draws=50, stability_keep=10)
    rows = t.set_index("metric")
    assert np.isnan(rows.loc["RRS", "value"]) and rows.loc["RRS", "n_nan"] == 8  # a sklearn model: undefined
    assert rows.loc["RRS", "note"] == RRS_UNDEFINED_NOTE and rows.loc["ROS", "note"] == ""
    assert np.isfinite(rows.loc[["PGI", "RIS", "ROS"], "value"]).all()


def test_a_gap_leaves_out_groups_below_min_group_size(mixed_model):  # type: ignore[no-untyped-def]
    """Session 24 (an ML lead auditing the demo's report): the race gap among 50 sampled rows was decided by a
    group of one row (race=other). Groups below ``min_group_size`` keep their own rows, leave the gap and are
    named in its note; with fewer than two left the gap is NaN and the note says why."""
    model, Z = mixed_model
    Zs = Z[:40]
    E = explain(model, Zs, method="gradient", device="cpu")
    labels = np.array(["a"] * 20 + ["b"] * 17 + ["c"] * 3)
    t = evaluate(model, Zs, E, metrics=["PGI"], groups={"g": labels}, min_group_size=10)
    rows = t[t["metric"] == "PGI"].set_index("group")
    assert set(rows.index) == {"all", "g=a", "g=b", "g=c"}  # the small group's own mean stays
    fair = t[t["metric"] == "PGI_fairness"].iloc[0]
    assert fair["value"] == pytest.approx(abs(rows.loc["g=a", "value"] - rows.loc["g=b", "value"]))
    c_rows = int(rows.loc["g=c", "n"] - rows.loc["g=c", "n_nan"])  # rows with a value
    assert f"groups with fewer than 10 rows left out: c ({c_rows})" in fair["note"]
    assert "|majority - minority|" in fair["note"]
    everyone = evaluate(model, Zs, E, metrics=["PGI"], groups={"g": labels})  # OpenXAI's definition: every group
    means = rows.loc[["g=a", "g=b", "g=c"], "value"]
    assert everyone[everyone["metric"] == "PGI_fairness"].iloc[0]["value"] == pytest.approx(means.max() - means.min())
    lone = evaluate(model, Zs, E, metrics=["PGI"], groups={"g": labels}, min_group_size=18)
    gap = lone[lone["metric"] == "PGI_fairness"].iloc[0]
    assert np.isnan(gap["value"])
    b_rows = int(rows.loc["g=b", "n"] - rows.loc["g=b", "n_nan"])
    assert f"undefined: fewer than two groups with at least 18 rows (b ({b_rows}), c ({c_rows}))" in gap["note"]
