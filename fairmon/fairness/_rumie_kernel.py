"""The CPU dense IE iteration as two compiled passes (numba), for large windows (issue 21).

Torch's path for one :func:`~fairmon.fairness._rumie_ie.ascent_direction` is two skinny matrix
products (``[theta, b] @ [Z, 1]^T``, then ``W @ [Z, 1]`` per row block) around a few elementwise passes
over the (R, n) probabilities; MKL runs the 4-row products at ~21 GFLOP/s here, so the iteration took
3x the time of streaming its bytes. The two passes of :mod:`fairmon.fairness._rumie_jit` stream the
``(d+1, n)`` float32 matrix ``[Z, 1]^T`` once each, in column blocks that stay in cache:

* ``forward``: per block and pair of restarts the scores ``s = [theta, b] . z`` (four rows of ``Z``
  per sweep over the block: 6 loads and 2 stores per 8 FMAs), then ``p = sigmoid(s)`` with a
  vectorised float32 ``exp`` (Cody-Waite reduction and the Cephes polynomial, ~1 ulp like torch's),
  writing ``w = p (1 - p)`` once and summing ``p`` over the favourable rows and over the rest (float32
  within a block, float64 across blocks);
* ``pullback``: ``G[seg] = W[:, seg] @ [Z, 1][seg]`` for the favourable rows and for the rest, four
  rows of ``Z`` against a pair of restarts' ``w`` per sweep (8 register accumulators; float32 within a
  block, float64 across).

Measured at 1M rows, one thread (load 3): the iteration 26.9 ms against torch's 47.3 ms, the
memory-traffic floor ~21-25 ms; the two passes alone, with the block in L2, ~11 + 7 ms of arithmetic
(the sigmoid ~2-3 of it), so on an idle machine, where the floor is ~9.5 ms, they are bound by the
FMA and load ports rather than by memory.

Both release the GIL: with more than one torch thread the columns are split into that many ranges on a
thread pool. :func:`use_kernel` decides where it pays; CUDA and float64 keep torch.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from typing import Any

import numpy as np

from fairmon.config._env import ENV_RUMIE_KERNEL

__all__ = ["ENV", "MIN_ROWS", "MIN_ROWS_UNCACHED", "DenseKernel", "use_kernel"]

#: ``FAIRMON_RUMIE_KERNEL``: ``0`` / ``off`` never uses the kernel, ``1`` / ``on`` at any size,
#: unset or ``auto`` from :data:`MIN_ROWS` rows on
ENV = ENV_RUMIE_KERNEL
#: rows from which the kernel replaces torch (CPU, dense, float32). What it costs, once per process:
#: ~1.1 CPU-s to load numba and the cached kernels (~4.4 s to compile them where the cache is empty) and
#: ~120 MB resident (numba and LLVM). What it saves, per iteration: 100k rows 6.6 -> 4.2 ms, 200k rows
#: 12.2 -> 5.9 ms, 1M rows ~2x (load 3, benchmarks/scale). Above the default ``rumie.max_rows`` (100k),
#: so the default pipeline, which mines a 100k sample, keeps torch and its memory (the 1M window's peak
#: RSS went 1.20 -> 1.31 GB with the kernel at 100k rows); fits on more rows take the kernel. Fixed, not
#: adaptive: the same window takes the same path in every process with the same install.
MIN_ROWS = 200_000
#: the same where numba can write no cache (:data:`fairmon.fairness._rumie_jit.CACHED` false): every
#: process then compiles the kernels
MIN_ROWS_UNCACHED = 400_000


def _jit_module() -> Any:
    """:mod:`fairmon.fairness._rumie_jit`, loaded on first use: importing it loads numba and LLVM
    (~1.1 CPU-s, ~120 MB), which a fit pays only when it runs the kernel (as for the heavy libraries
    that tests/unit/test_imports.py lets functions import lazily)."""
    return import_module("fairmon.fairness._rumie_jit")


def use_kernel(n: int, device_type: str, dtype_is_float32: bool, layout: str) -> bool:
    """Whether :class:`DenseKernel` runs this fit: CPU, dense, float32, at least :data:`MIN_ROWS` rows
    (:data:`MIN_ROWS_UNCACHED` without a numba cache; :data:`ENV` overrides both) and numba importable.

    Examples
    --------
    >>> use_kernel(10**6, "cuda", True, "dense"), use_kernel(10**6, "cpu", True, "sparse")
    (False, False)
    """
    if device_type != "cpu" or not dtype_is_float32 or layout != "dense" or n == 0:
        return False
    mode = os.environ.get(ENV, "auto").strip().lower()
    if mode in ("0", "off", "false", "no"):
        return False
    forced = mode in ("1", "on", "true", "yes")
    if not forced and n < MIN_ROWS:
        return False
    try:
        _rumie_jit = _jit_module()
    except ImportError:  # pragma: no cover - numba is a dependency; a broken install keeps torch
        return False
    return forced or _rumie_jit.CACHED or n >= MIN_ROWS_UNCACHED


def _block_aligned_ranges(n: int, n1: int, parts: int, block: int) -> list[tuple[int, int]]:
    """About ``parts`` column ranges of near-equal size that cut only where the one-thread pass starts a
    block (multiples of ``block`` below ``n1``, ``n1`` plus multiples above it).

    Why: inside a block the compiled loops run vector lanes and a scalar remainder, whose float32
    rounding can differ by an ulp; ranges cut elsewhere re-block the columns, so ``W`` depended on the
    thread count (measured on one host: 11 of 36,000 elements, 3e-8, next to the cuts). Cut on the
    one-thread block grid, every column is computed in the same block at the same place.

    >>> _block_aligned_ranges(9000, 6000, 3, 2048)
    [(0, 2048), (2048, 6000), (6000, 9000)]
    >>> _block_aligned_ranges(100, 0, 1, 2048)
    [(0, 100)]
    """
    grid = np.unique(np.r_[np.arange(0, n1, block), np.arange(n1, n, block), n]).astype(np.int64)
    targets = np.linspace(0, n, parts + 1)[1:-1]
    inner = grid[np.abs(grid[:, None] - targets[None, :]).argmin(axis=0)] if len(targets) else grid[:0]
    cuts = np.unique(np.r_[0, inner[(inner > 0) & (inner < n)], n])
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


class DenseKernel:
    """The two passes over one fit's ``[Z, 1]^T`` (``(d+1, n)`` float32, favourable columns first).

    Holds the (R, n) buffer ``W`` between iterations and, with ``threads > 1``, splits the columns into
    that many ranges on a thread pool (the passes release the GIL).
    """

    def __init__(self, ZT: np.ndarray, n1: int, threads: int = 1) -> None:
        _rumie_jit = _jit_module()

        self._jit = _rumie_jit
        self.ZT = np.ascontiguousarray(ZT, dtype=np.float32)
        self.n1 = int(n1)
        self.n = int(self.ZT.shape[1])
        parts = max(1, min(int(threads), self.n // _rumie_jit.BLOCK))
        self.ranges = _block_aligned_ranges(self.n, self.n1, parts, _rumie_jit.BLOCK)
        self.W = np.empty((0, self.n), np.float32)
        self._pool: ThreadPoolExecutor | None = None

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], shape: tuple[int, ...]) -> np.ndarray:
        outs = [np.empty(shape) for _ in self.ranges]
        if len(self.ranges) == 1:
            fn(*args, outs[0], *self.ranges[0])
            return outs[0]
        if self._pool is None:  # one pool per fit: its idle threads end when the kernel is collected
            self._pool = ThreadPoolExecutor(len(self.ranges), thread_name_prefix="fairmon-rumie")
        list(self._pool.map(lambda i: fn(*args, outs[i], *self.ranges[i]), range(len(self.ranges))))
        return np.asarray(np.sum(outs, axis=0))

    def forward(self, thb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(W, sums)``: ``W = p (1 - p)`` (R, n) float32 (the held buffer: the next call overwrites
        it) and ``sums`` (R, 2) float64, the sum of ``p`` over the favourable rows and over the rest."""
        thb = np.ascontiguousarray(thb, dtype=np.float32)
        if self.W.shape[0] != thb.shape[0]:
            self.W = np.empty((thb.shape[0], self.n), np.float32)
        sums = self._run(self._jit.forward, (self.ZT, thb, self.n1, self.W), (thb.shape[0], 2))
        return self.W, sums

    def pullback(self, W: np.ndarray) -> np.ndarray:
        """``G`` (2, R, d+1) float64: ``W @ [Z, 1]`` over the favourable rows (``G[0]``) and the rest."""
        W = np.ascontiguousarray(W, dtype=np.float32)
        return self._run(self._jit.pullback, (self.ZT, W, self.n1), (2, W.shape[0], self.ZT.shape[0]))
