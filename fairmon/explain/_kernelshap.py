"""Batched KernelSHAP: the estimator of ``shap.KernelExplainer`` for many rows at once in torch.

Why: ``KernelExplainer`` builds its coalition samples with a Python loop per sample and solves one
row at a time. fairmon runs the same estimator with the coalition designs drawn per row in
vectorised numpy, the synthetic rows evaluated in large batches, and the constrained weighted least
squares solved as one batched linear system on CPU or CUDA. When the model starts with a ``Linear``
layer (fairmon's MLP), the synthetic rows are never built: their first-layer pre-activations are
``W b_k + b + m @ ((x - b_k) * W^T)`` over the row's varying columns, one GEMM per row (see
:meth:`fairmon.explain._prob.ProbFn.first_layer`); the weighted least squares runs on the varying
columns only. Same estimator, fewer multiply-adds.

The estimator (shap 0.51 ``KernelExplainer.explain``, checked against its source; identity link):

* players are the encoded columns that *vary*: a column whose row value is ``allclose`` to every
  background value cannot change the output, gets attribution 0 and is left out (``M`` = number of
  varying columns per row);
* ``nsamples="auto"`` is ``2·M + 2048``, capped at ``2^M − 2``;
* Shapley kernel weights per coalition size ``(M−1) / (s·(M−s))``, paired sizes doubled; coalition
  sizes are enumerated completely (each subset and its complement) from size 1 upwards while the
  budget allows it (``nsamples·w_s / C(M, s) ≥ 1``); the rest of the budget is sampled: a size from
  the remaining weights, a uniformly random subset of that size and its complement (paired
  sampling); a repeated coalition adds 1 to its weight instead of a new sample; the random samples'
  weights are rescaled to the weight left by the enumerated sizes;
* ``v(S)`` = mean model output over the background rows with the coalition's columns set to the
  row's values (the interventional expectation); ``f(∅)`` = mean output on the background;
* the efficiency constraint ``Σφ = f(x) − f(∅)`` is imposed by eliminating the last varying
  column, then weighted least squares on the rest (no l1 regularisation: shap's default
  ``l1_reg="num_features(10)"`` would keep only 10 features; the ``kernelshap-lib`` path passes
  ``l1_reg=False`` so both compute the full attribution vector): the normal equations, and the
  minimum-norm least-squares solution where they are singular; ``|φ| < 1e-10`` is set to 0.
  **A deliberate difference from shap:** shap takes the least-squares path only when
  ``np.linalg.solve`` raises; here the system's rank decides. A coalition and its complement give
  the same design row up to sign, so ``n_samples`` coalitions span at most about ``n_samples / 2``
  directions: with more varying columns than that (FEU's light GESD, 32 coalitions, on German; the
  default 128 on Adult's perturbed rows, which vary in ~80–100 of 104 encoded columns) the system is
  singular, floating-point LU usually finds no exactly-zero pivot, and shap returns rounding noise
  (|φ| of 1e31–1e32 measured) that differs from one CPU to another. The design settles the rank
  of most rows by counting (:func:`fairmon.explain._coalitions.design_rank`: full when shap's
  enumeration reaches the singletons, as at ``"auto"``; deficient when there are fewer distinct
  directions than columns); only the others take the numeric rank (an eigendecomposition per row).

The random coalitions come from numpy's ``Generator`` (one design per row), not shap's global
``np.random`` stream: same distribution, not the same numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import MethodError
from fairmon.explain._coalitions import coalition_design, design_rank
from fairmon.explain._common import Target, check_matrix, resolve_target
from fairmon.explain._prob import FnInput, as_prob_fn

if TYPE_CHECKING:
    import torch


__all__ = ["kernelshap_batched", "varying_columns", "ERR_NSAMPLES"]

ERR_NSAMPLES = "n_samples must be 'auto' or an integer >= 2, got {value!r}"
#: elements (rows x samples x background x width) of one CPU chunk: 8 MiB of float64 per temporary.
#: Measured (demo fleet spec at the spec defaults, one warm process, 2,000-row windows, chunk sizes
#: alternating window by window, 2026-12-02): at 1 << 23 (64 MiB temporaries) the kernel faulted in
#: and zeroed fresh pages chunk after chunk, 0.6-0.8 system CPU-s per window in ``explain`` and
#: 0.3-0.6 in ``diagnose`` (0.36-0.42 and 0.10-0.21 even with :func:`fairmon.pipeline.frames.reuse_freed_memory`);
#: at 1 << 20, 0.07-0.19 and 0.05-0.06; the same user time and the same attributions bit for bit
#: (chunks only group rows; each row's design has its own seed)
_MAX_ELEMENTS = 1 << 20
#: on a GPU a chunk of many rows amortises the per-chunk kernel launches and host syncs (one row per
#: chunk at the CPU bound left an H200 at 3.4 ms/row, mostly launch overhead); float32 temporaries of
#: ~0.5 GiB at this bound
_MAX_ELEMENTS_CUDA = 1 << 27


def varying_columns(Z: np.ndarray, background: np.ndarray) -> np.ndarray:
    """(n, d) bool: column j of row i differs (not ``np.allclose``) from some background value."""
    out = np.zeros(Z.shape, dtype=bool)
    tol = 1e-8 + 1e-5 * np.abs(background)  # np.allclose(x, bg): |x - bg| <= atol + rtol * |bg|
    for start in range(0, Z.shape[0], 256):
        z = Z[start : start + 256]
        out[start : start + 256] = (np.abs(z[:, None, :] - background[None, :, :]) > tol[None]).any(axis=1)
    return out


def kernelshap_batched(
    f: Any,
    Z: np.ndarray,
    *,
    background: np.ndarray,
    target: Target = "predicted",
    n_samples: int | Literal["auto"] = "auto",
    random_state: int | None = 0,
    device: str | None = None,
    fn_input: FnInput = "numpy",
    max_elements: int | None = None,
) -> np.ndarray:
    """KernelSHAP attributions ``(n, d)`` of many encoded rows at once (shap's KernelExplainer).

    Parameters
    ----------
    f : Model or callable
        A :class:`fairmon.registry.Model` or a probability function of encoded rows.
    Z : ndarray (n, d)
        Encoded rows to explain.
    background : ndarray (m, d)
        Background rows (shap's ``data``); every coalition value averages over all of them, so keep
        it small (shap recommends <= 100 rows, e.g. a sample or k-means summary).
    target : {"positive", "predicted"}
        Explain P(class 1), or each row's predicted class (attributions of P(class 0) are the
        negated attributions of P(class 1), as in shap's per-class output).
    n_samples : "auto" or int
        Coalitions per row (shap's ``nsamples``); "auto" = ``2·M + 2048``.
    random_state : int
        Seeds the per-row coalition designs.

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> bg = rng.normal(size=(20, 3))
    >>> f = lambda Z: 1 / (1 + np.exp(-(Z[:, 0] - 2 * Z[:, 1])))
    >>> x = np.array([[1.0, -1.0, 0.5]])
    >>> phi = kernelshap_batched(f, x, background=bg, target="positive", device="cpu")
    >>> bool(np.isclose(phi.sum(), f(x)[0] - f(bg).mean()))  # efficiency
    True
    """
    import torch

    if n_samples != "auto" and (
        not isinstance(n_samples, (int, np.integer)) or isinstance(n_samples, bool) or n_samples < 2
    ):
        raise MethodError(ERR_NSAMPLES.format(value=n_samples))
    Z = check_matrix(Z)
    n, d = Z.shape
    bg = check_matrix(background, name="background", width=d)
    dev = resolve_device(device)
    prob = as_prob_fn(f, device=dev, fn_input=fn_input)
    Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
    bgt = torch.as_tensor(bg, dtype=torch.float64, device=dev)
    labels = resolve_target(target, prob, Zt)
    fx = prob.p1_chunked(Zt)
    fnull = prob.p1(bgt).mean()
    vary = varying_columns(Z, bg)
    M_all = vary.sum(axis=1)
    rng = np.random.default_rng(random_state)
    seeds = np.asarray(rng.integers(0, 2**63 - 1, size=n), dtype=np.int64)

    def budget(M: int) -> int:
        if M <= 1:
            return 0
        ns = 2 * M + 2**11 if n_samples == "auto" else int(n_samples)
        return min(ns, 2**M - 2) if M <= 30 else ns

    def design(i: int) -> tuple[np.ndarray, np.ndarray]:
        """Row i's coalitions over its own varying columns (built per chunk to bound memory)."""
        M = int(M_all[i])
        if M <= 1:
            return np.zeros((0, M), dtype=bool), np.zeros(0)
        return coalition_design(M, budget(M), np.random.default_rng(int(seeds[i])))

    B = bg.shape[0]
    if max_elements is None:
        max_elements = _MAX_ELEMENTS if dev.type == "cpu" else _MAX_ELEMENTS_CUDA
    phi = torch.zeros((n, d), dtype=torch.float64, device=dev)
    S_row = np.array([budget(int(M)) for M in M_all])
    split = prob.first_layer()
    width = d if split is None else max(d, int(split[0].shape[0]))  # synthetic rows / first-layer outputs
    i = 0
    while i < n:
        # rows per chunk so that (rows x samples x background x width) stays within the bound
        j, elems = i, 0
        while j < n and (j == i or elems + max(S_row[j], 1) * B * width <= max_elements):
            elems += max(S_row[j], 1) * B * width
            j += 1
        chunk = range(i, j)
        designs = {r: design(r) for r in chunk}
        _solve_chunk(chunk, designs, Zt, bgt, prob, split, fx, fnull, vary, phi, dev)
        i = j
    sign = torch.where(labels == 1, 1.0, -1.0).to(torch.float64).unsqueeze(1)
    out = (phi * sign).cpu().numpy()
    out[np.abs(out) < 1e-10] = 0.0
    return out


def _solve_chunk(
    rows: range,
    designs: dict[int, tuple[np.ndarray, np.ndarray]],
    Zt: torch.Tensor,
    bgt: torch.Tensor,
    prob: Any,
    split: tuple[torch.Tensor, torch.Tensor, Any] | None,
    fx: torch.Tensor,
    fnull: torch.Tensor,
    vary: np.ndarray,
    phi: torch.Tensor,
    dev: torch.device,
) -> None:
    import torch

    d = Zt.shape[1]
    B = bgt.shape[0]
    S_max = max(designs[r][0].shape[0] for r in rows)
    R = len(rows)
    idx = list(rows)
    delta = fx[idx] - fnull  # (R,)
    if S_max == 0:
        for k, r in enumerate(idx):
            v = np.nonzero(vary[r])[0]
            if len(v) == 1:
                phi[r, v[0]] = delta[k]
        return
    # each row's designs live on its own varying columns (sorted), padded to the chunk's widest row
    cols_r = [np.flatnonzero(vary[r]) for r in idx]
    M_r = np.array([len(c) for c in cols_r])
    masks = np.zeros((R, S_max, max(int(M_r.max()), 1)), dtype=bool)
    weights = np.zeros((R, S_max))
    for k, r in enumerate(idx):
        m, w = designs[r]
        masks[k, : m.shape[0], : m.shape[1]] = m
        weights[k, : len(w)] = w
    wt = torch.as_tensor(weights, device=dev)
    x = Zt[idx]  # (R, d)
    if split is not None:  # prob.first_layer(), taken once per call
        n_s = [designs[r][0].shape[0] for r in idx]
        ey = _coalition_values_first_layer(masks, n_s, x, bgt, cols_r, split) - fnull  # eyAdj
    else:
        full = np.zeros((R, S_max, d), dtype=bool)
        for k, c in enumerate(cols_r):
            full[k][:, c] = masks[k, :, : len(c)]
        wd = prob.work_dtype
        bw = bgt.to(wd)
        synth = torch.where(  # (R,S,B,d): background rows with the coalition's columns set to the row's values
            torch.as_tensor(full, device=dev)[:, :, None, :], x.to(wd)[:, None, None, :], bw[None, None]
        )
        ey = prob.p1_chunked(synth.reshape(-1, d)).reshape(R, S_max, B).mean(dim=2) - fnull  # eyAdj
    # constrained WLS on each row's varying columns (padding columns get 0): eliminate the last one
    vt = torch.as_tensor(np.arange(masks.shape[2])[None, :] < M_r[:, None], device=dev)
    mt = torch.as_tensor(masks, device=dev).to(torch.float64)
    last = torch.as_tensor(np.maximum(M_r - 1, 0), device=dev)
    keep = vt.clone()
    keep[torch.arange(R, device=dev), last] = False
    xl = torch.gather(mt, 2, last.view(R, 1, 1).expand(R, S_max, 1))  # (R,S,1)
    y2 = ey - xl.squeeze(2) * delta.unsqueeze(1)
    keepf = keep.to(torch.float64).unsqueeze(1)
    etmp = (mt - xl) * keepf
    WX = wt.unsqueeze(2) * etmp
    A = etmp.transpose(1, 2) @ WX + torch.diag_embed(1.0 - keep.to(torch.float64))
    b = (WX * y2.unsqueeze(2)).sum(dim=1)
    sol, info = torch.linalg.solve_ex(A, b)
    # least squares on a singular system, judged by its rank, not by LU meeting an exactly-zero pivot
    # (module docstring); the numeric rank only where the design does not settle it (on CUDA a subset
    # may take another eigensolver than the whole chunk would: rounding-level, far inside the tolerance)
    known = torch.as_tensor(design_rank(masks, weights, M_r), device=dev)
    bad = (info != 0) | (known < 0)
    ask = (known == 0) & ~bad
    if bool(ask.any()):
        bad[ask] = torch.linalg.matrix_rank(A[ask], hermitian=True) < A.shape[-1]
    if bool(bad.any()):
        sq = torch.sqrt(wt[bad]).unsqueeze(2)
        Xw, yw = sq * etmp[bad], (sq.squeeze(2) * y2[bad]).unsqueeze(2)
        # the minimum-norm solution, as shap's np.linalg.lstsq (SVD). On CPU the SVD driver: torch's
        # default (gelsy) misjudged the rank of a rank-deficient system at random. On CUDA lstsq only
        # has 'gels' (QR, full rank assumed), which returned NaN attributions for the rank-deficient
        # systems of a small coalition budget (seen on an H200: FEU's light GESD, 32 coalitions, was
        # NaN for every candidate); pinv is the same SVD solution there.
        if dev.type == "cpu":
            sol[bad] = torch.linalg.lstsq(Xw, yw, driver="gelsd").solution.squeeze(2)
        else:
            sol[bad] = (torch.linalg.pinv(Xw) @ yw).squeeze(2)
    sol = sol * keep.to(torch.float64)
    res = sol.clone()
    res[torch.arange(R, device=dev), last] = delta - sol.sum(dim=1)
    rows_rep = torch.as_tensor(np.repeat(idx, M_r), device=dev)
    phi[rows_rep, torch.as_tensor(np.concatenate(cols_r), device=dev)] = res[vt]


def _coalition_values_first_layer(
    masks: np.ndarray,
    n_s: list[int],
    x: torch.Tensor,
    bgt: torch.Tensor,
    cols_r: list[np.ndarray],
    split: tuple[torch.Tensor, torch.Tensor, Any],
) -> torch.Tensor:
    """``v(S)`` (R, S_max) for a model whose first layer is ``Linear(W, b)`` without synthetic rows.

    The synthetic row of coalition ``m`` and background row ``b_k`` is ``b_k + m * (x - b_k)``, so its
    first-layer pre-activation is ``(W b_k + b) + m @ ((x - b_k) * W^T)``; only the row's varying
    columns enter the product. One batched GEMM for the chunk's rows, ``(R, S, M) @ (R, M, B*H)``,
    replaces building the ``(S*B, d)`` synthetic matrices and multiplying them by ``W^T`` (same
    function, float32 as before). A coalition's complement needs no product of its own:
    ``(1 - m) @ U = 1 @ U - m @ U``, and shap's designs pair almost every coalition with its
    complement, so the GEMM runs on about half the coalitions. ``masks[k]`` holds row k's coalitions
    over its varying columns ``cols_r[k]`` (padded on the right); coalitions past a row's own count
    (padding, weight 0) are left at 0.
    """
    import torch

    W, bias, rest = split
    H = W.shape[0]
    dev = x.device
    R, B = masks.shape[0], bgt.shape[0]
    ey = torch.zeros(masks.shape[:2], dtype=torch.float64, device=dev)
    live = [k for k in range(R) if n_s[k] > 0 and len(cols_r[k]) > 0]
    if not live:
        return ey
    # per row: complement pairs first (P), unpaired next, complements of the first P last
    orders, P = zip(*(_complement_pairs(masks[k, : n_s[k], : len(cols_r[k])]) for k in live))
    L = len(live)
    D = [n_s[k] - p for k, p in zip(live, P)]
    D_max, P_max, M_max = max(D), max(P), max(len(cols_r[k]) for k in live)
    m = np.zeros((L, D_max, M_max), dtype=np.float32)
    col = np.zeros((L, M_max), dtype=np.int64)
    has = np.zeros((L, M_max), dtype=bool)
    for i, k in enumerate(live):
        Mk = len(cols_r[k])
        m[i, : D[i], :Mk] = masks[k, orders[i][: D[i]], :Mk]
        col[i, :Mk], has[i, :Mk] = cols_r[k], True
    bg32 = bgt.to(torch.float32)
    base = (bg32 @ W.T + bias).reshape(1, 1, B * H)
    ct, ht = torch.as_tensor(col, device=dev), torch.as_tensor(has, device=dev)
    xs = x[torch.as_tensor(live, device=dev)].to(torch.float32)
    diff = (xs.gather(1, ct)[:, None, :] - bg32[:, ct].transpose(0, 1)) * ht[:, None, :]  # (L, B, M): 0 on padding
    U = (diff.transpose(1, 2).unsqueeze(3) * W.T[ct].unsqueeze(2)).reshape(L, M_max, B * H)  # (L, M, B*H)
    pre = torch.empty((L, D_max + P_max, B * H), dtype=torch.float32, device=dev)
    torch.baddbmm(base, torch.as_tensor(m, device=dev), U, out=pre[:, :D_max])
    if P_max:  # complements of the first P: base + (1 - m) @ U = (2 base + 1 @ U) - pre(m)
        torch.sub(2 * base + U.sum(dim=1, keepdim=True), pre[:, :P_max], out=pre[:, D_max:])
    vals = rest(pre.view(-1, H)).view(L, D_max + P_max, B).mean(dim=2)
    # back to each row's design order: direct coalitions from the front, complements from D_max on
    src, dst = [], []
    S_max = masks.shape[1]
    for i, k in enumerate(live):
        src += [np.arange(D[i]) + i * (D_max + P_max), np.arange(P[i]) + i * (D_max + P_max) + D_max]
        dst.append(orders[i] + k * S_max)
    ey.view(-1)[torch.as_tensor(np.concatenate(dst), device=dev)] = vals.reshape(-1)[
        torch.as_tensor(np.concatenate(src), device=dev)
    ].to(ey.dtype)
    return ey


def _complement_pairs(masks: np.ndarray) -> tuple[np.ndarray, int]:
    """An evaluation order of a design's coalitions that puts complement pairs to use: ``(order, P)``.

    shap's designs emit most coalitions right after their complement (every subset size below M/2
    is paired). ``masks[order]`` lists each coalition once: first the ``P`` coalitions that have
    their complement in the design, then the unpaired ones, and last the ``P`` complements, in the
    order of their partners at the front.
    """
    S = masks.shape[0]
    is_comp = np.all(masks[1:] != masks[:-1], axis=1)  # row i + 1 complements row i
    start = np.flatnonzero(is_comp)
    if len(start) > 1:  # a design has no duplicates, so pairs cannot chain; stay safe if one did
        start = start[np.concatenate([[True], start[1:] != start[:-1] + 1])]
    single = np.ones(S, dtype=bool)
    single[start] = False
    single[start + 1] = False
    return np.concatenate([start, np.flatnonzero(single), start + 1]), len(start)
