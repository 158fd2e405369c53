"""GESD's arithmetic: perturbations, per-instance stability, the group disparity and its tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fairmon.explain._gesd_result import GroupStability, PairwiseTest

__all__ = ["perturb", "stability_scores", "group_disparity", "noise_floor"]


def perturb(
    Z: np.ndarray,
    *,
    n_perturbations: int,
    sigma: float,
    mask_prob: float,
    baseline: float | np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """GESD perturbations of every row: Gaussian noise, then masking to the baseline.

    Returns ``(m, N, d)``: ``x + eps`` with ``eps ~ N(0, sigma^2 I)``, each position then replaced by
    ``baseline`` with probability ``mask_prob`` (Algorithm 1, lines 10-13; the reference code's
    order).

    Example
    -------
    >>> P = perturb(np.ones((2, 3)), n_perturbations=4, sigma=0.0, mask_prob=0.0, baseline=0.0,
    ...             rng=np.random.default_rng(0))
    >>> P.shape, float(P.min())
    ((2, 4, 3), 1.0)
    """
    Z = np.asarray(Z, dtype=float)
    m, d = Z.shape
    noisy = Z[:, None, :] + rng.normal(0.0, sigma, size=(m, n_perturbations, d))
    mask = rng.random((m, n_perturbations, d)) < mask_prob
    base = np.broadcast_to(np.asarray(baseline, dtype=float), (d,))
    return np.where(mask, base[None, None, :], noisy)


def stability_scores(E: np.ndarray, E_perturbed: np.ndarray) -> np.ndarray:
    """Per-instance stability ``mean_i 1 / (1 + ||E(x) - E(x'_i)||_1)``: ``(m, d), (m, N, d) -> (m,)``.

    Example
    -------
    >>> stability_scores(np.zeros((1, 2)), np.ones((1, 3, 2))).tolist()
    [0.3333333333333333]
    """
    dist = np.abs(E[:, None, :] - E_perturbed).sum(axis=-1)
    return np.asarray((1.0 / (1.0 + dist)).mean(axis=1))


def group_disparity(group_means: Sequence[float]) -> float:
    """GESD of group means: ``|S_0 - S_1|`` for two groups, population variance for ``K > 2``.

    Example
    -------
    >>> round(group_disparity([0.9, 0.7]), 6), round(group_disparity([0.9, 0.7, 0.8]), 6)
    (0.2, 0.006667)
    """
    s = np.asarray(list(group_means), dtype=float)
    if len(s) < 2:
        return float("nan")
    if len(s) == 2:
        return float(abs(s[0] - s[1]))
    return float(np.mean((s - s.mean()) ** 2))


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    k = len(p)
    adj = np.empty(k)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p[idx]))
        adj[idx] = running
    return adj


def _pairwise_tests(
    stab: np.ndarray, grp: np.ndarray, groups: Sequence[Any]
) -> tuple[tuple[PairwiseTest, ...], float]:
    from scipy.stats import mannwhitneyu

    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    if not pairs:
        return (), float("nan")
    stats, ps = [], []
    for a, b in pairs:
        xa, xb = stab[grp == a], stab[grp == b]
        if np.ptp(np.concatenate([xa, xb])) == 0.0:
            stats.append(len(xa) * len(xb) / 2.0)  # all values tied: no evidence of a difference
            ps.append(1.0)
            continue
        res = mannwhitneyu(xa, xb, alternative="two-sided")
        stats.append(float(res.statistic))
        ps.append(float(res.pvalue))
    p_arr = np.asarray(ps)
    adj = _holm(p_arr)
    tests = tuple(
        PairwiseTest(a, b, u, p, pa) for (a, b), u, p, pa in zip(pairs, stats, p_arr.tolist(), adj.tolist())
    )
    return tests, float(adj.min())



def _split_stability(A: np.ndarray, m: int, n: int, d: int) -> np.ndarray:
    return stability_scores(A[:m], A[m:].reshape(m, n, d))


def _summarise(
    stab: np.ndarray, gs: np.ndarray, g_all: np.ndarray, labels: list[Any], min_group_size: int
) -> tuple[list[GroupStability], float, tuple[PairwiseTest, ...], float, str]:
    out: list[GroupStability] = []
    for lab in labels:
        s = stab[gs == lab]
        out.append(
            GroupStability(
                group=lab,
                size=int(len(s)),
                population=int(np.sum(g_all == lab)),
                stability=float(s.mean()),
                std=float(s.std(ddof=1)) if len(s) > 1 else float("nan"),
                sufficient=bool(len(s) >= min_group_size),
            )
        )
    ok = [r.group for r in out if r.sufficient]
    if len(ok) < 2:
        status = f"insufficient: {len(ok)} group(s) with at least {min_group_size} sampled rows"
        return out, float("nan"), (), float("nan"), status
    value = group_disparity([r.stability for r in out if r.sufficient])
    pairwise, p_value = _pairwise_tests(stab, gs, ok)
    status = "ok" if len(ok) == len(out) else "ok (insufficient groups left out)"
    return out, value, pairwise, p_value, status




def noise_floor(
    stab: np.ndarray,
    gs: np.ndarray,
    groups: Sequence[Any],
    *,
    n_permutations: int,
    quantile: float,
    rng: np.random.Generator,
) -> float:
    """The ``quantile`` of GESD under a permutation null over the group labels (nan when disabled).

    Why: a GESD value is the disparity of means over a few dozen noisy per-instance stabilities, so it
    is positive even when the groups are exchangeable. Permuting the labels of the sampled rows of the
    ``groups`` (the sufficient ones, the value's groups) over the *same* per-instance stabilities gives
    GESD's distribution at the configured sample size when the groups do not matter, at no extra
    explainer cost (the explanations are not recomputed). A value at or below the floor is noise.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(0.5, 1.0, 100); g = np.repeat(["a", "b"], 50)
    >>> floor = noise_floor(s, g, ["a", "b"], n_permutations=500, quantile=0.95, rng=rng)
    >>> bool(0.0 < floor < 0.1)
    True
    """
    if n_permutations < 1 or len(groups) < 2:
        return float("nan")
    labels = list(groups)
    keep = np.array([x in labels for x in gs.tolist()], dtype=bool)
    values = stab[keep]
    codes = np.array([labels.index(x) for x in gs[keep].tolist()], dtype=np.int64)
    k = len(labels)
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    perm = np.argsort(rng.random((n_permutations, len(codes))), axis=1)
    permuted = codes[perm]  # (P, n): a uniformly random relabelling with the group sizes kept
    sums = np.stack([(values * (permuted == j)).sum(axis=1) for j in range(k)], axis=1)
    means = sums / sizes
    if k == 2:
        null = np.abs(means[:, 0] - means[:, 1])
    else:
        null = ((means - means.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
    return float(np.quantile(null, quantile))
