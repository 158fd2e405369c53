"""Speed paths of the batched explainers compute the same function as the generic paths."""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.explain import kernelshap_batched


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

    from fairmon.explain._lime_sampling import _truncnorm_constants, _truncnorm_draw

    lo = np.tile([-1.0, 0.5, -0.2, 4.0, -7.0], (40000, 1))
    hi = np.tile([1.0, 2.0, 0.3, np.inf, -5.0], (40000, 1))
    c = torch.as_tensor(_truncnorm_constants(lo, hi).reshape(-1, 5))
    u = torch.rand(len(c), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    z = _truncnorm_draw(c, u).numpy().reshape(lo.shape)
    assert ((z >= lo) & (z <= hi)).all()
    for j in range(5):
        a, b = float(lo[0, j]), float(hi[0, j])
        ref = stats.truncnorm(a, b)
        assert abs(z[:, j].mean() - ref.mean()) < 4 * ref.std() / np.sqrt(len(z)) + 1e-9
        assert stats.kstest(z[:, j], ref.cdf).pvalue > 1e-3


def test_complement_pairs_order_lists_each_coalition_once_with_complements_last():
    from fairmon.explain._coalitions import coalition_design
    from fairmon.explain._kernelshap import _complement_pairs

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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lime_binary_marks_exactly_the_samples_that_share_the_instance_value_or_bin(dtype):  # type: ignore[no-untyped-def]
    """Option-space comparison: exact for non-integer multi-valued categoricals, continuous bins
    with an empty quartile (looked-up values) and an instance value the background never shows."""
    import torch

    from fairmon.explain._lime import LimeStats
    from fairmon.explain._lime_sampling import _sample, _tensors

    rng = np.random.default_rng(0)
    n = 400
    cat_col = rng.choice([1e-3, 0.3, 7e4], size=n, p=[0.2, 0.5, 0.3])
    skew = np.where(rng.random(n) < 0.6, 0.0, rng.exponential(size=n))  # quartiles collapse: bins skipped
    bg = np.column_stack([cat_col, skew, rng.normal(size=n)])
    stats = LimeStats.fit(bg, np.array([True, False, False]))
    T = _tensors(stats, torch.device("cpu"))
    x = torch.tensor([[0.3, 0.0, 0.2], [0.5, 2.0, -1.0]], dtype=torch.float64)  # 0.5: never in background
    wd = getattr(torch, dtype)
    binary, drawn = _sample(x, 4000, T, torch.Generator().manual_seed(0), wd)
    b, v = binary.numpy(), drawn.numpy()
    np.testing.assert_array_equal(b[0, 1:, 0], v[0, 1:, 0] == np.array(0.3, dtype=dtype))
    assert abs(b[0, 1:, 0].mean() - (cat_col == 0.3).mean()) < 0.03  # the background frequency
    np.testing.assert_array_equal(b[1, 1:, 0], 0.0)
    assert set(np.unique(v[:, 1:, 0]).tolist()) <= set(np.array([1e-3, 0.3, 7e4], dtype=dtype).tolist())
    for r in range(2):  # continuous: 1 exactly where the drawn value falls in the instance's quartile bin
        for j in (1, 2):
            edges = np.unique(np.percentile(bg[:, j], [25, 50, 75]))
            same = np.searchsorted(edges, v[r, 1:, j]) == np.searchsorted(edges, x[r, j].item())
            assert (b[r, 1:, j] == same).mean() > 0.995  # values on a bin edge may round either way


def test_lime_option_thresholds_reproduce_the_frequencies_and_never_pass_the_last_option():
    from fairmon.explain._lime_sampling import _option_thresholds

    cum = np.array([[0.25, 0.75, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1e-3, 0.5, 0.999, 1.0]])
    t = _option_thresholds(cum)
    assert t.dtype == np.int32 and t.shape == (3, 3)
    # P(u > t) for u uniform on the 2^32 int32 values is (2^31 - 1 - t) / 2^32 = 1 - cum (to 2^-32)
    p_past = (2.0**31 - 1 - t.astype(np.float64)) / 2.0**32
    np.testing.assert_allclose(p_past, 1.0 - cum[:, :-1], atol=2.0**-32)
    assert (t[cum[:, :-1] == 1.0] == np.iinfo(np.int32).max).all()  # u > int32 max never happens


def test_lime_uniform_bits_cover_the_int32_range_uniformly():
    import torch

    from fairmon.explain._lime_sampling import _uniform_bits

    a = _uniform_bits((3, 5001, 7), torch.Generator().manual_seed(0))
    b = _uniform_bits((3, 5001, 7), torch.Generator().manual_seed(0))
    assert a.dtype == torch.int32 and a.shape == (3, 5001, 7) and torch.equal(a, b)  # reproducible
    u = (a.numpy().astype(np.float64) + 2.0**31) / 2.0**32
    counts = np.histogram(u, bins=16, range=(0.0, 1.0))[0]
    expected = u.size / 16
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected)


def test_kernelshap_random_subsets_have_exact_sizes_uniform_members_and_survive_key_ties():
    from fairmon.explain._coalitions import _random_subsets

    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 9, size=40000)
    masks = _random_subsets(sizes, 17, rng)
    np.testing.assert_array_equal(masks.sum(axis=1), sizes)
    share = masks[sizes == 4].mean(axis=0)  # each column equally likely: 4 / 17
    assert np.abs(share - 4 / 17).max() < 0.02

    class TiedKeys:  # every key equal: the threshold would take all columns without the argsort fallback
        def integers(self, *args, size, dtype):  # type: ignore[no-untyped-def]
            return np.full(size, 7, dtype=dtype)

    tied = _random_subsets(np.array([1, 3, 5]), 6, TiedKeys())  # type: ignore[arg-type]
    np.testing.assert_array_equal(tied.sum(axis=1), [1, 3, 5])


@pytest.mark.parametrize("M", [5, 64, 65, 130])
def test_kernelshap_mask_keys_are_equal_exactly_for_equal_masks(M):  # type: ignore[no-untyped-def]
    from fairmon.explain._coalitions import _mask_keys

    rng = np.random.default_rng(M)
    masks = rng.random((300, M)) < 0.5
    masks[150:] = masks[:150]
    masks[149, -1] = not masks[149, -1]  # differs from its copy only in the last column
    keys = _mask_keys(masks)
    same = keys[:, None] == keys[None, :]
    np.testing.assert_array_equal(same, (masks[:, None, :] == masks[None, :, :]).all(axis=2))
