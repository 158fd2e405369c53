"""The two compiled passes of :mod:`fairmon.fairness._rumie_kernel` (numba; imported on first use).

Importing this module compiles the kernels or loads them from numba's cache: ``cache=True`` keeps them
in ``__pycache__`` beside this file, or in the user's cache directory when that is read-only; where no
location can be written (numba finds no cache locator) they are compiled in every process
(:data:`CACHED` is then ``False``). The functions are numba dispatchers: call them with C-contiguous
float32 ``ZT`` (d+1, n), ``thb`` (R, d+1), ``W`` (R, n) and float64 outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

__all__ = ["BLOCK", "CACHED", "forward", "pullback"]

#: columns per cache block: 28 rows x 2048 float32 = 229 kB, inside a 512 kB L2
BLOCK = 2048
CACHED = True
_OPTS: dict[str, Any] = {"nogil": True, "fastmath": True, "error_model": "numpy", "boundscheck": False}


def _jit(fn: Callable[..., Any]) -> Any:
    global CACHED
    try:
        return numba.njit(cache=True, **_OPTS)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available": compile per process
        CACHED = False
        return numba.njit(cache=False, **_OPTS)(fn)


_F = np.float32
_LOG2E = _F(1.4426950408889634)
_LN2_HI = _F(0.693359375)
_LN2_LO = _F(-2.12194440e-4)
_C1, _C2, _C3 = _F(1.9875691500e-4), _F(1.3981999507e-3), _F(8.3334519073e-3)
_C4, _C5, _C6 = _F(4.1665795894e-2), _F(1.6666665459e-1), _F(5.0000001201e-1)
_ONE, _HALF, _ZERO = _F(1.0), _F(0.5), _F(0.0)
# exp's argument is clipped to [-87, 80]: 2^n stays a normal float32 (no slow subnormals); p = 1/(1+e)
# then differs from torch's only below 2e-35 (p) or within 1e-38 of 1
_XMIN, _XMAX = _F(-87.0), _F(80.0)



@_jit
def _scores1(ZT: Any, t: Any, jb: int, m: int, s: Any) -> None:
    """``s[:m] = t . ZT[:, jb:jb+m]`` for one restart: four rows of Z per sweep over the block."""
    D = ZT.shape[0]
    for j in range(m):
        s[j] = _ZERO
    k = 0
    while k + 4 <= D:
        t0, t1, t2, t3 = t[k], t[k + 1], t[k + 2], t[k + 3]
        z0, z1 = ZT[k, jb : jb + m], ZT[k + 1, jb : jb + m]
        z2, z3 = ZT[k + 2, jb : jb + m], ZT[k + 3, jb : jb + m]
        for j in range(m):
            s[j] += t0 * z0[j] + t1 * z1[j] + t2 * z2[j] + t3 * z3[j]
        k += 4
    while k < D:
        t0 = t[k]
        z0 = ZT[k, jb : jb + m]
        for j in range(m):
            s[j] += t0 * z0[j]
        k += 1


@_jit
def _scores2(ZT: Any, t: Any, u: Any, jb: int, m: int, s: Any, v: Any) -> None:
    """Two restarts at once (``s`` for ``t``, ``v`` for ``u``): 6 loads and 2 stores per 8 FMAs."""
    D = ZT.shape[0]
    for j in range(m):
        s[j] = _ZERO
        v[j] = _ZERO
    k = 0
    while k + 4 <= D:
        t0, t1, t2, t3 = t[k], t[k + 1], t[k + 2], t[k + 3]
        u0, u1, u2, u3 = u[k], u[k + 1], u[k + 2], u[k + 3]
        z0, z1 = ZT[k, jb : jb + m], ZT[k + 1, jb : jb + m]
        z2, z3 = ZT[k + 2, jb : jb + m], ZT[k + 3, jb : jb + m]
        for j in range(m):
            a, b, c, d = z0[j], z1[j], z2[j], z3[j]
            s[j] += t0 * a + t1 * b + t2 * c + t3 * d
            v[j] += u0 * a + u1 * b + u2 * c + u3 * d
        k += 4
    while k < D:
        t0, u0 = t[k], u[k]
        z0 = ZT[k, jb : jb + m]
        for j in range(m):
            s[j] += t0 * z0[j]
            v[j] += u0 * z0[j]
        k += 1


@_jit
def _sigmoid(s: Any, w: Any, m: int) -> Any:
    """``w[:m] = p (1 - p)`` for ``p = sigmoid(s)``; returns the sum of ``p`` (float32)."""
    acc = _ZERO
    for j in range(m):  # p = 1 / (1 + exp(-s)), exp(x) = 2^i exp(g), |g| <= ln2 / 2
        x = min(max(-s[j], _XMIN), _XMAX)
        fi = np.floor(x * _LOG2E + _HALF)
        g = x - fi * _LN2_HI - fi * _LN2_LO
        q = ((((_C1 * g + _C2) * g + _C3) * g + _C4) * g + _C5) * g + _C6
        two_i = np.int32((np.int32(fi) + np.int32(127)) << np.int32(23)).view(np.float32)
        p = _ONE / (_ONE + (q * g * g + g + _ONE) * two_i)
        acc += p
        w[j] = p - p * p
    return acc


@_jit
def forward(ZT: Any, thb: Any, n1: int, W: Any, sums: Any, j0: int, j1: int) -> None:
    """Columns ``j0..j1``: ``W = p (1 - p)``; ``sums[:, 0]`` / ``[:, 1]`` = sum of ``p`` over the
    favourable columns (``< n1``) / the rest. Restarts in pairs, column blocks of :data:`BLOCK`."""
    s = np.empty((2, BLOCK), np.float32)
    R = thb.shape[0]
    sums[:, :] = 0.0
    for seg in range(2):
        a = j0 if seg == 0 else max(j0, n1)
        e = min(j1, n1) if seg == 0 else j1
        for jb in range(a, e, BLOCK):
            m = min(BLOCK, e - jb)
            r = 0
            while r + 2 <= R:
                _scores2(ZT, thb[r], thb[r + 1], jb, m, s[0], s[1])
                sums[r, seg] += _sigmoid(s[0], W[r, jb : jb + m], m)
                sums[r + 1, seg] += _sigmoid(s[1], W[r + 1, jb : jb + m], m)
                r += 2
            if r < R:
                _scores1(ZT, thb[r], jb, m, s[0])
                sums[r, seg] += _sigmoid(s[0], W[r, jb : jb + m], m)


@_jit
def _pull1(ZT: Any, w: Any, g: Any, jb: int, m: int) -> None:
    """``g[k] += sum_j w[j] ZT[k, jb+j]``: four rows of Z against one restart's ``w`` per sweep."""
    D = ZT.shape[0]
    k = 0
    while k + 4 <= D:
        z0, z1 = ZT[k, jb : jb + m], ZT[k + 1, jb : jb + m]
        z2, z3 = ZT[k + 2, jb : jb + m], ZT[k + 3, jb : jb + m]
        a0 = a1 = a2 = a3 = _ZERO
        for j in range(m):
            wj = w[j]
            a0 += wj * z0[j]
            a1 += wj * z1[j]
            a2 += wj * z2[j]
            a3 += wj * z3[j]
        g[k] += a0
        g[k + 1] += a1
        g[k + 2] += a2
        g[k + 3] += a3
        k += 4
    while k < D:
        z0 = ZT[k, jb : jb + m]
        a0 = _ZERO
        for j in range(m):
            a0 += w[j] * z0[j]
        g[k] += a0
        k += 1


@_jit
def _pull2(ZT: Any, w: Any, x: Any, g: Any, h: Any, jb: int, m: int) -> None:
    """Two restarts at once (``g`` for ``w``, ``h`` for ``x``): 6 loads per 8 FMAs, 8 accumulators."""
    D = ZT.shape[0]
    k = 0
    while k + 4 <= D:
        z0, z1 = ZT[k, jb : jb + m], ZT[k + 1, jb : jb + m]
        z2, z3 = ZT[k + 2, jb : jb + m], ZT[k + 3, jb : jb + m]
        a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = _ZERO
        for j in range(m):
            wj, xj = w[j], x[j]
            c0, c1, c2, c3 = z0[j], z1[j], z2[j], z3[j]
            a0 += wj * c0
            a1 += wj * c1
            a2 += wj * c2
            a3 += wj * c3
            b0 += xj * c0
            b1 += xj * c1
            b2 += xj * c2
            b3 += xj * c3
        g[k] += a0
        g[k + 1] += a1
        g[k + 2] += a2
        g[k + 3] += a3
        h[k] += b0
        h[k + 1] += b1
        h[k + 2] += b2
        h[k + 3] += b3
        k += 4
    while k < D:
        z0 = ZT[k, jb : jb + m]
        a0 = b0 = _ZERO
        for j in range(m):
            a0 += w[j] * z0[j]
            b0 += x[j] * z0[j]
        g[k] += a0
        h[k] += b0
        k += 1


@_jit
def pullback(ZT: Any, W: Any, n1: int, G: Any, j0: int, j1: int) -> None:
    """Columns ``j0..j1``: ``G[0] = W[:, :n1] @ ZT[:, :n1].T`` and ``G[1]`` the same over the rest
    (float32 within a block of :data:`BLOCK` columns, float64 across); restarts in pairs."""
    R = W.shape[0]
    G[:, :, :] = 0.0
    for seg in range(2):
        a = j0 if seg == 0 else max(j0, n1)
        e = min(j1, n1) if seg == 0 else j1
        for jb in range(a, e, BLOCK):
            m = min(BLOCK, e - jb)
            r = 0
            while r + 2 <= R:
                _pull2(ZT, W[r, jb : jb + m], W[r + 1, jb : jb + m], G[seg, r], G[seg, r + 1], jb, m)
                r += 2
            if r < R:
                _pull1(ZT, W[r, jb : jb + m], G[seg, r], jb, m)
