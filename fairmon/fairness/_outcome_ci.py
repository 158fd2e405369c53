"""Bootstrap intervals of the outcome metrics: per-group percentile, disparity max-t simultaneous.

Why a simultaneous interval for a disparity: ``max - min`` over noisy group rates is biased upward
(every group's noise pushes the maximum up and the minimum down), and the percentile interval of the
bootstrap ``max - min`` inherits the bias: with true disparity 0 its lower bound is above 0 in every
window (coverage 0), and with five groups of 4 %-60 % of the rows and disparity 0.10 it covered 0.89
(DP) and 0.80 (EOP) instead of 0.95. A disparity is the largest absolute pairwise difference,
``D = max_{i<j} |p_i - p_j|``. The max-t bootstrap (bootstrap-t) gives intervals ``d_ij ± c·se_ij``
that hold for *all* pairs at once with probability ``confidence``: ``se_ij`` is the binomial
standard error of the difference (from the smoothed rates ``(x + 0.5) / (n + 1)``, so it is never
0) and ``c`` the ``confidence`` quantile of ``max_ij |d*_ij - d_ij| / se*_ij`` over the replicates,
each replicate studentized by its own standard error (which keeps small groups, whose standard
error moves with their rate, at the nominal level). Whenever they all hold, ``D`` lies in
``[max_ij lower|d_ij|, max_ij upper|d_ij|]`` (lower ``|d|`` is 0 when the pair's interval contains 0),
so the derived interval covers at least at the simultaneous level, reaches 0 at zero disparity, and
always contains the point value. With two
groups it is the usual studentized interval of ``|p_a - p_b|``. Equalized odds takes the TPR and
FPR pairs together in one family; the ratio ``min / max = exp(-max_ij |log p_i - log p_j|)`` is the
same construction on log rates (a replicate rate of 0 is floored at ``0.5 / n`` of its group; when an
observed rate is 0 the ratio falls back to the percentile interval of the replicate ratio).

The critical value ``c`` is never below the pointwise normal quantile ``z_{(1 + confidence) / 2}``:
a simultaneous interval is at least as wide as each pair's own. Why: a group whose observed rate is 0
or 1 has bootstrap replicates that never move, so its pairs contributed ``t* ≈ 0`` and ``c`` fell
to ~0.2 — a 0/30 group beside 150/5,000 got a DP difference interval of [0.025, 0.035] and, with no
disparity at all (both rates 0.03), intervals excluding 0 in 41% of windows (coverage 0.59; with 20
rows 0.46). With the floor the pair's smoothed standard error carries its uncertainty. With many
groups the max-t ``c`` is above the floor and nothing changes. The smoothed standard error alone is
still too small at a count of 0 (0/50 beside a 3% rate: an interval excluding 0 in 19% of windows
with no disparity), so each pair's interval also holds Newcombe's hybrid score interval of the
difference at the same ``c`` (Wilson bounds of both rates; :func:`_newcombe_pairs`): it only widens an
interval, and is about the bootstrap-t's width for groups with a few dozen events. The ratio with an observed rate of 0
is 0, and its interval is ``[0, exp(-lower)]`` from the same construction on the rates floored at
``0.5 / n`` (it was the percentile interval of the replicate ratio: ``[0, 0]``); with every rate 0
it is ``[0, 1]`` (no favourable decision: every ratio is consistent with the window).
Per-group rates (:func:`wilson_ci`) get the Wilson score interval, not the bootstrap percentile:
a 0/30 group's percentile interval is ``[0, 0]``, its Wilson interval ``[0, 0.114]``.

A replicate in which a rate of the statistic is undefined (no positives or negatives drawn in a
group) is skipped for that statistic and counted (``n_skipped``); a simultaneous interval needs
:data:`MIN_DEFINED_REPLICATES` defined replicates (NaN bounds otherwise).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

__all__ = [
    "rates", "percentile_ci", "max_t_critical", "wilson_bounds", "wilson_ci", "spread", "binomial_se", "simultaneous_spread_ci",
    "simultaneous_ratio_ci", "MIN_DEFINED_REPLICATES",
]

#: fewest defined bootstrap replicates an interval is computed from
MIN_DEFINED_REPLICATES = 20


def rates(cells: np.ndarray) -> tuple[Any, Any, Any]:
    """TPR, FPR, FNR from cell counts (last axis TP, FP, FN, TN); NaN where undefined."""
    tp, fp, fn, tn = (cells[..., i].astype(np.float64) for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        pos = tp + fn
        neg = fp + tn
        tpr = np.where(pos > 0, tp / np.where(pos > 0, pos, 1), np.nan)
        fpr = np.where(neg > 0, fp / np.where(neg > 0, neg, 1), np.nan)
        fnr = np.where(pos > 0, fn / np.where(pos > 0, pos, 1), np.nan)
    return tpr, fpr, fnr


def percentile_ci(samples: np.ndarray | None, confidence: float) -> tuple[float, float, int]:
    """Percentile interval of the finite replicates and the number of skipped (undefined) ones.

    >>> lo, hi, skipped = percentile_ci(np.r_[np.linspace(0, 1, 101), np.nan], 0.9)
    >>> round(lo, 3), round(hi, 3), skipped
    (0.05, 0.95, 1)
    """
    if samples is None:
        return float("nan"), float("nan"), 0
    finite = samples[np.isfinite(samples)]
    skipped = int(samples.size - finite.size)
    if finite.size == 0:
        return float("nan"), float("nan"), skipped
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [tail, 100.0 - tail])
    return float(lo), float(hi), skipped


def max_t_critical(t_max: np.ndarray, confidence: float) -> float:
    """The ``confidence`` quantile of the replicates' largest studentized deviation, never below the
    pointwise normal quantile (a simultaneous interval is at least as wide as each member's own).

    >>> round(max_t_critical(np.zeros(100), 0.95), 2)
    1.96
    """
    return max(float(np.quantile(t_max, confidence)), NormalDist().inv_cdf((1.0 + confidence) / 2.0))


def wilson_bounds(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds of the rates ``x / n`` at the normal quantile ``z`` (NaN where ``n`` is 0)."""
    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    ok = n > 0
    return np.where(ok, np.maximum(centre - half, 0.0), np.nan), np.where(ok, np.minimum(centre + half, 1.0), np.nan)


def wilson_ci(x: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson score interval of a rate ``x / n`` (NaN when ``n`` is 0).

    Chosen for per-group rates because it keeps its coverage at small ``n`` and at rates of 0 and 1,
    where the bootstrap percentile interval is ``[0, 0]`` (Brown, Cai & DasGupta 2001, *Interval
    estimation for a binomial proportion*).

    >>> [round(v, 3) for v in wilson_ci(0, 30, 0.95)]
    [0.0, 0.114]
    """
    lo, hi = wilson_bounds(np.array([x]), np.array([n]), NormalDist().inv_cdf((1.0 + confidence) / 2.0))
    return float(lo[0]), float(hi[0])


def spread(values: np.ndarray, kind: Literal["difference", "ratio"]) -> np.ndarray:
    """max − min (or min / max) along axis 0; NaN where any group's value is NaN; 0/0 ratio is 1.

    A NaN propagates on purpose: a replicate with an undefined group rate is undefined for the
    disparity (and skipped), not a disparity over the remaining groups.

    >>> spread(np.array([[0.2, 0.5], [0.6, np.nan]]), "difference").round(3).tolist()
    [0.4, nan]
    """
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hi = np.max(values, axis=0)
        lo = np.min(values, axis=0)
    if kind == "difference":
        return np.asarray(hi - lo)
    safe = np.where(hi > 0, hi, 1.0)
    return np.asarray(np.where(hi > 0, lo / safe, np.where(np.isnan(hi), np.nan, 1.0)))


def binomial_se(x: np.ndarray, n: np.ndarray, *, log: bool = False) -> np.ndarray:
    """Standard error of a rate ``x / n`` (or of its log) from the smoothed rate ``(x + 0.5) / (n + 1)``.

    Smoothing keeps it positive at rates 0 and 1; NaN where ``n`` is 0.

    >>> binomial_se(np.array([20.0]), np.array([100.0])).round(4).tolist()
    [0.0402]
    """
    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (x + 0.5) / (n + 1.0)
        var = (1.0 - p) / (n * p) if log else p * (1.0 - p) / n
    return np.asarray(np.where(n > 0, np.sqrt(var), np.nan))


def simultaneous_spread_ci(
    points: Sequence[np.ndarray],
    boots: Sequence[np.ndarray],
    confidence: float,
    point_se: Sequence[np.ndarray] | None = None,
    boot_se: Sequence[np.ndarray] | None = None,
    counts: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
) -> tuple[float, float, int]:
    """Interval of ``max over families of (max - min)`` from max-t simultaneous pairwise intervals.

    ``points[f]`` holds the K group values of family ``f`` (e.g. TPRs), ``boots[f]`` their replicates
    ``(K, B)``. With ``point_se``/``boot_se`` (the groups' standard errors, observed ``(K,)`` and per
    replicate ``(K, B)``) the pairs are studentized per replicate (bootstrap-t, second-order
    accurate for small groups); without, by the bootstrap standard deviation. With ``counts`` (each
    family's successes and trials per group, the points being their rates) each pair's interval is
    widened to hold Newcombe's hybrid score interval of the difference at the same critical value.
    Returns ``(low, high, n_skipped)``; see the module docstring for the method.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = np.array([0.30, 0.30]); b = rng.binomial(500, 0.30, size=(2, 1000)) / 500
    >>> lo, hi, skipped = simultaneous_spread_ci([p], [b], 0.95)
    >>> lo, round(hi, 2), skipped
    (0.0, 0.06, 0)
    """
    d_hat_parts, d_star_parts, se_parts, se_star_parts = [], [], [], []
    for f, (p, b) in enumerate(zip(points, boots, strict=True)):
        i, j = np.triu_indices(len(p), k=1)
        d_hat_parts.append(p[i] - p[j])
        d_star_parts.append(b[i] - b[j])
        if point_se is not None and boot_se is not None:
            se_parts.append(np.hypot(point_se[f][i], point_se[f][j]))
            se_star_parts.append(np.hypot(boot_se[f][i], boot_se[f][j]))
    d_hat = np.concatenate(d_hat_parts)
    d_star = np.concatenate(d_star_parts, axis=0)
    defined = np.isfinite(d_star).all(axis=0)
    skipped = int(defined.size - defined.sum())
    if defined.sum() < MIN_DEFINED_REPLICATES or d_hat.size == 0:
        return float("nan"), float("nan"), skipped
    d_star = d_star[:, defined]
    if se_parts:
        se = np.concatenate(se_parts)
        se_star = np.concatenate(se_star_parts, axis=0)[:, defined]
    else:
        se = d_star.std(axis=1, ddof=1)
        se_star = np.broadcast_to(se[:, None], d_star.shape)
    dev = np.abs(d_star - d_hat[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se_star > 0, dev / np.where(se_star > 0, se_star, 1.0), 0.0)
    c = max_t_critical(t.max(axis=0), confidence)
    lo_pair, hi_pair = d_hat - c * se, d_hat + c * se
    if counts is not None:
        lo_nc, hi_nc = _newcombe_pairs(counts, c)
        lo_pair, hi_pair = np.minimum(lo_pair, lo_nc), np.maximum(hi_pair, hi_nc)
    abs_lo = np.maximum(np.maximum(lo_pair, -hi_pair), 0.0)
    abs_hi = np.maximum(np.abs(lo_pair), np.abs(hi_pair))
    return float(abs_lo.max()), float(abs_hi.max()), skipped


def _newcombe_pairs(counts: Sequence[tuple[np.ndarray, np.ndarray]], z: float) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval (his method 10) of every pair ``p_i - p_j``, in the pair order of
    :func:`simultaneous_spread_ci`: ``d ∓ sqrt((p_i - l_i)² + (u_j - p_j)²)`` with Wilson bounds at ``z``
    (Newcombe 1998, *Interval estimation for the difference between independent proportions*)."""
    los, his = [], []
    for x, n in counts:
        p = np.asarray(x, dtype=np.float64) / np.asarray(n, dtype=np.float64)
        lo, hi = wilson_bounds(x, n, z)
        i, j = np.triu_indices(len(p), k=1)
        d = p[i] - p[j]
        los.append(d - np.hypot(p[i] - lo[i], hi[j] - p[j]))
        his.append(d + np.hypot(hi[i] - p[i], p[j] - lo[j]))
    return np.concatenate(los), np.concatenate(his)


def simultaneous_ratio_ci(
    point: np.ndarray, boot: np.ndarray, sizes: np.ndarray, confidence: float
) -> tuple[float, float, int]:
    """Interval of ``min / max`` of group rates: the max-t construction on log rates.

    ``sizes`` are the groups' row counts (a rate of 0 is floored at ``0.5 / n``). When an observed rate
    is 0 the ratio is 0 and the interval ``[0, exp(-lower)]``; with every rate 0 it is ``[0, 1]``.

    >>> rng = np.random.default_rng(0)
    >>> b = rng.binomial(400, [[0.5], [0.25]], size=(2, 1000)) / 400
    >>> lo, hi, _ = simultaneous_ratio_ci(np.array([0.5, 0.25]), b, np.array([400, 400]), 0.95)
    >>> bool(lo < 0.5 < hi <= 1.0)
    True
    """
    if (point <= 0).all():
        return 0.0, 1.0, 0
    n = sizes.astype(np.float64)
    logs = np.log(np.maximum(boot, (0.5 / n)[:, None]))
    se = binomial_se(point * n, n, log=True)
    se_star = binomial_se(boot * n[:, None], n[:, None], log=True)
    lo, hi, skipped = simultaneous_spread_ci([np.log(np.maximum(point, 0.5 / n))], [logs], confidence, [se],
                                             [se_star])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return float("nan"), float("nan"), skipped
    low = 0.0 if (point <= 0).any() else float(np.exp(-hi))  # the ratio itself is 0 then
    return low, float(min(1.0, np.exp(-lo))), skipped
