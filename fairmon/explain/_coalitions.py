"""KernelSHAP's coalition design: shap's enumerated sizes plus sampled subsets, per row.

The enumeration and weights follow ``shap.KernelExplainer`` (paired sizes enumerated while the
budget allows, the rest sampled by size with the kernel weight left over, duplicates merged);
:func:`coalition_design` is the one entry point, the rest are its vectorised parts.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

__all__ = ["coalition_design", "design_rank", "binom"]


def binom(n: int, k: int) -> float:
    return float(math.comb(n, k))



@lru_cache(maxsize=64)
def _fixed_part(M: int, nsamples: int) -> tuple[np.ndarray, np.ndarray, int, int, float, np.ndarray]:
    """Enumerated coalitions for (M, nsamples): masks, weights, #full sizes, samples left, weight left."""
    num_subset_sizes = int(np.ceil((M - 1) / 2.0))
    num_paired = int(np.floor((M - 1) / 2.0))
    weight_vector = np.array([(M - 1.0) / (i * (M - i)) for i in range(1, num_subset_sizes + 1)])
    weight_vector[:num_paired] *= 2
    weight_vector /= np.sum(weight_vector)
    num_full = 0
    left = nsamples
    remaining = weight_vector.copy()
    masks: list[np.ndarray] = []
    weights: list[float] = []
    for size in range(1, num_subset_sizes + 1):
        nsub = binom(M, size)
        if size <= num_paired:
            nsub *= 2
        if left * remaining[size - 1] / nsub >= 1.0 - 1e-8:
            num_full += 1
            left -= int(nsub)
            if remaining[size - 1] < 1.0:
                remaining /= 1 - remaining[size - 1]
            w = weight_vector[size - 1] / binom(M, size)
            if size <= num_paired:
                w /= 2.0
            for inds in itertools.combinations(range(M), size):
                m = np.zeros(M, dtype=bool)
                m[list(inds)] = True
                masks.append(m)
                weights.append(w)
                if size <= num_paired:
                    masks.append(~m)
                    weights.append(w)
        else:
            break
    mk = np.array(masks, dtype=bool).reshape(-1, M)
    return mk, np.array(weights), num_full, left, float(np.sum(weight_vector[num_full:])), weight_vector


def coalition_design(M: int, nsamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """shap's coalition sample for ``M`` players: masks (S, M) bool and kernel weights (S,).

    Example
    -------
    >>> masks, w = coalition_design(4, 14, np.random.default_rng(0))  # 2^4 - 2: full enumeration
    >>> masks.shape, round(float(w.sum()), 12)
    ((14, 4), 1.0)
    """
    fixed_m, fixed_w, num_full, samples_left, weight_left, wv = _fixed_part(M, nsamples)
    num_subset_sizes = len(wv)
    num_paired = int(np.floor((M - 1) / 2.0))
    if num_full == num_subset_sizes or samples_left <= 0:
        return fixed_m, fixed_w
    rwv = wv.copy()
    rwv[:num_paired] /= 2
    rwv = rwv[num_full:]
    rwv /= rwv.sum()
    total_draws = 4 * samples_left
    drawn_masks: list[np.ndarray] = []
    drawn_sizes: list[np.ndarray] = []
    drawn = 0
    chosen: np.ndarray | None = None
    while drawn < total_draws:
        n = min(max(samples_left, 64), total_draws - drawn)
        sizes = rng.choice(len(rwv), n, p=rwv) + num_full + 1
        drawn_masks.append(_random_subsets(sizes, M, rng))
        drawn_sizes.append(sizes)
        drawn += n
        allm = np.concatenate(drawn_masks)
        alls = np.concatenate(drawn_sizes)
        _, first, inverse = np.unique(_mask_keys(allm), return_index=True, return_inverse=True)
        is_new = first[inverse] == np.arange(len(alls))
        paired = alls <= num_paired
        add = np.where(is_new, np.where(paired, 2, 1), 0)
        cum = np.cumsum(add)
        hit = np.nonzero(cum >= samples_left)[0]
        if len(hit):
            chosen = np.arange(hit[0] + 1)
            break
    if chosen is None:
        chosen = np.arange(len(alls))
    inv = inverse[chosen]
    counts = np.bincount(inv, minlength=len(first)).astype(float)
    new_idx = chosen[is_new[chosen]]
    # new coalitions in draw order, each followed by its complement (paired sizes); only the last
    # coalition can lose its complement to the budget, since the cumulative count first reaches
    # samples_left there
    pn = paired[new_idx]
    before = np.concatenate([[0], np.cumsum(1 + pn)[:-1]])  # samples emitted before coalition k
    with_comp = pn & (before + 1 < samples_left)
    base = allm[new_idx]
    pairs = np.stack([base, ~base], axis=1)  # (k, 2, M): coalition, complement
    keep = np.stack([np.ones(len(new_idx), dtype=bool), with_comp], axis=1)
    rand_m = pairs[keep].reshape(-1, M)
    rand_w = np.repeat(counts[inv[new_idx]], 1 + with_comp.astype(int)).astype(float)
    rand_w *= weight_left / rand_w.sum()
    return np.concatenate([fixed_m, rand_m]), np.concatenate([fixed_w, rand_w])


def design_rank(masks: np.ndarray, weights: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The rank of each row's least-squares system as far as its design settles it.

    Per row 1 (full rank by construction), -1 (rank-deficient by count) or 0 (undecided: the
    numeric rank decides).

    Why: the numeric rank is an eigendecomposition per row (one solver call per row on CUDA above
    32 x 32), while most designs settle it by counting. KernelSHAP eliminates the last of the row's
    ``M`` varying columns, so coalition ``c`` gives the direction ``c - c_last`` on the other
    ``M - 1``; its entries lie in {0, 1} or in {-1, 0}, so two coalitions are parallel only when
    they are complements.

    * Full rank: every one of the ``M - 1`` columns has its singleton or the singleton's complement
      (a unit direction) with positive weight, as whenever shap's enumeration reaches size 1 (the
      ``"auto"`` budget).
    * Deficient: fewer distinct directions (coalitions less complement pairs) than ``M - 1``, as
      for a small budget over many columns (32 or 128 coalitions over ~100 columns).

    Parameters
    ----------
    masks : ndarray (R, S, W) bool
        Each row's coalitions over its own varying columns, padded with False.
    weights : ndarray (R, S)
        Kernel weights, 0 on padding.
    M : ndarray (R,)
        Varying columns per row (``<= W``).

    Examples
    --------
    >>> m, w = coalition_design(5, 30, np.random.default_rng(0))  # every size enumerated
    >>> few = m[[0, 1]]  # the singleton {0} and its complement: one direction for 4 columns
    >>> design_rank(np.stack([m, np.pad(few, ((0, 28), (0, 0)))]),
    ...             np.stack([w, np.pad(w[[0, 1]], (0, 28))]), np.array([5, 5])).tolist()
    [1, -1]
    """
    R, _, W = masks.shape
    M = np.asarray(M)
    pos = weights > 0
    size = masks.sum(axis=2)
    single = pos & (size == 1)
    co_single = pos & (size == (M[:, None] - 1))
    unit = (masks & single[:, :, None]).any(axis=1) | (~masks & co_single[:, :, None]).any(axis=1)
    full = (unit | (np.arange(W)[None, :] >= (M - 1)[:, None])).all(axis=1)
    out = np.where(full, 1, 0)
    rows = np.flatnonzero(~full)
    if len(rows):  # distinct coalitions less complement pairs, all undecided rows in one pass
        sub, live = masks[rows], pos[rows]
        inside = np.arange(W)[None, None, :] < M[rows][:, None, None]
        owner = np.broadcast_to(np.arange(len(rows))[:, None], live.shape)[live]
        keys = _row_mask_keys(owner, sub[live])
        uniq, first = np.unique(keys, return_index=True)
        paired = np.isin(_row_mask_keys(owner, (~sub & inside)[live])[first], uniq)
        directions = np.bincount(owner[first], minlength=len(rows)) - np.bincount(
            owner[first], weights=paired, minlength=len(rows)) / 2
        out[rows[directions < M[rows] - 1]] = -1
    return out


def _row_mask_keys(owner: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """One key per (owning row, coalition mask): :func:`_mask_keys` of the row's 32 bits and the mask."""
    bits = np.unpackbits(owner.astype(">u4").view(np.uint8).reshape(-1, 4), axis=1).astype(bool)
    return _mask_keys(np.concatenate([bits, masks], axis=1))


def _random_subsets(sizes: np.ndarray, M: int, rng: np.random.Generator) -> np.ndarray:
    """(n, M) bool: row i is a uniformly random subset of ``sizes[i]`` of the M columns (shap:
    ``np.random.permutation(M)[:size]``).

    The subset is the ``size`` columns with the smallest of M random 32-bit keys, i.e. the first
    ``size`` of the keys' argsort. Found by one sort of the keys and a threshold at the ``size``-th
    smallest (several times cheaper than an argsort per draw); a draw whose threshold key is tied
    (probability ~M^2 / 2^33) takes the argsort itself, so the subsets are exactly those of the
    argsort.
    """
    keys = rng.integers(0, 2**32, size=(len(sizes), M), dtype=np.uint32)
    srt = np.sort(keys, axis=1)
    at = np.arange(len(sizes))
    kth = srt[at, sizes - 1]
    out = keys <= kth[:, None]
    tied = np.flatnonzero(srt[at, np.minimum(sizes, M - 1)] == kth) if M > 1 else np.zeros(0, int)
    tied = tied[sizes[tied] < M]
    if len(tied):
        out[tied] = np.argsort(keys[tied], axis=1) < sizes[tied, None]
    return np.asarray(out, dtype=bool)


def _mask_keys(masks: np.ndarray) -> np.ndarray:
    """One sortable key per coalition mask (n, M): an unsigned integer when M <= 64, bytes otherwise."""
    packed = np.packbits(masks, axis=1)
    if packed.shape[1] <= 8:
        wide = np.zeros((len(masks), 8), dtype=np.uint8)
        wide[:, : packed.shape[1]] = packed
        return wide.view(np.uint64).ravel()
    packed = np.ascontiguousarray(packed)
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


