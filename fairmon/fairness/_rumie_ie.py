"""IE (paper Algorithm 1): the penalised continuous optimisation of the expected DScore, in torch.

``P(x in S) = sigmoid(theta . z + b)`` on the encoded, standardised matrix ``Z``; maximise
``E[DScore] - lam * C(k, theta) - rho_t * violation^2`` with full-batch gradient steps (the paper's
"SGD": lr 0.1, 2500 iterations, gradient norm clipped at 5), keep the top-k ``|theta|``.

Choices the paper leaves open (all parameters of :func:`fit_ie`, documented in ``rumie.mine``):

* ``bias``: a learnt intercept ``b`` (not penalised, not counted in the top-k);
* penalty: quadratic on the violation of ``alpha <= mean p <= beta`` with weight growing
  geometrically from ``penalty_start`` to ``penalty_end`` over the iterations;
* initialisation: restart 0 starts at ``theta = 0`` (its first step follows ``-cov(f, z)``), the other
  restarts at ``N(0, init_scale^2)`` from the seeded generator; restarts run batched as one matrix;
* the gradient norm is clipped per restart over ``(theta, b)`` exactly like ``clip_grad_norm_``;
* early stopping (:class:`EarlyStop`): what IE hands on is each restart's hard group, the rows of its
  top-k cut ``theta_k . z + b >= 0`` (its size clipped into ``[alpha, beta]`` by taking the rows of
  highest score, as the bounds repair does). Every ``check_every`` iterations that group is computed
  (one extra scores product: ~1/``check_every`` of the cost) and the optimisation stops once, in every
  restart, at most a ``tol`` fraction of the rows changed membership (summed over the checks) within
  the last ``patience`` iterations. The expected DScore itself does not level off within the paper's
  2500 iterations (the sigmoid keeps sharpening: on the scale benchmark's 50k sample it still rose 4%
  over the last 300), so a test on it would not stop; the groups settle long before (measured in
  ``benchmarks/scale``). ``iterations`` is the most that run.

Speed (issue 21): rows are reordered once with the favourable ones first, so ``A = sum_f p`` is a
sum over a contiguous block and the per-row gradient ``G = p(1-p) (dA f + dB)`` is a per-block scale
that is folded into the pullback; the dense layout keeps ``[Z, 1]`` (n, d+1) and its (d+1, n)
transpose, so the bias rides in the two matrix products and the scores come out as (R, n) rows
without a transposed copy. Per iteration the dense path streams ``Z`` twice plus a handful of passes
over the (R, n) probabilities, all in place. On CPU in float32 from
:data:`~fairmon.fairness._rumie_kernel.MIN_ROWS` rows the two passes run compiled instead
(:mod:`fairmon.fairness._rumie_kernel`: the scores, sigmoid and sums fused, writing ``p(1-p)`` once;
~2x faster than torch's products at 1M rows); CUDA, float64 and the sparse layout keep torch.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fairmon._device import torch_generator
from fairmon.errors import MethodError
from fairmon.fairness._rumie_kernel import DenseKernel, use_kernel

if TYPE_CHECKING:
    import torch

__all__ = ["EarlyStop", "IEFit", "ascent_direction", "choose_layout", "fit_ie", "truncate_top_k"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EarlyStop:
    """When IE stops before ``iterations``: see the module docstring (``tol=0`` never stops early).

    Examples
    --------
    >>> EarlyStop().tol, EarlyStop(tol=0.0).enabled
    (0.002, False)
    """

    tol: float = 0.002
    patience: int = 300
    check_every: int = 50

    @property
    def enabled(self) -> bool:
        return self.tol > 0.0


@dataclass(frozen=True)
class IEFit:
    """Raw optimisation result: one row per restart (before top-k truncation)."""

    theta: np.ndarray  # (R, d)
    bias: np.ndarray  # (R,)
    expected_dscore: np.ndarray  # (R,) at the last iteration, before truncation
    mean_p: np.ndarray  # (R,) expected size fraction at the last iteration
    device: str
    iterations_run: int = 0
    stopped_early: bool = False
    layout: str = "dense"


def truncate_top_k(theta: np.ndarray, k: int) -> np.ndarray:
    """Keep the ``k`` largest ``|theta|`` per row (ties: lower index first), zero the rest."""
    th = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    out = np.zeros_like(th)
    for r in range(th.shape[0]):
        keep = np.argsort(-np.abs(th[r]), kind="stable")[:k]
        out[r, keep] = th[r, keep]
    return out


def choose_layout(Z: np.ndarray, device_type: str) -> str:
    """``layout="auto"``: dense unless CSR products are cheaper (CPU, wide and mostly zeros).

    Measured per IE iteration on 200k rows, one thread (issue 21): dense costs ~0.22 ms per encoded
    column, CSR ~7.4 ms + 0.41 ms per non-zero per row; so 27 columns with 7 non-zeros per row (the
    demo's attributes) are dense (7 vs 10 ms) and Adult's 108 columns with 14 non-zeros are sparse
    (23 vs 13 ms). CUDA is always dense.

    Examples
    --------
    >>> choose_layout(np.eye(40)[np.arange(1000) % 40], "cpu"), choose_layout(np.ones((5, 3)), "cpu")
    ('sparse', 'dense')
    """
    n, d = Z.shape
    if device_type != "cpu" or n == 0:
        return "dense"
    nnz_per_row = float(np.count_nonzero(Z)) / n
    return "sparse" if 7.4 + 0.41 * nnz_per_row < 0.22 * d else "dense"


def fit_ie(
    Z: np.ndarray,
    favorable: np.ndarray,
    *,
    k: int,
    alpha: float,
    beta: float,
    lam: float,
    iterations: int,
    lr: float,
    clip_norm: float,
    restarts: int,
    init_scale: float,
    bias: bool,
    penalty_start: float,
    penalty_end: float,
    device: torch.device,
    random_state: int,
    dtype: str = "float32",
    layout: str = "auto",
    early_stop: EarlyStop | None = None,
    kernel: bool | None = None,
) -> IEFit:
    """Solve paper eq. 11 by the penalty method for ``restarts`` initialisations at once.

    ``kernel``: run the iteration's two passes compiled (:mod:`fairmon.fairness._rumie_kernel`);
    ``None`` decides by :func:`~fairmon.fairness._rumie_kernel.use_kernel` (CPU, dense, float32, large
    windows). Either way the same gradient, to float32 rounding.
    """
    import torch

    stop = early_stop if early_stop is not None else EarlyStop()
    tdtype = torch.float32 if dtype == "float32" else torch.float64
    n, d = Z.shape
    if layout == "auto":
        layout = choose_layout(Z, device.type)
    mats = _Matrices(Z, favorable, dtype=tdtype, device=device, layout=layout, kernel=kernel)
    R = max(1, int(restarts))
    # initial values come from a CPU generator on every device, so CUDA and CPU start identically
    gen = torch_generator(random_state, torch.device("cpu"))
    theta = torch.zeros((R, d), dtype=tdtype, device=device)
    if R > 1:
        init = torch.randn((R - 1, d), generator=gen, dtype=tdtype) * init_scale
        theta[1:] = init.to(device)
    b = torch.zeros((R,), dtype=tdtype, device=device)
    n_small = d - k
    eps = 1e-12
    if iterations > 1 and penalty_end > 0 and penalty_start > 0:
        growth = (penalty_end / penalty_start) ** (1.0 / (iterations - 1))
    else:
        growth = 1.0
    rho = float(penalty_start)
    every = max(1, int(stop.check_every))
    lag = max(1, int(math.ceil(stop.patience / every)))
    flips: list[torch.Tensor] = []  # per check: the fraction of rows that changed group, per restart
    last: torch.Tensor | None = None
    ran, early = int(iterations), False
    with torch.no_grad():
        for t in range(int(iterations)):
            g_th, g_b, e_ds, m = ascent_direction(mats, theta, b, n_small, lam, alpha, beta, rho, eps)
            if not bias:
                g_b = torch.zeros_like(g_b)
            # clip like clip_grad_norm_ over (theta, b) of each restart, then step uphill
            norm = torch.sqrt((g_th * g_th).sum(1) + g_b * g_b)
            coef = torch.clamp(clip_norm / (norm + 1e-6), max=1.0) * lr
            theta = theta + coef[:, None] * g_th
            b = b + coef * g_b
            rho *= growth
            if stop.enabled and (t + 1) % every == 0:
                groups = mats.hard_groups(theta, b, k, alpha, beta)
                if last is not None:
                    flips.append((groups != last).sum(1) / n)
                last = groups
                if len(flips) >= lag and bool((torch.stack(flips[-lag:]).sum(0) <= stop.tol).all()):
                    ran, early = t + 1, True
                    break
        e_ds, m = mats.expected(theta, b, eps)
    if early:
        log.info("RUMIE IE stopped after %d of %d iterations: in every restart at most %.2g of the rows changed "
                 "group over the last %d iterations", ran, iterations, stop.tol, lag * every)
    else:
        log.info("RUMIE IE ran all %d iterations (%s layout%s, %d rows)", ran, layout,
                 ", compiled kernel" if mats.kernel is not None else "", n)
    return IEFit(
        theta=theta.detach().cpu().double().numpy(),
        bias=b.detach().cpu().double().numpy(),
        expected_dscore=e_ds.cpu().double().numpy(),
        mean_p=m.cpu().double().numpy(),
        device=str(device),
        iterations_run=ran,
        stopped_early=early,
        layout=layout,
    )


def ascent_direction(
    mats: _Matrices,
    theta: torch.Tensor,
    b: torch.Tensor,
    n_small: int,
    lam: float,
    alpha: float,
    beta: float,
    rho: float,
    eps: float = 1e-12,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Analytic gradient of ``E[DScore] - lam*C(k, theta) - rho*viol^2`` w.r.t. ``(theta, b)``.

    Written by hand (checked against autograd in the tests): per iteration it streams ``Z`` twice
    (scores, then the pullback) and works on one (R, n) buffer in place. Returns the gradients and,
    for the early stop, the expected DScore and size fraction at ``(theta, b)``.
    """
    import torch

    n, n1 = mats.n, mats.n1
    W, A, B = mats.forward(theta, b)  # W = p(1-p) (R, n), favourable rows first; A, B the sums of p
    nb = n - B + eps
    bb = B + eps
    e_ds = (n1 - A) / nb - A / bb
    dA = -1.0 / nb - 1.0 / bb
    dB = (n1 - A) / (nb * nb) + A / (bb * bb)
    m = B / n
    below = torch.relu(alpha - m)
    above = torch.relu(m - beta)
    # d(rho*viol^2)/dB = 2*rho*viol*dviol/dm / n with dviol/dm = -1 below alpha, +1 above beta
    dB = dB - 2.0 * rho * (above - below) / n
    # d objective / d logit = p(1-p) (dA f + dB): dA + dB on the favourable block, dB on the rest
    g_th, g_b = mats.pullback(W, dA + dB, dB)
    if n_small > 0 and lam != 0.0:
        idx = torch.topk(theta.abs(), n_small, dim=1, largest=False).indices
        sub = torch.zeros_like(theta).scatter_(1, idx, torch.sign(torch.gather(theta, 1, idx)))
        g_th = g_th - (lam / n_small) * sub
    return g_th, g_b, e_ds, m


class _Matrices:
    """``Z`` on the device, favourable rows first, in the layout that makes both products fast.

    ``dense`` keeps ``[Z, 1]`` (n, d+1) for the pullback and its (d+1, n) transpose for the scores
    (the bias is the last column, so both products carry it); ``sparse`` keeps CSR copies of ``Z``
    and ``Z^T`` (cheaper when the encoded matrix is wide and mostly zeros: :func:`choose_layout`).
    With the compiled kernel (``kernel``; ``None``: :func:`~fairmon.fairness._rumie_kernel.use_kernel`)
    only the (d+1, n) transpose is kept: both passes read it.
    """

    Z: torch.Tensor | None

    def __init__(self, Z: np.ndarray, favorable: np.ndarray, *, dtype: torch.dtype, device: torch.device,
                 layout: str, kernel: bool | None = None) -> None:
        import warnings

        import torch

        fav = np.asarray(favorable, dtype=np.float64) > 0.5
        order = np.argsort(~fav, kind="stable")  # favourable rows first
        self.n, self.d = int(Z.shape[0]), int(Z.shape[1])
        self.n1 = int(fav.sum())
        self.layout = layout
        self.kernel: DenseKernel | None = None
        np_dtype = np.float32 if dtype == torch.float32 else np.float64
        if kernel is None:
            kernel = use_kernel(self.n, device.type, dtype == torch.float32, layout)
        if kernel and (device.type != "cpu" or dtype != torch.float32 or layout != "dense"):
            raise MethodError("the compiled RUMIE kernel (kernel=True) runs the CPU dense float32 layout only")
        if kernel:
            zt = np.empty((self.d + 1, self.n), dtype=np.float32)
            for s in range(0, self.n, 65_536):  # in blocks, as below
                zt[: self.d, s : s + 65_536] = Z[order[s : s + 65_536]].T
            zt[self.d] = 1.0
            self.kernel = DenseKernel(zt, self.n1, threads=torch.get_num_threads())
            self.Z, self.ZT = None, torch.from_numpy(self.kernel.ZT)  # shares the kernel's array
            return
        if layout == "sparse":
            dense = torch.as_tensor(np.ascontiguousarray(Z[order], dtype=np_dtype)).to(device)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
                self.Zs = dense.to_sparse_csr()
                self.ZTs = dense.T.contiguous().to_sparse_csr()
            return
        aug = np.empty((self.n, self.d + 1), dtype=np_dtype)
        for s in range(0, self.n, 65_536):  # in blocks: no full-size temporary of the reordered Z
            aug[s : s + 65_536, : self.d] = Z[order[s : s + 65_536]]
        aug[:, self.d] = 1.0
        self.Z = torch.as_tensor(aug).to(device)  # (n, d+1)
        self.ZT = self.Z.T.contiguous()  # (d+1, n): theta @ Z^T writes the (R, n) scores directly

    def forward(self, theta: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(W, A, B)``: ``W = p (1 - p)`` (R, n), ``A`` / ``B`` the sums of ``p`` over the favourable
        rows / all rows. ``W`` may be a buffer the next call overwrites; the caller may overwrite it."""
        import torch

        if self.kernel is not None:
            thb = torch.cat([theta, b[:, None]], dim=1).numpy()
            W, sums = self.kernel.forward(thb)
            return (torch.from_numpy(W), torch.from_numpy(sums[:, 0]).to(theta.dtype),
                    torch.from_numpy(sums.sum(1)).to(theta.dtype))
        P = self.probabilities(theta, b)
        A = P[:, : self.n1].sum(1)
        B = A + P[:, self.n1 :].sum(1)
        P.addcmul_(P, P, value=-1.0)  # p(1-p), in place: d score / d logit
        return P, A, B

    def probabilities(self, theta: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """``sigmoid(theta . z + b)`` as a fresh (R, n) buffer (the caller may overwrite it)."""
        import torch

        if self.layout == "sparse":
            s = (self.Zs @ theta.T).T.contiguous()
            s.add_(b[:, None])
        else:
            s = torch.cat([theta, b[:, None]], dim=1) @ self.ZT
        return s.sigmoid_()

    def pullback(self, W: torch.Tensor, c_fav: torch.Tensor, c_rest: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(G Z, G 1)`` for ``G = W * c_fav`` on the favourable rows and ``W * c_rest`` on the rest."""
        import torch

        n1 = self.n1
        if self.kernel is not None:
            G = self.kernel.pullback(W.numpy())  # (2, R, d+1) float64
            g = torch.from_numpy(c_fav.double().numpy()[:, None] * G[0] + c_rest.double().numpy()[:, None] * G[1])
            g = g.to(W.dtype)
            return g[:, : self.d], g[:, self.d]
        if self.layout == "sparse":
            W[:, :n1].mul_(c_fav[:, None])
            W[:, n1:].mul_(c_rest[:, None])
            return (self.ZTs @ W.T).T, W.sum(1)
        assert self.Z is not None
        g = c_fav[:, None] * (W[:, :n1] @ self.Z[:n1]) + c_rest[:, None] * (W[:, n1:] @ self.Z[n1:])
        return g[:, : self.d], g[:, self.d]

    def hard_groups(self, theta: torch.Tensor, b: torch.Tensor, k: int, alpha: float, beta: float) -> torch.Tensor:
        """Each restart's group (R, n) bool: ``theta_k . z + b >= 0`` for the top-k ``theta_k``, its size
        clipped into ``[alpha, beta]`` by taking the rows of highest score."""
        import torch

        small = theta.shape[1] - k
        th = theta.clone()
        if small > 0:
            th.scatter_(1, torch.topk(theta.abs(), small, dim=1, largest=False).indices, 0.0)
        if self.layout == "sparse":
            s = (self.Zs @ th.T).T + b[:, None]
        else:
            s = torch.cat([th, b[:, None]], dim=1) @ self.ZT
        size = (s >= 0).sum(1).clamp(max(1, int(math.ceil(alpha * self.n))), max(1, int(beta * self.n)))
        # the size-th largest score of each restart is its cut (ties: all rows at the cut are in)
        cut = torch.stack([torch.kthvalue(s[r], self.n - int(size[r]) + 1).values for r in range(s.shape[0])])
        return s >= cut[:, None]

    def expected(self, theta: torch.Tensor, b: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Expected DScore and size fraction at ``(theta, b)``."""
        P = self.probabilities(theta, b)
        A = P[:, : self.n1].sum(1)
        B = A + P[:, self.n1 :].sum(1)
        return (self.n1 - A) / (self.n - B + eps) - A / (B + eps), B / self.n
