"""LIME and KernelSHAP through the ``lime`` and ``shap`` libraries, one row at a time.

These are the reference paths the batched estimators are checked against (and the slow baseline of
``benchmarks/explainers``). Settings mirror the batched defaults so both compute the same estimator:

* ``lime-lib``: ``LimeTabularExplainer(background, mode="classification",
  categorical_features=<one-hot columns>, discretize_continuous=True (quartiles),
  kernel_width=None (0.75·sqrt(d)), random_state)`` and ``explain_instance(row, predict_proba,
  labels=(c,), num_features=d, num_samples=n_samples)``; with ``num_features = d`` lime's
  ``feature_selection="auto"`` keeps every feature and the surrogate is lime's default
  ``Ridge(alpha=1)``;
* ``kernelshap-lib``: ``KernelExplainer(predict_proba, background)`` (identity link) and
  ``shap_values(row, nsamples=n_samples, l1_reg=False)``: no l1 feature selection, so all ``d``
  attributions are estimated. shap samples with numpy's global generator; it is seeded with
  ``random_state`` for the call and restored afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from fairmon.errors import MethodError
from fairmon.registry.model import Model

__all__ = ["lime_library", "kernelshap_library"]


def _predict_fn(f: Any) -> Any:
    """Numpy ``(m, d) -> (m, 2)`` class probabilities for the libraries."""

    if isinstance(f, Model):
        return f.predict_proba_encoded

    def fn(Z: np.ndarray) -> np.ndarray:
        out = np.asarray(f(np.asarray(Z, dtype=float)), dtype=float)
        if out.ndim == 1:
            out = np.column_stack([1.0 - out, out])
        if out.ndim != 2 or out.shape[1] != 2:
            raise MethodError(f"probability function returned shape {out.shape}; expected (m, 2) or (m,)")
        return out

    return fn


def lime_library(
    f: Any,
    Z: np.ndarray,
    labels: np.ndarray,
    *,
    background: np.ndarray,
    categorical: np.ndarray,
    n_samples: int = 5000,
    random_state: int | None = 0,
) -> np.ndarray:
    """LIME attributions ``(n, d)`` of class ``labels[i]`` per row via ``lime.lime_tabular``."""
    from lime.lime_tabular import LimeTabularExplainer

    predict = _predict_fn(f)
    d = Z.shape[1]
    explainer = LimeTabularExplainer(
        background,
        mode="classification",
        categorical_features=[int(j) for j in np.nonzero(categorical)[0]],
        discretize_continuous=True,
        random_state=random_state,
    )
    out = np.zeros(Z.shape)
    for i, row in enumerate(Z):
        c = int(labels[i])
        exp = explainer.explain_instance(row, predict, labels=(c,), num_features=d, num_samples=int(n_samples))
        for j, w in exp.local_exp[c]:
            out[i, j] = w
    return out


@contextmanager
def _seeded_global_numpy(seed: int | None) -> Iterator[None]:
    state = np.random.get_state()
    np.random.seed(0 if seed is None else int(seed) % (2**32))
    try:
        yield
    finally:
        np.random.set_state(state)


def kernelshap_library(
    f: Any,
    Z: np.ndarray,
    labels: np.ndarray,
    *,
    background: np.ndarray,
    n_samples: int | Literal["auto"] = "auto",
    random_state: int | None = 0,
) -> np.ndarray:
    """KernelSHAP attributions ``(n, d)`` of class ``labels[i]`` per row via ``shap.KernelExplainer``."""
    import logging

    import shap

    logging.getLogger("shap").setLevel(logging.ERROR)
    predict = _predict_fn(f)
    explainer = shap.KernelExplainer(predict, background)
    out = np.zeros(Z.shape)
    with _seeded_global_numpy(random_state):
        for i, row in enumerate(Z):
            sv = explainer.shap_values(row.reshape(1, -1), nsamples=n_samples, l1_reg=False, silent=True)
            if isinstance(sv, list):  # older shap: one (1, d) array per class
                sv = np.stack([np.asarray(a).reshape(-1) for a in sv], axis=1)
            sv = np.asarray(sv).reshape(Z.shape[1], -1)  # shap >= 0.45: (1, d, classes)
            out[i] = sv[:, int(labels[i])]
    return out
