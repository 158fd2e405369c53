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

__all__ = ["coalition_design", "binom"]


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


