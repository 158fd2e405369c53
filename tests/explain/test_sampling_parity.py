"""The batched estimators sample the same distributions as lime / shap (checked on their internals)."""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.explain import coalition_design


def test_lime_perturbation_distribution_matches_lime():
    import torch
    from lime.lime_tabular import LimeTabularExplainer

    from fairmon.explain._lime import LimeStats
    from fairmon.explain._lime_sampling import _sample, _tensors

    rng = np.random.default_rng(0)
    n = 500
    bg = np.column_stack([rng.normal(size=n), rng.exponential(size=n), rng.integers(0, 2, n), rng.integers(0, 2, n)])
    bg[:, 3] = (rng.random(n) < 0.2).astype(float)
    cat = np.array([False, False, True, True])
    row = np.array([0.3, 2.5, 1.0, 0.0])
    S = 20000
    lib = LimeTabularExplainer(bg, categorical_features=[2, 3], discretize_continuous=True, random_state=0)
    data, inverse = lib._LimeTabularExplainer__data_inverse(row, S)
    T = _tensors(LimeStats.fit(bg, cat), torch.device("cpu"))
    gen = torch.Generator().manual_seed(0)
    binary, inv = _sample(torch.as_tensor(row).unsqueeze(0), S, T, gen, torch.float64)
    binary, inv = binary[0].numpy(), inv[0].numpy()
    np.testing.assert_array_equal(binary[0], 1.0)
    np.testing.assert_array_equal(inv[0], row)
    # P(sample shares the row's bin / value) per feature
    np.testing.assert_allclose(binary[1:].mean(axis=0), data[1:].mean(axis=0), atol=0.015)
    # marginal distribution of the model-space samples: mean, std and quartiles per feature
    np.testing.assert_allclose(inv[1:].mean(axis=0), inverse[1:].mean(axis=0), atol=0.03)
    np.testing.assert_allclose(inv[1:].std(axis=0), inverse[1:].std(axis=0), rtol=0.03)
    for j in (0, 1):
        np.testing.assert_allclose(
            np.percentile(inv[1:, j], [10, 50, 90]), np.percentile(inverse[1:, j], [10, 50, 90]), atol=0.06
        )


@pytest.mark.parametrize("M, nsamples", [(12, 500), (9, 200), (40, 2 * 40 + 2048)])
def test_kernelshap_coalitions_match_shap(M, nsamples):  # type: ignore[no-untyped-def]
    """Same enumerated part and sample count; same mean kernel weight per coalition size."""
    import shap

    def f(Z: np.ndarray) -> np.ndarray:
        return Z.sum(axis=1)

    def by_size(m: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.bincount(m.sum(axis=1), weights=w, minlength=M + 1)

    ex = shap.KernelExplainer(f, np.zeros((1, M)))
    lib_sizes, our_sizes = [], []
    state = np.random.get_state()
    try:
        for seed in range(8):
            np.random.seed(seed)
            ex.explain(np.ones((1, M)), nsamples=nsamples, l1_reg=False)
            lib_m = ex.maskMatrix[: ex.nsamplesAdded].astype(bool)
            lib_w = ex.kernelWeights[: ex.nsamplesAdded]
            ours_m, ours_w = coalition_design(M, nsamples, np.random.default_rng(seed))
            assert ours_m.shape == lib_m.shape
            assert ours_w.sum() == pytest.approx(lib_w.sum(), abs=1e-12)
            assert len({m.tobytes() for m in ours_m}) == len(ours_m)
            n_fixed = int(np.isclose(lib_w, lib_w[0]).sum()) if seed == 0 else 0
            if n_fixed:  # fully enumerated sizes: identical coalitions with identical weights
                fixed = {m.tobytes(): w for m, w in zip(lib_m[:n_fixed], lib_w[:n_fixed])}
                ours = {m.tobytes(): w for m, w in zip(ours_m, ours_w)}
                assert all(k in ours and ours[k] == pytest.approx(v) for k, v in fixed.items())
            lib_sizes.append(by_size(lib_m, lib_w))
            our_sizes.append(by_size(ours_m, ours_w))
    finally:
        np.random.set_state(state)
    np.testing.assert_allclose(np.mean(our_sizes, axis=0), np.mean(lib_sizes, axis=0), atol=0.01)
