"""Fitting the stream's logistic-regression models and calibrating the label disadvantage to a DScore.

The knob of the stream is in DScore units of the *decisions* (:func:`decision_dscore`); the label
process is ``Bernoulli(sigmoid(f(x) - delta * member))``, and :func:`_calibrate` finds the ``delta``
whose retrained model's decisions reach a target DScore.
"""


from __future__ import annotations

import numpy as np
import pandas as pd

from fairmon.datasets._stream_spec import EDUCATION, ERR_CALIBRATION, FEATURE_COLUMNS
from fairmon.errors import DatasetError
from fairmon.registry import Model
from fairmon.schema import FeatureSchema

__all__ = ["decision_dscore"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def _base_logit(frame: pd.DataFrame) -> np.ndarray:
    """Creditworthiness score f(x) of the label model (independent of the planted attributes)."""
    edu = frame["education"].map({e: i for i, e in enumerate(EDUCATION)}).to_numpy(dtype=float)
    return np.asarray(
        0.6
        + 1.1 * (np.log(frame["income"].to_numpy()) - 3.8)
        - 4.0 * (frame["debt_ratio"].to_numpy() - 0.3)
        + 0.05 * np.minimum(frame["employment_years"].to_numpy(), 20.0)
        + 0.25 * (edu - 1.0)
    )


def _labels(frame: pd.DataFrame, membership: np.ndarray, u: np.ndarray, delta: float) -> np.ndarray:
    p = _sigmoid(_base_logit(frame) - delta * membership.astype(float))
    return (u < p).astype(np.int64)


def decision_dscore(decisions: np.ndarray, membership: np.ndarray) -> float:
    """DScore = P(fav | not member) - P(fav | member) of 0/1 decisions (fav = 1).

    >>> decision_dscore(np.array([1, 1, 0, 1]), np.array([False, False, True, True]))
    0.5
    """
    d = np.asarray(decisions, dtype=float)
    m = np.asarray(membership, dtype=bool)
    if m.all() or not m.any():
        raise DatasetError("DScore needs members and non-members")
    return float(d[~m].mean() - d[m].mean())


def _fit_schema(frame: pd.DataFrame) -> FeatureSchema:
    return FeatureSchema.fit(
        frame[list(FEATURE_COLUMNS)], categorical=("region", "education", "student", "branch")
    )


def _fit_model(frame: pd.DataFrame, labels: np.ndarray, schema: FeatureSchema) -> Model:
    from sklearn.linear_model import LogisticRegression  # heavy: loaded when a model is fitted

    Z = schema.transform(frame[list(FEATURE_COLUMNS)])
    est = LogisticRegression(C=1.0, solver="newton-cg", max_iter=500).fit(Z, labels)
    return Model(est, schema, framework="sklearn", input="encoded")


def _calibrate(
    train: pd.DataFrame,
    train_member: np.ndarray,
    train_u: np.ndarray,
    target_Z: np.ndarray,
    target_member: np.ndarray,
    schema: FeatureSchema,
    target: float,
    tolerance: float,
    max_iter: int = 30,
) -> tuple[float, Model, float]:
    """Find the label disadvantage ``delta`` whose trained model's decision DScore hits ``target``.

    Labels are redrawn from the same uniforms for every ``delta`` (common random numbers), so the
    decision DScore is monotone in ``delta`` up to solver noise; an Illinois regula-falsi search on
    ``[-1, 2]`` logits (widened once to ``[-4, 6]`` when needed) finds it in a handful of fits. Returns ``(delta, model, dscore)``.
    """

    def run(delta: float) -> tuple[float, Model]:
        model = _fit_model(train, _labels(train, train_member, train_u, delta), schema)
        return decision_dscore(model.predict_encoded(target_Z), target_member), model

    lo, hi = -1.0, 2.0  # typical targets (DScore 0..0.3) need delta in about [-0.5, 1.2]
    d_lo, m_lo = run(lo)
    d_hi, m_hi = run(hi)
    if target < d_lo:  # widen to the left once
        hi, d_hi, m_hi = lo, d_lo, m_lo
        lo = -4.0
        d_lo, m_lo = run(lo)
    elif target > d_hi:  # widen to the right once
        lo, d_lo, m_lo = hi, d_hi, m_hi
        hi = 6.0
        d_hi, m_hi = run(hi)
    if not d_lo - tolerance <= target <= d_hi + tolerance:
        raise DatasetError(ERR_CALIBRATION.format(target=target, low=d_lo, high=d_hi))
    best = (lo, m_lo, d_lo) if abs(d_lo - target) <= abs(d_hi - target) else (hi, m_hi, d_hi)
    f_lo, f_hi, side = d_lo - target, d_hi - target, 0
    for _ in range(max_iter):
        if abs(best[2] - target) <= tolerance:
            break
        # Illinois variant of regula falsi: secant steps that keep the root bracketed
        mid = lo - f_lo * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        d_mid, m_mid = run(mid)
        if abs(d_mid - target) < abs(best[2] - target):
            best = (mid, m_mid, d_mid)
        f_mid = d_mid - target
        if f_mid < 0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2.0
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2.0
            side = 1
    return best
