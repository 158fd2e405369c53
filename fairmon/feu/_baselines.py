"""The models an FEU recommendation must beat, on FEU's own split and seed.

* ``production`` — the model in production (its own thresholded decisions), or, without one, the
  paper's network trained at reference hyperparameters (lr 1e-3, 20 epochs, threshold 0.5): the
  anchor of the search's constraints;
* ``constant`` — approve everyone: DP 0 and GESD 0 by construction, balanced accuracy 0.5 — the
  degenerate answer the paper's threshold-free objectives drift to;
* ``threshold_optimizer`` — fairlearn's ``ThresholdOptimizer`` (demographic parity, balanced-accuracy
  objective) post-processing the production model's scores, fit on the training split;
* ``exponentiated_gradient`` — fairlearn's ``ExponentiatedGradient`` (demographic parity) reduction
  over a logistic regression on FEU's encoded features, fit on the training split.

fairlearn's two mitigators randomise their decisions; they are evaluated with ``random_state`` and
their AUC uses the probability of a favourable decision. Their GESD is not computed (a randomised
post-processor has no deterministic attribution to perturb), and is reported as None.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairmon.feu._data import _Prepared
from fairmon.feu._metrics import auc, decision_metrics

__all__ = ["BASELINES", "baseline_metrics"]

BASELINES = ("production", "constant", "threshold_optimizer", "exponentiated_gradient")
PARTS = ("validation", "test")


def _score_column() -> Any:
    """A prefit estimator whose only feature is the production model's P(favourable).

    The class is built on first use: sklearn's estimator protocol (which fairlearn requires) would
    otherwise load with the pipeline, and the CLI's parser must stay light.
    """
    from sklearn.base import BaseEstimator, ClassifierMixin  # heavy: imported when FEU runs

    class _ScoreColumn(ClassifierMixin, BaseEstimator):  # type: ignore[misc]  # sklearn is untyped
        def fit(self, X: Any, y: Any) -> _ScoreColumn:
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X: Any) -> np.ndarray:
            p = np.asarray(X, dtype=float).reshape(-1)
            return np.column_stack([1.0 - p, p])

        def predict(self, X: Any) -> np.ndarray:
            return (self.predict_proba(X)[:, 1] >= 0.5).astype(int)

    return _ScoreColumn().fit(None, None)


def _metrics(prep: _Prepared, part: str, yhat: np.ndarray, score: np.ndarray | None) -> dict[str, Any]:
    out: dict[str, Any] = dict(decision_metrics(prep.y[part], yhat, prep.s[part]))
    out["auc"] = auc(prep.y[part], score) if score is not None else 0.5
    return out


def baseline_metrics(
    prep: _Prepared,
    production_proba: dict[str, np.ndarray],
    production_threshold: float,
    *,
    random_state: int,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{baseline: {"validation": metrics, "test": metrics}}`` for :data:`BASELINES`.

    ``production_proba`` holds the production model's P(favourable) on the ``train``, ``validation``
    and ``test`` rows of ``prep``.
    """
    import warnings

    from fairlearn.postprocessing import ThresholdOptimizer  # heavy: imported when FEU runs
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    out: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in BASELINES}
    for part in PARTS:
        p = production_proba[part]
        out["production"][part] = _metrics(prep, part, (p >= production_threshold).astype(int), p)
        out["constant"][part] = _metrics(prep, part, np.ones(len(p), dtype=int), None)

    to = ThresholdOptimizer(estimator=_score_column(), constraints="demographic_parity", objective="balanced_accuracy_score",
                            prefit=True, predict_method="predict_proba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fairlearn warns that a prefit estimator is not checked
        to.fit(production_proba["train"].reshape(-1, 1), prep.y["train"], sensitive_features=prep.s["train"])
        for part in PARTS:
            Xp = production_proba[part].reshape(-1, 1)
            yhat = np.asarray(to.predict(Xp, sensitive_features=prep.s[part], random_state=random_state), dtype=int)
            score = to._pmf_predict(Xp, sensitive_features=prep.s[part])[:, 1]
            out["threshold_optimizer"][part] = _metrics(prep, part, yhat, score)

    eg = ExponentiatedGradient(LogisticRegression(max_iter=1000), constraints=DemographicParity(), eps=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eg.fit(prep.Z["train"], prep.y["train"], sensitive_features=prep.s["train"])
    for part in PARTS:
        yhat = np.asarray(eg.predict(prep.Z[part], random_state=random_state), dtype=int)
        score = eg._pmf_predict(prep.Z[part])[:, 1]
        out["exponentiated_gradient"][part] = _metrics(prep, part, yhat, score)
    for name in ("threshold_optimizer", "exponentiated_gradient"):
        for part in PARTS:
            out[name][part]["gesd"] = None
    out["constant"]["validation"]["gesd"] = out["constant"]["test"]["gesd"] = 0.0
    return out
