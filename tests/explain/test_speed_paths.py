"""Speed paths of the batched explainers compute the same function as the generic paths."""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.explain.kernelshap_batched import kernelshap_batched


def test_kernelshap_first_layer_shortcut_equals_materialised_synthetic_rows(mixed_model):  # type: ignore[no-untyped-def]
    """The first-Linear-layer shortcut (fairmon MLP) gives the same attributions as evaluating the
    same network on materialised synthetic rows through a plain callable (generic path)."""
    import torch

    from fairmon.explain._prob import as_prob_fn

    model, Z = mixed_model
    net = model.estimator
    assert as_prob_fn(model, device=torch.device("cpu")).first_layer() is not None

    def f_t(X: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return torch.sigmoid(net(X.to(torch.float32)).double())

    assert as_prob_fn(f_t, device=torch.device("cpu"), fn_input="torch").first_layer() is None
    kw = {"background": Z[:15], "target": "positive", "n_samples": 120, "device": "cpu", "random_state": 3}
    fast = kernelshap_batched(model, Z[:10], **kw)
    slow = kernelshap_batched(f_t, Z[:10], fn_input="torch", **kw)
    np.testing.assert_allclose(fast, slow, atol=1e-6)
    assert np.abs(fast).max() > 1e-3


def test_lime_truncated_normal_stays_in_bin_and_matches_scipy():
    import torch
    from scipy import stats

    from fairmon.explain.lime_batched import _truncnorm

    lo = torch.tensor([-1.0, 0.5, -0.2, 4.0, -7.0]).repeat(40000, 1).double()
    hi = torch.tensor([1.0, 2.0, 0.3, np.inf, -5.0]).repeat(40000, 1).double()
    z = _truncnorm(lo, hi, torch.Generator().manual_seed(0)).numpy()
    assert ((z >= lo.numpy()) & (z <= hi.numpy())).all()
    for j in range(5):
        a, b = float(lo[0, j]), float(hi[0, j])
        ref = stats.truncnorm(a, b)
        assert abs(z[:, j].mean() - ref.mean()) < 4 * ref.std() / np.sqrt(len(z)) + 1e-9
        assert stats.kstest(z[:, j], ref.cdf).pvalue > 1e-3


def test_complement_pairs_order_lists_each_coalition_once_with_complements_last():
    from fairmon.explain.kernelshap_batched import _complement_pairs, coalition_design

    masks, _ = coalition_design(11, 300, np.random.default_rng(0))
    order, P = _complement_pairs(masks)
    assert sorted(order.tolist()) == list(range(len(masks)))
    assert P > len(masks) // 3  # shap's designs pair most coalitions
    np.testing.assert_array_equal(masks[order[-P:]], ~masks[order[:P]])
    # an unpaired design (no complements present) is evaluated as it is
    lone = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=bool)
    order, P = _complement_pairs(lone)
    assert P == 0 and order.tolist() == [0, 1, 2]


def test_kernelshap_first_layer_shortcut_handles_rows_with_zero_one_and_many_varying_columns(mixed_model):  # type: ignore[no-untyped-def]
    """Rows with 0, 1 and several varying columns share a chunk; both paths agree and 0/1-column rows
    get the exact answers (no attribution; the whole difference on the one column)."""
    import torch

    model, Z = mixed_model
    net = model.estimator

    def f_t(X: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return torch.sigmoid(net(X.to(torch.float32)).double())

    bg = np.repeat(Z[:1], 5, axis=0)
    X = np.repeat(Z[:1], 4, axis=0)
    X[1, 0] += 1.5  # one varying column
    X[2] = Z[1]  # several
    X[3, [0, 1]] += 1.0  # two (full enumeration)
    kw = {"background": bg, "target": "positive", "n_samples": 60, "device": "cpu", "random_state": 0}
    fast = kernelshap_batched(model, X, **kw)
    slow = kernelshap_batched(f_t, X, fn_input="torch", **kw)
    np.testing.assert_allclose(fast, slow, atol=1e-6)
    np.testing.assert_array_equal(fast[0], 0.0)
    p = f_t(torch.as_tensor(X)).numpy()
    assert fast[1, 0] == pytest.approx(p[1] - p[0], abs=1e-6) and np.count_nonzero(fast[1]) == 1
    np.testing.assert_allclose(fast.sum(axis=1), p - p[0], atol=1e-6)  # efficiency
