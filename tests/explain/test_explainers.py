"""explain(): every method, targets, determinism, gradients on LR, library parity on exact cases, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from explain_helpers import lr_model, mixed_frame

from fairmon.errors import MethodError, SchemaError
from fairmon.explain import METHODS, coalition_design, explain, kernelshap_batched, to_columns
from fairmon.explain._coalitions import design_rank
from fairmon.explain.openxai import fa, ra, sa, sra
from fairmon.registry.model import ERR_NOT_DIFFERENTIABLE

FAST = ["lime", "kernelshap", "gradient", "gradient_x_input", "smoothgrad", "integrated_gradients", "random"]


@pytest.mark.parametrize("method", FAST)
@pytest.mark.parametrize("target", ["predicted", "positive"])
def test_every_method_shape_finite_and_deterministic(mixed_model, method, target):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    kw = {"n_samples": 300} if method in ("lime", "kernelshap") else {}
    a = explain(model, Z[:6], method=method, target=target, background=Z[:40], device="cpu", **kw)
    b = explain(model, Z[:6], method=method, target=target, background=Z[:40], device="cpu", **kw)
    assert a.shape == (6, Z.shape[1]) and np.isfinite(a).all()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["lime", "kernelshap", "gradient", "integrated_gradients"])
def test_predicted_target_flips_sign_for_rows_predicted_zero(mixed_model, method):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    pred = model.predict_encoded(Z[:30])
    assert set(pred) == {0, 1}
    pos = explain(model, Z[:30], method=method, target="positive", background=Z[:40], device="cpu")
    prd = explain(model, Z[:30], method=method, target="predicted", background=Z[:40], device="cpu")
    sign = np.where(pred == 1, 1.0, -1.0)[:, None]
    np.testing.assert_allclose(prd, sign * pos, atol=1e-6)


def test_kernelshap_efficiency_and_exact_library_parity_when_enumerated(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model  # d = 8: 2^8 - 2 = 254 coalitions, all enumerated by both implementations
    bg = Z[:20]
    ours = explain(model, Z[:5], method="kernelshap", target="positive", background=bg, device="cpu")
    lib = explain(model, Z[:5], method="kernelshap-lib", target="positive", background=bg, device="cpu")
    np.testing.assert_allclose(ours, lib, atol=1e-6)
    p = model.predict_proba_encoded(Z[:5])[:, 1]
    np.testing.assert_allclose(ours.sum(axis=1), p - model.predict_proba_encoded(bg)[:, 1].mean(), atol=1e-6)


def test_coalition_design_follows_shap_sampling():
    rng = np.random.default_rng(0)
    masks, w = coalition_design(12, 500, rng)
    assert masks.shape == (500, 12) and w.sum() == pytest.approx(1.0)
    sizes = masks.sum(axis=1)
    assert {1, 11} <= set(sizes)  # size 1 and its complements are enumerated
    assert len({m.tobytes() for m in masks}) == len(masks)  # no repeated coalition
    assert (np.sort(w[:24]) == w[0]).all()  # enumerated coalitions share one weight


def test_non_varying_columns_get_zero_attribution(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    bg = Z[:20].copy()
    x = Z[:3].copy()
    x[:, 3] = bg[0, 3]
    bg[:, 3] = bg[0, 3]  # column 3 constant in background and row
    phi = kernelshap_batched(model, x, background=bg, target="positive", device="cpu")
    assert (phi[:, 3] == 0).all()


def test_gradients_of_lr_agree_with_its_weights():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6)) * np.array([1, 2, 1, 1, 3, 1])
    y = (X @ np.array([1.5, -1.0, 0.5, 0.0, 2.0, -0.3]) + rng.normal(size=400) > 0).astype(int)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    model, w, Z = lr_model(X, y, df)
    E = explain(model, Z, method="gradient", device="cpu")
    pred = model.predict_encoded(Z)
    assert set(pred) == {0, 1}
    for fn in (fa, ra, sa, sra):
        np.testing.assert_allclose(fn(E, w, pred, k=0.5), 1.0)
        np.testing.assert_allclose(fn(E, w, pred, k=1.0), 1.0)


def test_non_differentiable_model_gives_method_error():
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model
    from fairmon.schema import FeatureSchema

    df = mixed_frame(100)
    schema = FeatureSchema.fit(df)
    Z = schema.transform(df)
    model = Model(LogisticRegression().fit(Z, (Z[:, 0] > 0).astype(int)), schema, framework="sklearn")
    with pytest.raises(MethodError, match="needs gradients"):
        explain(model, Z[:3], method="integrated_gradients")
    assert "needs gradients" in ERR_NOT_DIFFERENTIABLE


def test_raw_input_sklearn_pipeline_works_with_lime_and_kernelshap():
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from fairmon.registry import Model
    from fairmon.schema import FeatureSchema

    df = mixed_frame(150)
    y = ((df["a"] > 0) & (df["g"] != "x")).astype(int)
    pipe = make_pipeline(
        ColumnTransformer([("cat", OneHotEncoder(), ["g", "h"])], remainder="passthrough"), LogisticRegression()
    ).fit(df, y)
    schema = FeatureSchema.fit(df)
    model = Model(pipe, schema, framework="sklearn", input="raw")
    Z = schema.transform(df)
    for method in ("lime", "kernelshap"):
        E = explain(model, Z[:4], method=method, background=Z[:20], device="cpu", n_samples=200)
        assert E.shape == (4, 8) and np.isfinite(E).all()
        assert np.abs(E[:, 0]).mean() > np.abs(E[:, 2]).mean()  # "a" matters, "c" does not


def test_plain_probability_function_numpy_and_torch():
    import torch

    from fairmon.explain import kernelshap_batched, lime_batched

    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 4))

    def f_np(Z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(2 * Z[:, 0] - Z[:, 3])))

    def f_t(Z: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(2 * Z[:, 0] - Z[:, 3])

    for fn in (kernelshap_batched, lime_batched):
        a = fn(f_np, X[:5], background=X[:30], target="positive", device="cpu")
        b = fn(f_t, X[:5], background=X[:30], target="positive", device="cpu", fn_input="torch")
        np.testing.assert_allclose(a, b, atol=1e-9)
        assert (np.abs(a[:, 0]) > np.abs(a[:, 1])).all()


def test_to_columns_sums_one_hot_blocks(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    E = explain(model, Z[:3], method="gradient", device="cpu")
    cols = to_columns(E, model.schema)
    assert cols.shape == (3, 5)
    np.testing.assert_allclose(cols[:, 3], E[:, 3:6].sum(axis=1))


def test_methods_list_is_the_documented_set():
    assert set(METHODS) == {
        "lime", "kernelshap", "lime-lib", "kernelshap-lib", "gradient", "gradient_x_input", "smoothgrad",
        "integrated_gradients", "random",
    }


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"method": "shapley"}, MethodError, "unknown explanation method"),
        ({"method": "lime", "target": "negative"}, MethodError, "target must be"),
        ({"method": "lime", "n_sample": 10}, MethodError, "does not take parameter"),
        ({"method": "lime", "n_samples": 1}, MethodError, "n_samples must be"),
        ({"method": "kernelshap", "n_samples": 0}, MethodError, "n_samples must be"),
    ],
)
def test_bad_arguments(mixed_model, kwargs, exc, match):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    with pytest.raises(exc, match=match):
        explain(model, Z[:2], device="cpu", **kwargs)


def test_bad_inputs(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    with pytest.raises(MethodError, match="has 7 columns, expected 8"):
        explain(model, Z[:2, :7], method="gradient")
    bad = Z[:2].copy()
    bad[0, 1] = np.nan
    with pytest.raises(MethodError, match="NaN or infinite"):
        explain(model, bad, method="kernelshap")
    with pytest.raises(MethodError, match="2-D"):
        explain(model, Z[0], method="gradient")
    with pytest.raises(MethodError, match="background has 3 columns"):
        explain(model, Z[:2], method="lime", background=Z[:5, :3])
    with pytest.raises(MethodError, match="no rows"):
        explain(model, Z[:0], method="gradient")
    assert issubclass(SchemaError, Exception)


def test_cuda_request_without_gpu_is_a_device_error(mixed_model):  # type: ignore[no-untyped-def]
    import torch

    from fairmon.errors import DeviceError

    if torch.cuda.is_available():
        pytest.skip("machine has CUDA")
    model, Z = mixed_model
    with pytest.raises(DeviceError):
        explain(model, Z[:2], method="kernelshap", device="cuda")


def test_lime_surrogate_alpha_zero_is_plain_weighted_least_squares():
    import torch

    from fairmon.explain._lime import weighted_ridge

    rng = np.random.default_rng(0)
    X = torch.as_tensor(rng.integers(0, 2, size=(2, 50, 3)).astype(float))
    beta = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    y = X @ beta + 0.3
    w = torch.as_tensor(rng.uniform(0.1, 1, size=(2, 50)))
    np.testing.assert_allclose(weighted_ridge(X, y, w, 0.0).numpy(), np.tile(beta.numpy(), (2, 1)), atol=1e-9)
    # against scikit-learn's Ridge(alpha=1) with sample weights
    from sklearn.linear_model import Ridge

    ref = Ridge(alpha=1.0).fit(X[0].numpy(), y[0].numpy(), sample_weight=w[0].numpy()).coef_
    np.testing.assert_allclose(weighted_ridge(X, y, w, 1.0)[0].numpy(), ref, atol=1e-10)


def test_kernelshap_results_do_not_depend_on_chunking(mixed_model):  # type: ignore[no-untyped-def]
    model, Z = mixed_model
    kw = {"background": Z[:10], "target": "positive", "n_samples": 100, "device": "cpu"}
    a = kernelshap_batched(model, Z[:12], **kw)
    b = kernelshap_batched(model, Z[:12], max_elements=1, **kw)  # one row per chunk
    np.testing.assert_allclose(a, b, atol=1e-12)


def _design_and_rank(masks: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, int]:
    """KernelSHAP's design with the last column eliminated, and its weighted system's numeric rank."""
    E = masks[:, :-1].astype(float) - masks[:, -1:].astype(float)
    return E, int(np.linalg.matrix_rank(E.T @ (weights[:, None] * E), hermitian=True))


@pytest.mark.parametrize("d, n_samples, settled, full_ranks", [
    (12, 6, -1, {False}), (26, 32, -1, {False}), (30, 96, 0, {True}), (15, 32, 0, {True, False})])
def test_kernelshap_rank_decides_the_fallback_and_matches_numpy_lstsq(d, n_samples, settled, full_ranks):  # type: ignore[no-untyped-def]
    """Fewer coalitions than players: a row's system is singular and takes shap's least-squares
    fallback. torch's default CPU driver misjudged the rank at random (different attributions per
    call); the SVD driver is deterministic and gives numpy's minimum-norm solution. At 26 players
    and 32 coalitions (FEU's light GESD on German) LU found no zero pivot and returned rounding noise
    (|phi| 1e31-1e32, host-dependent, on about half of the rows) until the rank decided the fallback.
    ``settled``: what the design says of the rank (-1 deficient by count; 0: the numeric rank
    decides: full at 30 x 96, full or deficient row by row at 15 x 32); ``full_ranks``: the numeric
    ranks the checked rows have, so each case takes the path it is here for."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=d)

    def f(Z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(Z @ w)))

    bg, Z = rng.normal(size=(10, d)), rng.normal(size=(300, d))
    kw = {"background": bg, "target": "positive", "n_samples": n_samples, "random_state": 1, "device": "cpu"}
    first = kernelshap_batched(f, Z, **kw)
    for _ in range(5):
        np.testing.assert_array_equal(kernelshap_batched(f, Z, **kw), first)
    assert np.abs(first).max() < 1.0  # the rounding noise was 1e31-1e32
    # rows by hand: shap's constrained WLS (last column eliminated) solved with np.linalg.lstsq
    seeds = np.random.default_rng(1).integers(0, 2**63 - 1, size=len(Z))
    full_rank: list[bool] = []
    for i in range(10):
        x = Z[i : i + 1]
        masks, weights = coalition_design(d, n_samples, np.random.default_rng(int(seeds[i])))
        assert design_rank(masks[None], weights[None], np.array([d])).tolist() == [settled]
        etmp, rank = _design_and_rank(masks, weights)
        full_rank.append(rank == d - 1)
        ey = np.array([f(np.where(m, x, bg)).mean() for m in masks]) - f(bg).mean()
        delta = f(x)[0] - f(bg).mean()
        y2 = ey - masks[:, -1] * delta
        sq = np.sqrt(weights)[:, None]
        sol = np.linalg.lstsq(sq * etmp, sq[:, 0] * y2, rcond=None)[0]
        np.testing.assert_allclose(first[i], np.r_[sol, delta - sol.sum()], atol=1e-9)
    assert set(full_rank) == full_ranks  # LU on full rank, least squares on deficient rows


def test_design_rank_never_contradicts_the_numeric_rank():  # type: ignore[no-untyped-def]
    """design_rank spares the eigendecomposition only where the design settles the rank: 'full'
    rows have rank M - 1 and 'deficient' rows less, for budgets from a few coalitions to shap's
    "auto"; a design with enough distinct directions but a dependent one is left to the numeric rank."""
    rng = np.random.default_rng(3)
    seen: set[int] = set()
    for _ in range(60):
        M = int(rng.integers(2, 70))
        budget = int(rng.choice([6, 32, 96, 128, 2 * M + 2048]))
        masks, weights = coalition_design(M, budget if M > 30 else min(budget, 2**M - 2), rng)
        label = int(design_rank(masks[None], weights[None], np.array([M]))[0])
        _, rank = _design_and_rank(masks, weights)
        assert (label == 1 and rank == M - 1) or (label == -1 and rank < M - 1) or label == 0, (M, budget)
        seen.add(label)
    assert seen == {-1, 0, 1}
    # {0}, {1}, {0, 1} over 4 players: three distinct directions for three columns, rank 2
    dependent = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]], dtype=bool)
    assert design_rank(dependent[None], np.ones((1, 3)), np.array([4])).tolist() == [0]
    # {0, 1} and its complement {2} over 3 players: one direction (1, 1), not two unit ones
    pair = np.array([[1, 1, 0], [0, 0, 1]], dtype=bool)
    assert design_rank(pair[None], np.ones((1, 2)), np.array([3])).tolist() == [-1]
    # padding (zero weight, columns beyond M) is ignored; a singleton and its complement settle M = 2
    padded = np.zeros((1, 4, 5), dtype=bool)
    padded[0, 0, 0], padded[0, 1, 1] = True, True
    assert design_rank(padded, np.array([[0.5, 0.5, 0.0, 0.0]]), np.array([2])).tolist() == [1]
    # rows of one chunk are counted apart: {0, 1}, {0} and {2}, {1, 2} over 3 players are complements
    # across the rows (each row full rank, left to the numeric rank), never within one
    a, b = np.array([[1, 1, 0], [1, 0, 0]], dtype=bool), np.array([[0, 0, 1], [0, 1, 1]], dtype=bool)
    rows = [(dependent, 4), (a, 3), (pair, 3), (b, 3), (padded[0, :2, :2], 2)]
    chunk = np.zeros((len(rows), 3, 4), dtype=bool)
    weights = np.zeros((len(rows), 3))
    for k, (m, _) in enumerate(rows):
        chunk[k, : m.shape[0], : m.shape[1]] = m
        weights[k, : m.shape[0]] = 1.0
    M = np.array([width for _, width in rows])
    alone = [int(design_rank(chunk[k : k + 1], weights[k : k + 1], M[k : k + 1])[0]) for k in range(len(rows))]
    assert design_rank(chunk, weights, M).tolist() == alone == [0, 0, -1, 0, 1]
