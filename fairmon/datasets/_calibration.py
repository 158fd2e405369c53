"""Fitting the stream's logistic-regression models and calibrating the label disadvantage to a DScore.

The knob of the stream is in DScore units of the *decisions* (:func:`decision_dscore`); the label
process is ``Bernoulli(sigmoid(f(x) - delta * member))``, and :func:`_calibrate` finds the ``delta``
whose retrained model's decisions reach a target DScore.

Two choices make the planted group what the models actually do (issue 17), so the demo's RUMIE
evidence can name it:

* the creditworthiness score ``f`` (:func:`_base_logit`) does not depend on the planted attributes,
  not even through a legitimate feature strongly correlated with them: employment years (which grow
  with age) are a model feature but not in ``f``. With them in ``f`` young applicants were
  legitimately less creditworthy, and the most discriminated group by DScore (which cannot tell a
  legitimate difference from an unfair one) mixed that gradient in: ``age <= 38 ...`` instead of
  ``age <= 30``, even before the drift;
* the models see age in the bands of a credit scorecard (:data:`AGE_BANDS`: up to 25, 26-30, 31-40,
  41-50, 51-60, over 60, one indicator each, beside the standardised age), so a model trained on labels
  that disfavour ``age <= 30`` can learn that step; a model linear in age turns it into a slope, and
  the best group within the bounds is then a different age cut.
"""


from __future__ import annotations

import numpy as np
import pandas as pd

from fairmon.datasets._stream_spec import EDUCATION, ERR_CALIBRATION, FEATURE_COLUMNS, PLANTED_AGE_MAX
from fairmon.errors import DatasetError
from fairmon.registry import Model
from fairmon.schema import FeatureSchema

__all__ = ["decision_dscore", "AGE_BANDS"]

#: upper edges (inclusive, years) of the models' age bands; the last band is open. The planted cut
#: :data:`~fairmon.datasets._stream_spec.PLANTED_AGE_MAX` is one of the edges (a scorecard band edge).
AGE_BANDS: tuple[int, ...] = (25, PLANTED_AGE_MAX, 40, 50, 60)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def _base_logit(frame: pd.DataFrame) -> np.ndarray:
    """Creditworthiness score f(x) of the label model: income, debt ratio and education.

    Independent of the planted attributes and of employment years, which follow age (see the module
    docstring); the intercept keeps about three quarters of the applicants repaying.
    """
    edu = frame["education"].map({e: i for i, e in enumerate(EDUCATION)}).to_numpy(dtype=float)
    return np.asarray(
        1.17
        + 1.1 * (np.log(frame["income"].to_numpy()) - 3.8)
        - 4.0 * (frame["debt_ratio"].to_numpy() - 0.3)
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
    """Logistic regression on the encoded features plus one indicator per age band (:data:`AGE_BANDS`).

    The bands are a degree-0 :class:`~sklearn.preprocessing.SplineTransformer` on the encoded age
    column with knots at the band edges (in the schema's standardised units), so the fitted estimator
    is a plain scikit-learn pipeline on ``schema.transform`` output (``input="encoded"``).
    """
    # heavy: loaded when a model is fitted
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer

    age = schema.column("age")
    edges = (np.asarray(AGE_BANDS, dtype=float) + 0.5 - age.mean) / age.scale  # integer ages: cut between
    knots = np.concatenate([[-1e3], edges, [1e3]])[:, None]  # outer knots far outside any standardised age
    bands = ColumnTransformer(
        [("age_bands", SplineTransformer(degree=0, knots=knots, extrapolation="constant"),
          [schema.slice_of("age").start])],
        remainder="passthrough",
    )
    Z = schema.transform(frame[list(FEATURE_COLUMNS)])
    est = make_pipeline(bands, LogisticRegression(C=1.0, solver="newton-cg", max_iter=500)).fit(Z, labels)
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
