"""Explanations and their quality: explainers, OpenXAI metrics, SynthGauss.

``explain(model, Z, method=...)`` computes attributions on the encoded matrix of the model's schema
(batched LIME/KernelSHAP, the lime/shap libraries, gradient methods, random baseline);
``to_columns`` sums them back to raw columns; ``evaluate`` computes the OpenXAI metrics as a tidy
table. Names are resolved lazily so ``import fairmon.explain`` stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "explain",
    "to_columns",
    "METHODS",
    "lime_batched",
    "kernelshap_batched",
    "evaluate",
    "synthgauss",
]

_LAZY = {
    "explain": "fairmon.explain.api",
    "to_columns": "fairmon.explain.api",
    "METHODS": "fairmon.explain.api",
    "lime_batched": "fairmon.explain.lime_batched",
    "kernelshap_batched": "fairmon.explain.kernelshap_batched",
    "evaluate": "fairmon.explain.openxai",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name == "synthgauss":
        return import_module("fairmon.explain.synthgauss")
    raise AttributeError(f"module 'fairmon.explain' has no attribute {name!r}")
