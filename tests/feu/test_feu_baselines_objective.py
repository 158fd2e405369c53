"""ExponentiatedGradient, FEU's baseline, optimises the balanced error rate (session 19), the utility
ThresholdOptimizer optimises and FEU's default: with fairlearn's default error rate it trades balanced
accuracy for accuracy on imbalanced data and looks weaker than it is beside FEU."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fairlearn.reductions import ErrorRate
from sklearn.metrics import balanced_accuracy_score

from fairmon.feu._baselines import balanced_error_rate, fit_mitigators
from fairmon.feu._data import _prepare
from fairmon.feu._metrics import decision_metrics


def _imbalanced(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    x1, x2 = rng.normal(size=(2, n))
    y = (x1 + 0.5 * x2 + 0.8 * (sex == "M") + rng.logistic(size=n) > 2.2).astype(int)  # ~15% favourable
    return pd.DataFrame({"x1": x1, "x2": x2, "sex": sex, "y": y})


def test_the_balanced_error_rate_is_one_minus_balanced_accuracy_in_fairlearn() -> None:
    y = np.array([1] * 20 + [0] * 80)
    rate = balanced_error_rate(y)
    assert (rate.fn_cost, rate.fp_cost) == pytest.approx((2.5, 0.625))
    yhat = y.copy()
    yhat[:5], yhat[20:28] = 0, 1  # 5 of 20 positives and 8 of 80 negatives wrong
    X = pd.DataFrame({"x": np.arange(100)})
    rate.load_data(X, pd.Series(y), sensitive_features=pd.Series(np.repeat(["a", "b"], 50)))
    assert float(rate.gamma(lambda _: yhat).iloc[0]) == pytest.approx(1.0 - balanced_accuracy_score(y, yhat))
    plain = balanced_error_rate(np.ones(10))  # one class: the plain error rate
    assert (plain.fn_cost, plain.fp_cost) == (ErrorRate().fn_cost, ErrorRate().fp_cost)


def test_exponentiated_gradient_optimises_balanced_accuracy_not_accuracy() -> None:
    df = _imbalanced()
    prep = _prepare(df, ["x1", "x2", "sex"], "sex", "y", None, (0.5, 0.2, 0.3), 0)
    assert prep.y["train"].mean() < 0.25
    proba = {k: np.full(len(prep.y[k]), 0.5) for k in ("train", "validation", "test")}
    product = fit_mitigators(prep, proba, production_score=lambda Z: np.full(len(Z), 0.5))
    plain = fit_mitigators(prep, proba, production_score=lambda Z: np.full(len(Z), 0.5), eg_objective=ErrorRate())
    assert product.exponentiated_gradient.objective.fn_cost == pytest.approx(0.5 / prep.y["train"].mean())

    def metrics(m: object) -> dict[str, float]:
        yhat = m.exponentiated_gradient.predict(prep.Z["test"], random_state=0)  # type: ignore[attr-defined]
        return decision_metrics(prep.y["test"], np.asarray(yhat, dtype=int), prep.s["test"])

    balanced, error = metrics(product), metrics(plain)
    assert balanced["balanced_accuracy"] > error["balanced_accuracy"] + 0.03
    assert balanced["selection_rate"] > error["selection_rate"]  # it approves more of the rare favourable class
