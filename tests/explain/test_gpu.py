"""CUDA results agree with CPU results (skipped without CUDA)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


@pytest.mark.parametrize("method", ["kernelshap", "gradient", "integrated_gradients"])
def test_deterministic_methods_match_cpu(mixed_model, method):  # type: ignore[no-untyped-def]
    from fairmon.explain import explain

    model, Z = mixed_model
    # full enumeration (no randomness); the positive class, since a row whose probability sits within
    # float32 rounding of the threshold can be predicted differently on the two devices, and
    # "predicted" then flips the sign of that whole row (seen on an H200: one such row of 50)
    kw = {"n_samples": 254} if method == "kernelshap" else {}
    cpu = explain(model, Z[:50], method=method, target="positive", background=Z[:20], device="cpu", **kw)
    gpu = explain(model, Z[:50], method=method, target="positive", background=Z[:20], device="cuda", **kw)
    np.testing.assert_allclose(gpu, cpu, atol=1e-5)


def test_kernelshap_rank_deficient_designs_match_cpu(mixed_model):  # type: ignore[no-untyped-def]
    """Fewer coalitions than varying columns: every row's system is singular and takes the
    minimum-norm least-squares fallback, which must be the same SVD solution on both devices (CUDA's
    lstsq 'gels' returned NaN there)."""
    from fairmon.explain import explain

    model, Z = mixed_model
    kw = {"method": "kernelshap", "target": "positive", "background": Z[:10], "n_samples": 6, "random_state": 3}
    cpu = explain(model, Z[:40], device="cpu", **kw)
    gpu = explain(model, Z[:40], device="cuda", **kw)
    assert np.isfinite(gpu).all()
    np.testing.assert_allclose(gpu, cpu, atol=1e-5)


@pytest.mark.parametrize("d, n_samples", [(26, 32), (40, 32), (15, 32), (40, 128)])
def test_kernelshap_rank_decided_fallback_matches_cpu(d, n_samples):  # type: ignore[no-untyped-def]
    """More varying columns than 32 paired coalitions span, where LU finds no exactly-zero pivot: the
    rank decides the fallback on both devices (the design settles it by count at 26 and 40 columns;
    at 15 the numeric rank, deficient on some rows); at 128 coalitions over 40 columns the numeric
    rank decides (full; CUDA's per-row eigvalsh above 32 columns)."""
    from fairmon.explain._kernelshap import kernelshap_batched

    rng = np.random.default_rng(0)
    w = rng.normal(size=d)

    def f(Z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(Z @ w)))

    bg, Z = rng.normal(size=(10, d)), rng.normal(size=(100, d))
    kw = {"background": bg, "target": "positive", "n_samples": n_samples, "random_state": 1}
    cpu = kernelshap_batched(f, Z, device="cpu", **kw)
    gpu = kernelshap_batched(f, Z, device="cuda", **kw)
    assert np.abs(gpu).max() < 1.0
    np.testing.assert_allclose(gpu, cpu, atol=1e-8)


def test_lime_cuda_is_statistically_equal_to_cpu(mixed_model):  # type: ignore[no-untyped-def]
    from scipy.stats import spearmanr

    from fairmon.explain import explain

    model, Z = mixed_model
    cpu = explain(model, Z[:50], method="lime", background=Z, device="cpu", n_samples=20000)
    gpu = explain(model, Z[:50], method="lime", background=Z, device="cuda", n_samples=20000)
    assert np.mean([spearmanr(a, b).statistic for a, b in zip(cpu, gpu)]) > 0.9
    assert np.abs(cpu - gpu).mean() < 0.1 * np.abs(cpu).mean()


def test_openxai_metrics_on_cuda_match_cpu(mixed_model):  # type: ignore[no-untyped-def]
    from fairmon.explain import evaluate, explain

    model, Z = mixed_model
    E = explain(model, Z[:30], method="gradient", device="cpu")
    kw = {"explainer": "gradient", "stability_draws": 200, "stability_keep": 20, "n_samples": 2000}
    cpu = evaluate(model, Z[:30], E, device="cpu", **kw).set_index("metric")["value"]
    gpu = evaluate(model, Z[:30], E, device="cuda", **kw).set_index("metric")["value"]
    np.testing.assert_allclose(gpu["PGI"], cpu["PGI"], rtol=0.1)
    np.testing.assert_allclose(gpu["PGU"], cpu["PGU"], rtol=0.1)
    for m in ("RIS", "RRS", "ROS"):
        assert np.isfinite(gpu[m])
