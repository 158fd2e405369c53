"""The compiled CPU kernel of the IE iteration (issue 21) gives torch's gradient and the same answers."""

from __future__ import annotations

import numpy as np
import pytest
from _rumie_data import planted_frame

from fairmon.errors import MethodError

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from fairmon.fairness import _rumie_kernel  # noqa: E402
from fairmon.fairness._rumie_core import torch_threads  # noqa: E402
from fairmon.fairness._rumie_ie import _Matrices, ascent_direction, fit_ie, truncate_top_k  # noqa: E402

CPU = torch.device("cpu")
# the kernel's float32 gradient against the float64 reference: within RTOL of each output's largest
# magnitude (torch's own float32 path is within ~1e-5 on these cases; a wrong term is off by O(1))
RTOL = 1e-4


def _problem(n: int, d: int, R: int, n1: int, scale: float, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    Z[:, d // 2 :] = (Z[:, d // 2 :] > 0.3).astype(float)  # one-hot-like columns, as the encoder makes
    fav = np.zeros(n)
    fav[rng.permutation(n)[:n1]] = 1.0
    theta = rng.normal(size=(R, d)) * scale
    b = rng.normal(size=R) * scale
    return Z, fav, theta, b


CASES = [  # (n, d, R, n1, scale): block edges (2048), row remainders of 4, empty blocks, saturated sigmoids
    (1, 1, 1, 0, 0.5),
    (7, 3, 2, 7, 0.5),
    (2047, 4, 4, 1000, 0.3),
    (2048, 7, 1, 0, 1.0),
    (2049, 27, 5, 2049, 0.1),
    (5000, 27, 4, 4039, 0.1),
    (5000, 8, 3, 2500, 40.0),  # |scores| in the hundreds: p is 0 or 1 in float32, exp is clipped
]


@pytest.mark.parametrize(("n", "d", "R", "n1", "scale"), CASES)
def test_kernel_gradient_matches_torch(n: int, d: int, R: int, n1: int, scale: float) -> None:
    Z, fav, theta, b = _problem(n, d, R, n1, scale, seed=n + d)
    k_small = max(0, d - 2)
    args = (k_small, 0.7, 0.45, 0.55, 3.0)
    ref = _Matrices(Z, fav, dtype=torch.float64, device=CPU, layout="dense", kernel=False)
    t32 = _Matrices(Z, fav, dtype=torch.float32, device=CPU, layout="dense", kernel=False)
    ker = _Matrices(Z, fav, dtype=torch.float32, device=CPU, layout="dense", kernel=True)
    assert ker.kernel is not None and t32.kernel is None and ker.Z is None
    want = ascent_direction(ref, torch.tensor(theta), torch.tensor(b), *args)
    th32, b32 = torch.tensor(theta, dtype=torch.float32), torch.tensor(b, dtype=torch.float32)
    got = ascent_direction(ker, th32, b32, *args)
    base = ascent_direction(t32, th32, b32, *args)
    for name, w, g, t in zip(("g_theta", "g_b", "e_ds", "mean_p"), want, got, base, strict=True):
        assert g.dtype == torch.float32 and g.shape == t.shape, name
        tol = RTOL * max(float(w.abs().max()), 1e-3) + 1e-7
        assert float((g.double() - w).abs().max()) <= tol, name
        assert float((t.double() - w).abs().max()) <= tol, name  # the bound is one torch meets too
    # the held (R, n) buffer is p(1-p) of the last call, and the same scores feed the early stop
    W, A, B = ker.forward(th32, b32)
    P = torch.sigmoid(torch.tensor(np.c_[theta, b]) @ ref.ZT.double())
    Wt, _, Bt = t32.forward(th32, b32)
    for k_val, t_val, exact in ((W, Wt, P * (1 - P)), (B, Bt, P.sum(1))):  # no worse than torch's float32
        err_k, err_t = (float((v.double() - exact).abs().max()) for v in (k_val, t_val))
        assert err_k <= 2 * err_t + 1e-6 * max(1.0, float(exact.abs().max()))
    assert torch.equal(ker.hard_groups(th32, b32, 1, 0.3, 0.6), t32.hard_groups(th32, b32, 1, 0.3, 0.6))


def test_kernel_threads_split_the_columns_alike() -> None:
    Z, fav, theta, b = _problem(9000, 27, 4, 6000, 0.1, seed=3)
    ZT = np.ascontiguousarray(np.c_[Z[np.argsort(fav < 0.5, kind="stable")], np.ones(len(Z))].T, dtype=np.float32)
    thb = np.c_[theta, b].astype(np.float32)
    one = _rumie_kernel.DenseKernel(ZT, 6000, threads=1)
    three = _rumie_kernel.DenseKernel(ZT, 6000, threads=3)
    assert len(three.ranges) == 3 and three.ranges[0][0] == 0 and three.ranges[-1][1] == 9000
    W1, s1 = one.forward(thb)
    W1 = W1.copy()
    W3, s3 = three.forward(thb)
    np.testing.assert_array_equal(W1, W3)  # elementwise: the same per column whatever the split
    np.testing.assert_allclose(s1, s3, rtol=1e-6)
    G1, G3 = one.pullback(W1), three.pullback(W3)  # float32 within a block: rounding of the largest term
    np.testing.assert_allclose(G1, G3, rtol=0, atol=1e-6 * float(np.abs(G1).max()))


def test_use_kernel_where_it_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    big = _rumie_kernel.MIN_ROWS
    monkeypatch.delenv(_rumie_kernel.ENV, raising=False)
    assert _rumie_kernel.use_kernel(big, "cpu", True, "dense")
    assert not _rumie_kernel.use_kernel(big - 1, "cpu", True, "dense")  # small windows keep torch
    assert not _rumie_kernel.use_kernel(10 * big, "cuda", True, "dense")  # CUDA keeps torch
    assert not _rumie_kernel.use_kernel(10 * big, "cpu", False, "dense")  # float64 keeps torch
    assert not _rumie_kernel.use_kernel(10 * big, "cpu", True, "sparse")
    monkeypatch.setenv(_rumie_kernel.ENV, "off")
    assert not _rumie_kernel.use_kernel(10 * big, "cpu", True, "dense")
    monkeypatch.setenv(_rumie_kernel.ENV, "on")
    assert _rumie_kernel.use_kernel(10, "cpu", True, "dense")
    assert not _rumie_kernel.use_kernel(10, "cuda", True, "dense")
    Z, fav, _, _ = _problem(50, 3, 1, 20, 1.0, seed=0)
    assert _Matrices(Z, fav, dtype=torch.float32, device=CPU, layout="dense").kernel is not None
    with pytest.raises(MethodError):
        _Matrices(Z, fav, dtype=torch.float64, device=CPU, layout="dense", kernel=True)


def test_fit_with_kernel_finds_the_same_groups() -> None:
    """The whole optimisation, kernel vs torch: the same top-k attributes and hard groups per restart."""
    from fairmon.fairness._rumie_inputs import prepare

    X, fav, member = planted_frame(3000)
    p = prepare(X, fav.astype(int), None, None)
    kw = {"k": 3, "alpha": 0.3, "beta": 0.7, "lam": 1.0, "iterations": 400, "lr": 0.1, "clip_norm": 5.0,
          "restarts": 4, "init_scale": 0.1, "bias": True, "penalty_start": 1.0, "penalty_end": 100.0,
          "device": CPU, "random_state": 0, "layout": "dense"}
    with torch_threads(1, "cpu"):
        fits = {k: fit_ie(p.Z, p.fav, kernel=k, **kw) for k in (False, True)}
    assert fits[True].iterations_run == fits[False].iterations_run
    np.testing.assert_allclose(fits[True].theta, fits[False].theta, rtol=1e-3, atol=1e-4)
    for r in range(4):
        tk = [truncate_top_k(fits[k].theta[r], 3)[0] for k in (False, True)]
        assert np.array_equal(tk[0] != 0, tk[1] != 0)
        groups = [p.Z @ t + fits[k].bias[r] >= 0 for t, k in zip(tk, (False, True), strict=True)]
        assert (groups[0] != groups[1]).mean() <= 0.001
    best = int(np.argmax(fits[True].expected_dscore))
    group = p.Z @ truncate_top_k(fits[True].theta[best], 3)[0] + fits[True].bias[best] >= 0
    assert (group == member).mean() > 0.9  # and it is the planted group


def test_mine_same_rule_with_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from fairmon.fairness.rumie import mine

    X, fav, _ = planted_frame(2000, random_state=1)
    rules = {}
    for mode in ("off", "on"):
        monkeypatch.setenv(_rumie_kernel.ENV, mode)
        ev = mine(X, fav, k=3, iterations=600, restarts=4, random_state=0, num_threads=1)
        rules[mode] = (ev.rule, ev.group_size, round(float(ev.dscore), 6))
    assert rules["on"] == rules["off"]


def test_no_cache_location_compiles_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where numba finds nowhere to cache (here: a function without a source file), the kernels still
    compile, uncached, and :func:`use_kernel` then asks for more rows."""
    from fairmon.fairness import _rumie_jit

    monkeypatch.setattr(_rumie_jit, "CACHED", True)
    ns: dict[str, object] = {}
    exec("def f(x):\n    return x + 1\n", ns)  # noqa: S102 - the source is this string: no cache locator
    jitted = _rumie_jit._jit(ns["f"])
    assert jitted(1) == 2 and _rumie_jit.CACHED is False
    monkeypatch.delenv(_rumie_kernel.ENV, raising=False)
    assert not _rumie_kernel.use_kernel(_rumie_kernel.MIN_ROWS, "cpu", True, "dense")
    assert _rumie_kernel.use_kernel(_rumie_kernel.MIN_ROWS_UNCACHED, "cpu", True, "dense")
