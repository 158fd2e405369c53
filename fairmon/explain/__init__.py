"""Explanations and their quality: explainers, OpenXAI metrics, SynthGauss.

``explain(model, Z, method=...)`` computes attributions on the encoded matrix of the model's schema
(batched LIME/KernelSHAP, the lime/shap libraries, gradient methods, random baseline);
``to_columns`` sums them back to raw columns; ``evaluate`` computes the OpenXAI metrics as a tidy
table (the single metrics live in :mod:`fairmon.explain.openxai`); ``lime_batched`` /
``kernelshap_batched`` explain any probability function of encoded rows; ``synthgauss`` draws the
synthetic Gaussian benchmark with known ground-truth attributions. GESD lives in
:mod:`fairmon.explain.gesd`.

Only numpy is imported here; torch, scipy, lime and shap load when a computation needs them, and
pandas (with :func:`evaluate`) on first access.

>>> import numpy as np
>>> from fairmon.explain import coalition_design
>>> masks, weights = coalition_design(3, 6, np.random.default_rng(0))
>>> masks.shape, round(float(weights.sum()), 6)
((6, 3), 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairmon._lazy import lazy_attribute
from fairmon.explain._coalitions import coalition_design
from fairmon.explain._kernelshap import kernelshap_batched
from fairmon.explain._lime import LimeStats, lime_batched
from fairmon.explain._synthgauss import SynthGauss, cluster_centers, synthgauss

if TYPE_CHECKING:
    from fairmon.explain._api import METHODS, explain, to_columns
    from fairmon.explain.openxai import evaluate

__all__ = [
    # attributions of a model's encoded rows
    "explain",
    "to_columns",
    "METHODS",
    # the batched estimators behind it, for any probability function
    "lime_batched",
    "kernelshap_batched",
    "coalition_design",
    "LimeStats",
    # explanation quality (OpenXAI)
    "evaluate",
    # the synthetic benchmark with ground truth
    "synthgauss",
    "SynthGauss",
    "cluster_centers",
]

# resolved on access, so ``from fairmon.explain import explain`` sees the current
# ``fairmon.explain._api.explain`` (tests may patch it) and pandas loads only with ``evaluate``
_LAZY = {
    "explain": "fairmon.explain._api",
    "to_columns": "fairmon.explain._api",
    "METHODS": "fairmon.explain._api",
    "evaluate": "fairmon.explain.openxai",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
