"""Utility and outcome-fairness numbers FEU reports for a trained candidate.

* AUC of P(class 1) (threshold-free), F1 of the thresholded labels;
* DP difference: largest minus smallest selection rate ``P(yhat = 1 | s = g)`` over groups
  (fairlearn's ``demographic_parity_difference``, which the reference code uses);
* EOD: fairlearn's ``equalized_odds_difference``: the larger of the between-group ranges of the true
  positive rate and of the false positive rate. A group without positives (negatives) has no TPR
  (FPR) and is skipped for that rate.

Example
-------
>>> import numpy as np
>>> y = np.array([1, 0, 1, 0]); yhat = np.array([1, 0, 0, 0]); s = np.array(["a", "a", "b", "b"])
>>> dp_difference(yhat, s), eod_difference(y, yhat, s)
(0.5, 1.0)
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "dp_difference",
    "eod_difference",
    "auc",
    "f1",
    "balanced_accuracy",
    "outcome_metrics",
    "decision_metrics",
]


def dp_difference(yhat: np.ndarray, s: np.ndarray) -> float:
    """Demographic-parity difference: range of the groups' selection rates.

    Examples
    --------
    >>> dp_difference(np.array([1, 1, 0, 1]), np.array([0, 0, 1, 1]))
    0.5
    """
    yhat = np.asarray(yhat)
    rates = [float(yhat[s == g].mean()) for g in np.unique(s)]
    return float(max(rates) - min(rates)) if rates else 0.0


def eod_difference(y: np.ndarray, yhat: np.ndarray, s: np.ndarray) -> float:
    """Equalized-odds difference: max of the TPR range and the FPR range over groups.

    Examples
    --------
    >>> eod_difference(np.array([1, 1, 1, 1]), np.array([1, 0, 1, 1]), np.array([0, 0, 1, 1]))
    0.5
    """
    y, yhat = np.asarray(y), np.asarray(yhat)
    out = 0.0
    for label in (1, 0):
        rates = []
        for g in np.unique(s):
            sel = (s == g) & (y == label)
            if sel.any():
                rates.append(float(yhat[sel].mean()))
        if len(rates) >= 2:
            out = max(out, max(rates) - min(rates))
    return float(out)


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC; 0.5 when only one class is present (undefined otherwise)."""
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y)
    if len(np.unique(y)) < 2:
        return 0.5
    return float(roc_auc_score(y, score))


def f1(y: np.ndarray, yhat: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y, yhat, zero_division=0))


def balanced_accuracy(y: np.ndarray, yhat: np.ndarray) -> float:
    """Mean of the true-positive and true-negative rates (0.5 for a constant predictor).

    >>> balanced_accuracy(np.array([1, 1, 0, 0]), np.array([1, 1, 1, 1]))
    0.5
    """
    y, yhat = np.asarray(y), np.asarray(yhat)
    rates = [float((yhat[y == c] == c).mean()) for c in (0, 1) if np.any(y == c)]
    return float(np.mean(rates)) if rates else 0.5


def outcome_metrics(y: np.ndarray, proba: np.ndarray, s: np.ndarray, threshold: float | np.ndarray) -> dict[str, float]:
    """AUC, balanced accuracy, accuracy, F1, DP, EOD and positive rate at ``threshold`` (or one per row).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sorted(outcome_metrics(rng.integers(0, 2, 40), rng.uniform(size=40), rng.integers(0, 2, 40), 0.5))
    ['accuracy', 'auc', 'balanced_accuracy', 'dp', 'eod', 'f1', 'selection_rate']
    """
    yhat = (np.asarray(proba) >= threshold).astype(int)
    return decision_metrics(y, yhat, s) | {"auc": auc(y, proba)}


def decision_metrics(y: np.ndarray, yhat: np.ndarray, s: np.ndarray) -> dict[str, float]:
    """The threshold-dependent metrics of 0/1 decisions (AUC needs scores: :func:`outcome_metrics`)."""
    y, yhat = np.asarray(y), np.asarray(yhat).astype(int)
    return {
        "balanced_accuracy": balanced_accuracy(y, yhat),
        "accuracy": float((yhat == y).mean()),
        "f1": f1(y, yhat),
        "dp": dp_difference(yhat, s),
        "eod": eod_difference(y, yhat, s),
        "selection_rate": float(yhat.mean()),
    }
