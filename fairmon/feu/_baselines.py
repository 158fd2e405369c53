"""The models an FEU recommendation must beat, on FEU's own split and seed.

* ``production`` — the model in production (its own thresholded decisions), or, without one, the
  paper's network trained at reference hyperparameters (lr 1e-3, 20 epochs, threshold 0.5): the
  anchor of the search's constraints;
* ``constant`` — approve everyone: DP 0 and GESD 0 by construction, balanced accuracy 0.5 — the
  degenerate answer the paper's threshold-free objectives drift to;
* ``threshold_optimizer`` — fairlearn's ``ThresholdOptimizer`` (demographic parity, balanced-accuracy
  objective) post-processing the production model's scores, fit on the training split;
* ``exponentiated_gradient`` — fairlearn's ``ExponentiatedGradient`` (demographic parity) reduction
  over a logistic regression on FEU's encoded features, fit on the training split, with the
  **balanced** error rate as its objective (:func:`balanced_error_rate`), the utility
  ThresholdOptimizer optimises too and FEU's default. Until session 19 it kept fairlearn's default
  objective, the error rate, which on imbalanced data trades balanced accuracy for accuracy: on the
  Adult runs of ``benchmarks/feu_paper`` its best test balanced accuracy over ``eps`` 0.01-0.20 was
  0.709-0.724 against 0.764-0.783 with the balanced objective, so the baseline FEU was shown beside
  looked weaker than the mitigator is (``results/frontier_default_egbal.md``).

fairlearn's two mitigators randomise their decisions; their decisions are drawn with
``random_state`` and their AUC uses the probability of a favourable decision.

GESD of the mitigators (same explainer settings, same sampled rows and perturbations as the
candidates' GESD: ``gesd_of`` is the search's own GESD call). A randomised classifier has no single
decision function, so what is explained is its **probability of a favourable decision**
``P(yhat = 1 | x)`` — the function whose draws are its decisions, and the score its AUC uses:

* ``exponentiated_gradient``: ``ExponentiatedGradient._pmf_predict(x)[:, 1] = sum_t w_t h_t(x)``, the
  weights ``w_t`` of the ensemble's logistic regressions times their hard 0/1 predictions ``h_t``
  (fairlearn draws one ``h_t`` per row with probability ``w_t``); a mixture of step functions;
* ``threshold_optimizer``: ``ThresholdOptimizer._pmf_predict`` of the production score of ``x`` and
  the group ``a`` of ``x``: per group, a randomised threshold on the score (an interpolation between
  two thresholds). Its decision depends on ``a`` directly, so the explained function reads the group
  **from the perturbed features** (each sensitive column's encoded block decoded to the nearest
  pattern seen in training: argmax of a one-hot block, the nearest value of a numeric column); a
  perturbation or coalition that changes the sensitive block changes the threshold, as it would in
  production. When a sensitive column is not a model feature (e.g. withheld from the model), the
  group is a hidden input that GESD's explainers — functions of the features only — cannot hold
  fixed per row, so the GESD is undefined: stored None with the reason in ``gesd_note``. The same
  holds when the production model needs columns outside FEU's features, and with a gradient explainer
  (``"gradient"``: the decision probabilities are step functions without gradients).

Example
-------
>>> BASELINES
('production', 'constant', 'threshold_optimizer', 'exponentiated_gradient')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairmon.errors import MethodError
from fairmon.explain.gesd import GESDResult
from fairmon.feu._data import _Prepared
from fairmon.feu._metrics import auc, decision_metrics
from fairmon.registry.model import Model

__all__ = ["BASELINES", "MITIGATORS", "DecisionProbability", "Mitigators", "baseline_metrics", "fit_mitigators",
           "fit_threshold_optimizer", "fit_threshold_optimizer_on", "threshold_optimizer_decisions",
           "threshold_optimizer_explained", "threshold_optimizer_metrics", "ERR_TO_GROUP_NOT_A_FEATURE",
           "ERR_TO_PRODUCTION_COLUMNS"]

BASELINES = ("production", "constant", "threshold_optimizer", "exponentiated_gradient")
PARTS = ("validation", "test")
#: the fairlearn mitigators among :data:`BASELINES`
MITIGATORS = ("threshold_optimizer", "exponentiated_gradient")

ERR_TO_GROUP_NOT_A_FEATURE = (
    "GESD undefined: ThresholdOptimizer's decision depends on the sensitive column(s) {columns}, which are not "
    "model features; GESD's explainers explain functions of the features only and cannot hold a hidden group "
    "fixed per row"
)
ERR_TO_PRODUCTION_COLUMNS = (
    "GESD undefined: ThresholdOptimizer post-processes the production model, which needs columns {columns} "
    "outside FEU's features"
)

#: ``(model, part) -> GESDResult | None``: the search's GESD call (its settings, seed and rows)
GesdFn = Callable[[Model, str], GESDResult | None]


class DecisionProbability:
    """A randomised classifier as a scikit-learn-style ``predict_proba``: ``P(favourable decision | rows)``.

    Example
    -------
    >>> DecisionProbability(lambda Z: Z[:, 0]).predict_proba(np.array([[0.25], [1.0]])).tolist()
    [[0.75, 0.25], [0.0, 1.0]]
    """

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray]) -> None:
        self.fn = fn

    def predict_proba(self, Z: np.ndarray) -> np.ndarray:
        p = np.clip(np.asarray(self.fn(np.asarray(Z, dtype=float)), dtype=float).reshape(-1), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])


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


def _group_decoder(prep: _Prepared) -> Callable[[np.ndarray], np.ndarray] | None:
    """``Z -> group labels`` read from the encoded sensitive columns (None: one is not a feature).

    Each sensitive column's encoded block is mapped to the nearest block seen in the training rows and
    that row's raw value (``str``, joined by ``|`` for several columns, as :func:`_prepare` builds
    ``prep.s``).
    """
    sens = list(prep.summary["sensitive"])
    if any(c not in prep.schema.names for c in sens):
        return None
    tables = []
    for col in sens:
        sl = prep.schema.slice_of(col)
        enc = prep.Z["train"][:, sl]
        patterns, first = np.unique(enc, axis=0, return_index=True)
        labels = prep.X["train"][col].astype(str).to_numpy()[first]
        tables.append((sl, patterns, labels))

    def decode(Z: np.ndarray) -> np.ndarray:
        parts: list[np.ndarray] = []
        for sl, patterns, labels in tables:
            d = ((Z[:, sl][:, None, :] - patterns[None, :, :]) ** 2).sum(axis=2)
            parts.append(labels[d.argmin(axis=1)])
        if len(parts) == 1:
            return parts[0]
        return np.array(["|".join(row) for row in zip(*parts)], dtype=object)

    return decode


ERR_NOT_DIFFERENTIABLE = (
    "GESD undefined with the configured explainer: {error} (a randomised mitigator's decision probability is a "
    "step function with no gradient; the default shap+lime explains it)"
)


def _gesd_of(gesd_of: GesdFn, model: Model, part: str) -> dict[str, Any]:
    """The GESD entry of a mitigator; a gradient explainer cannot explain it (stored None, with why)."""
    try:
        return _gesd_entry(gesd_of(model, part))
    except MethodError as exc:
        return {"gesd": None, "gesd_p_value": None, "gesd_note": ERR_NOT_DIFFERENTIABLE.format(error=exc)}


def _gesd_entry(res: GESDResult | None) -> dict[str, Any]:
    if res is None or not np.isfinite(res.value):
        return {"gesd": None, "gesd_p_value": None, "gesd_note": "GESD undefined: fewer than two sampled groups"}
    return {"gesd": float(res.value), "gesd_p_value": float(res.p_value)}


@dataclass
class Mitigators:
    """fairlearn's two mitigators fit on FEU's training split, and the functions their GESD explains.

    ``explained`` maps a mitigator to the :class:`fairmon.registry.Model` over FEU's encoded rows whose
    GESD is reported (the module docstring says which function); ``notes`` maps a mitigator without one
    to the reason its GESD is undefined. The final GESD comparison of ``benchmarks/feu_paper`` explains
    the same models.

    Example
    -------
    >>> m = Mitigators(threshold_optimizer=None, exponentiated_gradient=None)
    >>> m.explained, m.notes
    ({}, {})
    """

    threshold_optimizer: Any  #: the fitted ``fairlearn.postprocessing.ThresholdOptimizer``
    exponentiated_gradient: Any  #: the fitted ``fairlearn.reductions.ExponentiatedGradient``
    explained: dict[str, Model] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def fit_mitigators(
    prep: _Prepared,
    production_proba: dict[str, np.ndarray],
    *,
    production_score: Callable[[np.ndarray], np.ndarray] | str | None = None,
    tol: float | None = None,
    eps: float = 0.01,
    eg_estimator: Any = None,
    eg_objective: Any = None,
) -> Mitigators:
    """Fit ThresholdOptimizer (on the production scores) and ExponentiatedGradient on ``prep``'s training rows.

    ``production_proba`` and ``production_score`` are those of :func:`baseline_metrics`. Both fits are
    deterministic (no random state: fairlearn randomises only its predictions). ``tol`` (the DP
    ThresholdOptimizer may leave; None: exact parity) and ``eps`` (ExponentiatedGradient's allowed
    constraint violation) are the mitigators' own trade-off knobs: FEU's baselines use the defaults,
    ``benchmarks/feu_paper/frontier.py`` sweeps them. ``eg_estimator``: ExponentiatedGradient's base
    learner (any scikit-learn classifier whose ``fit`` takes ``sample_weight``); the default, and the
    product's, is ``LogisticRegression(max_iter=1000)``. ``eg_objective``: its objective moment (None:
    :func:`balanced_error_rate` of the training labels).

    Example
    -------
    >>> import pandas as pd
    >>> from fairmon.feu._data import _prepare
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=200), "sex": rng.choice(["F", "M"], 200)})
    >>> df["y"] = (df.x + (df.sex == "M") + rng.normal(size=200) > 0.5).astype(int)
    >>> prep = _prepare(df, ["x", "sex"], "sex", "y", None, (0.5, 0.2, 0.3), 0)
    >>> score = lambda Z: 1.0 / (1.0 + np.exp(-Z[:, 0]))
    >>> mit = fit_mitigators(prep, {k: score(prep.Z[k]) for k in prep.Z}, production_score=score)
    >>> sorted(mit.explained), mit.notes
    (['exponentiated_gradient', 'threshold_optimizer'], {})
    >>> p = mit.explained["threshold_optimizer"].estimator.predict_proba(prep.Z["test"][:3])
    >>> p.shape, bool(((p >= 0) & (p <= 1)).all())
    ((3, 2), True)
    """
    import warnings

    from fairlearn.reductions import DemographicParity, ExponentiatedGradient  # heavy: imported when FEU runs
    from sklearn.linear_model import LogisticRegression

    to = fit_threshold_optimizer(prep, production_proba["train"], tol)
    base = LogisticRegression(max_iter=1000) if eg_estimator is None else eg_estimator
    objective = balanced_error_rate(prep.y["train"]) if eg_objective is None else eg_objective
    eg = ExponentiatedGradient(base, constraints=DemographicParity(), objective=objective, eps=eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eg.fit(prep.Z["train"], prep.y["train"], sensitive_features=prep.s["train"])
    out = Mitigators(to, eg)
    out.explained["exponentiated_gradient"] = Model(
        DecisionProbability(lambda Z: eg._pmf_predict(Z)[:, 1]), prep.schema, framework="sklearn")
    model, note = threshold_optimizer_explained(to, prep, production_score)
    if model is not None:
        out.explained["threshold_optimizer"] = model
    else:
        out.notes["threshold_optimizer"] = str(note)
    return out


def balanced_error_rate(y: np.ndarray) -> Any:
    """fairlearn's cost-sensitive ``ErrorRate`` whose value is the balanced error rate on labels ``y``.

    ``ErrorRate(costs)`` is the mean over rows of ``c_fn`` per false negative and ``c_fp`` per false
    positive; with ``c_fn = 0.5 / P(y = 1)`` and ``c_fp = 0.5 / P(y = 0)`` that mean is
    ``(FNR + FPR) / 2 = 1 - balanced accuracy``, ExponentiatedGradient's objective here (module docstring).
    With one class only, the plain error rate (the costs would divide by zero).

    Example
    -------
    >>> rate = balanced_error_rate(np.array([1, 0, 0, 0]))
    >>> round(rate.fn_cost, 3), round(rate.fp_cost, 3)
    (2.0, 0.667)
    """
    from fairlearn.reductions import ErrorRate

    p1 = float(np.mean(np.asarray(y) == 1))
    if not 0.0 < p1 < 1.0:
        return ErrorRate()
    return ErrorRate(costs={"fn": 0.5 / p1, "fp": 0.5 / (1.0 - p1)})


def fit_threshold_optimizer(prep: _Prepared, train_proba: np.ndarray, tol: float | None) -> Any:
    """fairlearn's ThresholdOptimizer (demographic parity, balanced-accuracy objective, ``tol`` the DP
    it may leave) post-processing the production scores of ``prep``'s training rows."""
    return fit_threshold_optimizer_on(train_proba, prep.y["train"], prep.s["train"], tol)


def fit_threshold_optimizer_on(scores: np.ndarray, y: np.ndarray, s: np.ndarray, tol: float | None) -> Any:
    """:func:`fit_threshold_optimizer` on any rows: their production ``scores``, labels and groups."""
    import warnings

    from fairlearn.postprocessing import ThresholdOptimizer

    to = ThresholdOptimizer(estimator=_score_column(), constraints="demographic_parity", objective="balanced_accuracy_score",
                            prefit=True, predict_method="predict_proba", tol=tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fairlearn warns that a prefit estimator is not checked
        to.fit(np.asarray(scores, dtype=float).reshape(-1, 1), y, sensitive_features=s)
    return to


def threshold_optimizer_decisions(to: Any, scores: np.ndarray, s: np.ndarray, random_state: int) -> np.ndarray:
    """ThresholdOptimizer's 0/1 decisions on rows with production ``scores`` and groups ``s``, drawn with
    ``random_state`` (fairlearn randomises between two thresholds where parity needs it)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(to.predict(np.asarray(scores, dtype=float).reshape(-1, 1), sensitive_features=s,
                                     random_state=random_state), dtype=int)


def threshold_optimizer_metrics(to: Any, prep: _Prepared, production_proba: dict[str, np.ndarray], part: str,
                                random_state: int) -> dict[str, Any]:
    """ThresholdOptimizer's metrics on one split: its decisions drawn with ``random_state``, its AUC from
    the probability of a favourable decision."""
    import warnings

    X = production_proba[part].reshape(-1, 1)
    yhat = threshold_optimizer_decisions(to, X, prep.s[part], random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = to._pmf_predict(X, sensitive_features=prep.s[part])[:, 1]
    return _metrics(prep, part, yhat, score)


def threshold_optimizer_explained(
    to: Any, prep: _Prepared, production_score: Callable[[np.ndarray], np.ndarray] | str | None,
) -> tuple[Model | None, str | None]:
    """The function whose GESD is ThresholdOptimizer's (module docstring), or None and why there is none."""
    import warnings

    decode = _group_decoder(prep)
    if decode is None:
        return None, ERR_TO_GROUP_NOT_A_FEATURE.format(
            columns=[c for c in prep.summary["sensitive"] if c not in prep.schema.names])
    if not callable(production_score):
        return None, production_score or "GESD undefined: no production score of the encoded features"
    score_fn, decode_fn = production_score, decode

    def to_proba(Z: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(to._pmf_predict(score_fn(Z).reshape(-1, 1), sensitive_features=decode_fn(Z))[:, 1])

    return Model(DecisionProbability(to_proba), prep.schema, framework="sklearn"), None


def baseline_metrics(
    prep: _Prepared,
    production_proba: dict[str, np.ndarray],
    production_threshold: float,
    *,
    random_state: int,
    production_score: Callable[[np.ndarray], np.ndarray] | str | None = None,
    gesd_of: GesdFn | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{baseline: {"validation": metrics, "test": metrics}}`` for :data:`BASELINES`.

    ``production_proba`` holds the production model's P(favourable) on the ``train``, ``validation``
    and ``test`` rows of ``prep``. With ``gesd_of`` (the search's GESD call) the mitigators' GESD is
    computed as the module docstring says; ``production_score`` is the production model's
    P(favourable) of rows encoded by ``prep.schema`` (ThresholdOptimizer's input), or a string saying
    why there is none (stored as the reason its GESD is undefined). The mitigators are those of
    :func:`fit_mitigators`.
    """

    out: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in BASELINES}
    for part in PARTS:
        p = production_proba[part]
        out["production"][part] = _metrics(prep, part, (p >= production_threshold).astype(int), p)
        out["constant"][part] = _metrics(prep, part, np.ones(len(p), dtype=int), None)

    mit = fit_mitigators(prep, production_proba, production_score=production_score)
    to, eg = mit.threshold_optimizer, mit.exponentiated_gradient
    for part in PARTS:
        out["threshold_optimizer"][part] = threshold_optimizer_metrics(to, prep, production_proba, part, random_state)
    for part in PARTS:
        yhat = np.asarray(eg.predict(prep.Z[part], random_state=random_state), dtype=int)
        score = eg._pmf_predict(prep.Z[part])[:, 1]
        out["exponentiated_gradient"][part] = _metrics(prep, part, yhat, score)

    for part in PARTS:
        out["constant"][part].update(gesd=0.0, gesd_note="0 by construction: a constant has zero attributions")
    for part in PARTS:
        for name in ("exponentiated_gradient", "threshold_optimizer"):  # the order of the GESD calls before the split
            model = mit.explained.get(name)
            if gesd_of is None:
                out[name][part].update(gesd=None, gesd_p_value=None,
                                       gesd_note="GESD not computed (baseline_metrics called without gesd_of)")
            elif model is None:
                out[name][part].update(gesd=None, gesd_p_value=None, gesd_note=mit.notes[name])
            else:
                out[name][part].update(_gesd_of(gesd_of, model, part))
    return out
