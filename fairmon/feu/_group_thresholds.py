"""Group-specific decision thresholds as one FEU post-processing variable, the "parity shift" ``s``.

**Opt-in** (``FEUSettings.group_thresholds`` / spec ``retraining.group_thresholds``, default off):
a candidate with group thresholds reads the protected attribute when it decides — disparate
treatment, unlawful in some domains (e.g. credit decisions in the US under the Equal Credit
Opportunity Act / Regulation B, which forbids using sex, race, national origin, ... in the decision).
A team must decide that it may use it; fairmon never switches it on.

For every protected group ``g`` (the groups FEU's DP uses: one column, or the intersection of several
joined by ``|``) and a candidate network with threshold ``tau``::

    tau_g(s) = (1 - s) * tau + s * q_g,    s in [0, 1]

where ``q_g`` is the score at which group ``g``'s positive rate on the **training** split equals the
overall training positive rate at ``tau`` (:func:`parity_quantiles`: the ``k``-th largest training
score of the group, ``k = round(r * n_g)``, so the group's rate is within ``0.5 / n_g`` of ``r``
without ties). ``s = 0`` is the single threshold; ``s = 1`` equalises the training positive rates.
``q_g`` is fit on training scores only; the search selects on validation and reports on test, as for
every other variable. A group unseen in training, or with fewer than :data:`MIN_GROUP_ROWS` training
rows, keeps ``tau`` (its quantile would be noise).

Source: group-specific thresholds on a score are the post-processing of Hardt, Price & Srebro,
"Equality of Opportunity in Supervised Learning" (NeurIPS 2016) — and of fairlearn's
ThresholdOptimizer, FEU's baseline. The single interpolation variable is fairmon's design choice:
one threshold per group would make the length of pymoo's decision vector depend on the number of
(intersectional) groups, which differs per monitor and grows multiplicatively with several sensitive
columns, while NSGA-II at FEU's small budgets (16-30 x 6-15) cannot search tens of extra dimensions;
``s`` keeps the vector at a fixed length per setting and spans the path from the plain threshold to
training-rate parity.

GESD of such a candidate. Its decision ``p(x) >= tau_g(x)`` depends on the group directly, so, as
for the ThresholdOptimizer baseline (:mod:`fairmon.feu._baselines`), the explained function reads
the group **from the perturbed encoded sensitive column(s)** (the same decoder,
``_group_decoder``). The function explained is the score shifted by the group's threshold in logit
space, ``f(x) = sigmoid(logit p(x) - logit tau_g(x) + logit tau)``: ``f(x) >= tau`` exactly when the
candidate approves ``x``, and at ``s = 0`` ``f = p``, the plain candidate's explained score. Hence
the sensitive columns must be model features (else :data:`ERR_NOT_A_FEATURE`), and the explainer
must be model-agnostic (KernelSHAP / LIME; a gradient explainer cannot see the group's step).

Example
-------
>>> import numpy as np
>>> p = np.r_[np.linspace(0.0, 0.6, 50), np.linspace(0.4, 1.0, 50)]; s = np.repeat(["a", "b"], 50)
>>> q = parity_quantiles(p, s, 0.5)
>>> thr = row_thresholds(s, group_thresholds(0.5, q, 1.0), 0.5)
>>> [float((p[s == g] >= thr[s == g]).mean()) for g in ("a", "b")]
[0.5, 0.5]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["MIN_GROUP_ROWS", "parity_quantiles", "group_thresholds", "row_thresholds", "fitted_row_thresholds",
           "shifted_score",
           "ERR_NOT_A_FEATURE", "ERR_EXPLAINER", "check_explainer"]

#: a group with fewer training rows than this keeps the single threshold
MIN_GROUP_ROWS = 20
#: thresholds stay inside (0, 1), as :class:`fairmon.registry.Model` requires
_EPS = 1e-6

ERR_NOT_A_FEATURE = (
    "FEU setting group_thresholds=True needs the sensitive column(s) {columns} among the model features: the "
    "GESD of a decision that reads the group is computed from the encoded sensitive columns"
)

ERR_EXPLAINER = (
    "FEU setting group_thresholds=True needs a model-agnostic GESD explainer (kernelshap / shap, lime), got "
    "{explainer!r}: the explained decision score has a step in the group, which gradients do not see"
)
#: GESD explainer components that explain any function of the encoded rows
_AGNOSTIC = frozenset({"kernelshap", "shap", "lime"})


def check_explainer(explainer: Any) -> str | None:
    """:data:`ERR_EXPLAINER` when a GESD ``explainer`` spec has a gradient-based component, else None."""
    if callable(explainer):
        return None
    names = {n.strip().lower() for n in str(explainer).split("+") if n.strip()}
    return None if names <= _AGNOSTIC else ERR_EXPLAINER.format(explainer=explainer)


def parity_quantiles(p_train: np.ndarray, s_train: np.ndarray, tau: float,
                     min_rows: int = MIN_GROUP_ROWS) -> dict[str, float]:
    """Per group with ``>= min_rows`` training rows: the score ``q_g`` where its positive rate is the overall one.

    The overall rate is ``r = mean(p_train >= tau)``; ``q_g`` is the group's ``round(r * n_g)``-th
    largest score (just above its largest score when that count is 0).
    """
    p = np.asarray(p_train, dtype=float)
    s = np.asarray(s_train).astype(str)
    r = float((p >= tau).mean()) if len(p) else 0.0
    out: dict[str, float] = {}
    for g in np.unique(s):
        pg = np.sort(p[s == g])[::-1]
        if len(pg) < min_rows:
            continue
        k = int(round(r * len(pg)))
        q = float(np.nextafter(pg[0], np.inf)) if k == 0 else float(pg[k - 1])
        out[str(g)] = min(max(q, _EPS), 1.0 - _EPS)
    return out


def group_thresholds(tau: float, quantiles: Mapping[str, float], shift: float) -> dict[str, float]:
    """``tau_g(s) = (1 - s) tau + s q_g`` for each group with a quantile."""
    return {g: float((1.0 - shift) * tau + shift * q) for g, q in quantiles.items()}


def row_thresholds(groups: np.ndarray, thresholds: Mapping[str, float], tau: float) -> np.ndarray:
    """The threshold of each row: its group's, or ``tau`` for a group without one."""
    g = np.asarray(groups).astype(str)
    out = np.full(len(g), float(tau))
    for name, t in thresholds.items():
        out[g == name] = t
    return out


def fitted_row_thresholds(p_fit: np.ndarray, s_fit: np.ndarray, groups: np.ndarray, tau: float,
                          shift: float) -> np.ndarray:
    """Each row's threshold (its group in ``groups``) with the group quantiles fit on the scores ``p_fit``
    (groups ``s_fit``) of the rows the model was trained on: how a fold model decides out of fold.

    >>> p = np.r_[np.linspace(0.0, 0.6, 50), np.linspace(0.4, 1.0, 50)]; s = np.repeat(["a", "b"], 50)
    >>> thr = fitted_row_thresholds(p, s, s, 0.5, 1.0)
    >>> [float((p[s == g] >= thr[s == g]).mean()) for g in ("a", "b")]
    [0.5, 0.5]
    """
    return row_thresholds(groups, group_thresholds(tau, parity_quantiles(p_fit, s_fit, tau), shift), tau)


def shifted_score(score: Callable[[np.ndarray], np.ndarray], decode: Callable[[np.ndarray], np.ndarray],
                  thresholds: Mapping[str, float], tau: float) -> Callable[[np.ndarray], np.ndarray]:
    """``Z -> sigmoid(logit p(Z) - logit tau_g(Z) + logit tau)``, the group read from ``Z`` (module docstring)."""

    def logit(v: Any) -> Any:
        v = np.clip(v, 1e-12, 1.0 - 1e-12)
        return np.log(v) - np.log1p(-v)

    def fn(Z: np.ndarray) -> np.ndarray:
        t = row_thresholds(decode(Z), thresholds, tau)
        z = logit(np.asarray(score(Z), dtype=float)) - logit(t) + logit(float(tau))
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    return fn
