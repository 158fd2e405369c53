"""Ground-truth faithfulness metrics PRA, RC, FA, RA, SA, SRA with OpenXAI's exact conventions.

Reference: ``openxai/metrics.py`` at HEAD (``pairwise_comp``, ``rankcorr``,
``eval_ground_truth_faithfulness``). Conventions copied on purpose, so values agree with the
reference to 1e-9 on identical inputs:

* importance is ``|attribution|``; ranks are *dense* ranks of ``-|·|`` (ties share a rank);
* the top-k features are ``argsort(-|·|)[:k]`` (numpy's default sort, so ties resolve as the
  reference resolves them); ``k`` is a fraction of ``d`` rounded up (``ceil(k·d)``, 1.0 = all
  features) or an integer count;
* FA = |top-k(E) ∩ top-k(G)| / k; SA additionally needs equal signs; RA needs the same feature at
  the same top-k position with the same dense rank; SRA needs RA and equal signs;
* FA/RA/SA/SRA flip the ground truth per row by the predicted label (``(2·pred − 1)·G``) — the
  reference explains each row's predicted class, whose direction is the negated class-1 direction
  for rows predicted 0; PRA/RC use ``|G|`` and are unaffected;
* RC is Pearson's correlation of the dense ranks (NaN for a constant row, as ``scipy.stats.pearsonr``);
* ``auc=True`` returns the area under the metric-vs-k curve for k = 1..max_k on the grid
  ``arange(max_k) / (max_k − 1)`` (trapezoids, as ``sklearn.metrics.auc``); with max_k = 1 the
  plain value.

The ground truth is one vector ``(d,)`` shared by all rows (e.g. logistic-regression weights) or a
matrix ``(n, d)`` with one row per instance (e.g. SynthGauss cluster masks).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from fairmon.errors import MethodError

__all__ = [
    "pra",
    "rc",
    "fa",
    "ra",
    "sa",
    "sra",
    "k_to_int",
    "dense_rank",
    "ERR_K",
    "ERR_GT_SHAPE",
    "ERR_PRED",
]

ERR_K = "k must be a fraction in (0, 1] of the {d} features or an integer count in [1, {d}], got {k!r}"
ERR_GT_SHAPE = "ground truth has shape {shape}; expected ({d},) or ({n}, {d}) for explanations of shape ({n}, {d})"
ERR_PRED = "predictions must be {n} labels in {{0, 1}} (one per explanation row), got shape {shape}"
ERR_EXPL = "explanations must be a finite 2-D matrix (rows x features), got {problem}"

_Kind = Literal["overlap", "rank", "sign", "ranksign"]


def k_to_int(k: float | int, d: int) -> int:
    """Top-k size: ``ceil(k·d)`` for a fraction ``k`` in (0, 1], or an integer count in [1, d].

    Examples
    --------
    >>> k_to_int(0.25, 8), k_to_int(3, 8)
    (2, 3)
    """
    if isinstance(k, bool):
        raise MethodError(ERR_K.format(d=d, k=k))
    if isinstance(k, (int, np.integer)):
        if 1 <= int(k) <= d:
            return int(k)
        raise MethodError(ERR_K.format(d=d, k=k))
    if isinstance(k, (float, np.floating)) and 0.0 < float(k) <= 1.0:
        return int(math.ceil(float(k) * d)) if float(k) < 1.0 else d
    raise MethodError(ERR_K.format(d=d, k=k))


def dense_rank(A: np.ndarray) -> np.ndarray:
    """Row-wise dense rank of ``-|A|`` (1 = largest magnitude; ties share a rank)."""
    from scipy.stats import rankdata

    return np.asarray(rankdata(-np.abs(A), method="dense", axis=-1))


def _check(E: np.ndarray, gt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    E = np.asarray(E, dtype=float)
    if E.ndim == 1:
        E = E.reshape(1, -1)
    if E.ndim != 2:
        raise MethodError(ERR_EXPL.format(problem=f"shape {E.shape}"))
    if not np.isfinite(E).all():
        raise MethodError(ERR_EXPL.format(problem=f"{int((~np.isfinite(E)).sum())} NaN/inf values"))
    n, d = E.shape
    G = np.asarray(gt, dtype=float)
    if G.shape == (d,):
        G = np.broadcast_to(G, (n, d))
    elif G.shape != (n, d):
        raise MethodError(ERR_GT_SHAPE.format(shape=G.shape, n=n, d=d))
    if not np.isfinite(G).all():
        raise MethodError("ground truth contains NaN or infinite values")
    return E, G


def _check_pred(pred: np.ndarray, n: int) -> np.ndarray:
    p = np.asarray(pred)
    if p.shape != (n,) or not np.isin(p, (0, 1)).all():
        raise MethodError(ERR_PRED.format(n=n, shape=p.shape))
    return p.astype(int)


def pra(explanations: np.ndarray, ground_truth: np.ndarray) -> np.ndarray:
    """Pairwise rank agreement per row: share of feature pairs ordered alike by |E| and |G|.

    Example
    -------
    >>> pra(np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]]), np.array([0.3, 0.2, 0.1])).tolist()
    [1.0, 0.0]
    """
    E, G = _check(explanations, ground_truth)
    d = E.shape[1]
    if d < 2:
        raise MethodError("PRA needs at least 2 features")
    rE, rG = dense_rank(E), dense_rank(G)
    iu = np.triu_indices(d, k=1)
    a = (rE[:, :, None] < rE[:, None, :])[:, iu[0], iu[1]]
    b = (rG[:, :, None] < rG[:, None, :])[:, iu[0], iu[1]]
    return np.asarray((a == b).sum(axis=1) / math.comb(d, 2))


def rc(explanations: np.ndarray, ground_truth: np.ndarray) -> np.ndarray:
    """Rank correlation per row: Pearson correlation of the dense ranks of |E| and |G| (NaN if constant).

    Example
    -------
    >>> rc(np.array([[3.0, 2.0, 1.0]]), np.array([0.1, 0.2, 0.3])).tolist()
    [-1.0]
    """
    E, G = _check(explanations, ground_truth)
    rE, rG = dense_rank(E).astype(float), dense_rank(G).astype(float)
    a = rE - rE.mean(axis=1, keepdims=True)
    b = rG - rG.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    num = (a * b).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.clip(out, -1.0, 1.0)


def _single_k(E: np.ndarray, G: np.ndarray, orderE: np.ndarray, orderG: np.ndarray,
              rE: np.ndarray, rG: np.ndarray, k: int, kind: _Kind) -> np.ndarray:
    n, d = E.shape
    tE, tG = orderE[:, :k], orderG[:, :k]
    if kind in ("overlap", "sign"):
        mE = np.zeros((n, d), dtype=bool)
        mG = np.zeros((n, d), dtype=bool)
        np.put_along_axis(mE, tE, True, axis=1)
        np.put_along_axis(mG, tG, True, axis=1)
        both = mE & mG
        if kind == "sign":
            both &= np.sign(E).astype(int) == np.sign(G).astype(int)
        return np.asarray(both.sum(axis=1) / k)
    same = tE == tG
    same &= np.take_along_axis(rE, tE, axis=1) == np.take_along_axis(rG, tG, axis=1)
    if kind == "ranksign":
        sE = np.take_along_axis(np.sign(E).astype(int), tE, axis=1)
        sG = np.take_along_axis(np.sign(G).astype(int), tG, axis=1)
        same &= sE == sG
    return np.asarray(same.sum(axis=1) / k)


def _agreement(explanations: np.ndarray, ground_truth: np.ndarray, predictions: np.ndarray,
               k: float | int, auc: bool, kind: _Kind) -> np.ndarray:
    E, G = _check(explanations, ground_truth)
    n, d = E.shape
    pred = _check_pred(predictions, n)
    G = (pred * 2 - 1)[:, None] * G
    max_k = k_to_int(k, d)
    orderE = np.argsort(-np.abs(E), axis=1)
    orderG = np.argsort(-np.abs(G), axis=1)
    rE, rG = dense_rank(E), dense_rank(G)
    if auc and max_k > 1:
        vals = np.array([_single_k(E, G, orderE, orderG, rE, rG, kk, kind) for kk in range(1, max_k + 1)])
        x = np.arange(max_k) / (max_k - 1)
        return np.asarray(np.trapezoid(vals, x, axis=0))
    return _single_k(E, G, orderE, orderG, rE, rG, max_k, kind)


def fa(explanations: np.ndarray, ground_truth: np.ndarray, predictions: np.ndarray, *,
       k: float | int = 0.25, auc: bool = False) -> np.ndarray:
    """Feature agreement per row: share of the top-k features of E that are top-k in the ground truth.

    Example
    -------
    >>> E = np.array([[0.9, 0.1, 0.5, 0.0]])
    >>> fa(E, np.array([1.0, 0.0, 0.0, 2.0]), np.array([1]), k=0.5).tolist()
    [0.5]
    """
    return _agreement(explanations, ground_truth, predictions, k, auc, "overlap")


def ra(explanations: np.ndarray, ground_truth: np.ndarray, predictions: np.ndarray, *,
       k: float | int = 0.25, auc: bool = False) -> np.ndarray:
    """Rank agreement per row: top-k positions holding the same feature with the same dense rank.

    Examples
    --------
    >>> E = np.array([[0.9, 0.1, 0.5, 0.0]])
    >>> ra(E, np.array([1.0, 0.0, 0.0, 2.0]), np.array([1]), k=0.5).tolist()
    [0.0]
    """
    return _agreement(explanations, ground_truth, predictions, k, auc, "rank")


def sa(explanations: np.ndarray, ground_truth: np.ndarray, predictions: np.ndarray, *,
       k: float | int = 0.25, auc: bool = False) -> np.ndarray:
    """Sign agreement per row: shared top-k features whose signs agree with the flipped ground truth.

    Examples
    --------
    >>> E = np.array([[0.9, 0.1, 0.5, 0.0]])
    >>> sa(E, np.array([1.0, 0.0, 0.0, 2.0]), np.array([1]), k=0.5).tolist()
    [0.5]
    """
    return _agreement(explanations, ground_truth, predictions, k, auc, "sign")


def sra(explanations: np.ndarray, ground_truth: np.ndarray, predictions: np.ndarray, *,
        k: float | int = 0.25, auc: bool = False) -> np.ndarray:
    """Signed rank agreement per row: RA with matching signs.

    Examples
    --------
    >>> E = np.array([[0.9, 0.1, 0.5, 0.0]])
    >>> sra(E, np.array([1.0, 0.0, 0.0, 2.0]), np.array([1]), k=0.5).tolist()
    [0.0]
    """
    return _agreement(explanations, ground_truth, predictions, k, auc, "ranksign")
