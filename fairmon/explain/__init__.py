"""Explanations and their quality: explainers, OpenXAI metrics, SynthGauss.

``explain(model, Z, method=...)`` computes attributions on the encoded matrix of the model's schema
(batched LIME/KernelSHAP, the lime/shap libraries, gradient methods, random baseline);
``to_columns`` sums them back to raw columns; ``evaluate`` computes the OpenXAI metrics as a tidy
table; ``lime_batched`` / ``kernelshap_batched`` explain any probability function of encoded rows.
Only numpy is imported here; torch, scipy, lime and shap load when a computation needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# bound eagerly: these names are also submodule names, which the import system would otherwise
# bind to the module object on first import of the submodule
from fairmon.explain.kernelshap_batched import kernelshap_batched
from fairmon.explain.lime_batched import lime_batched

__all__ = ["explain", "to_columns", "METHODS", "lime_batched", "kernelshap_batched", "evaluate"]

# resolved on access, so ``from fairmon.explain import explain`` sees the current
# ``fairmon.explain.api.explain`` (tests may patch it) and pandas loads only with ``evaluate``
_LAZY = {
    "explain": "fairmon.explain.api",
    "to_columns": "fairmon.explain.api",
    "METHODS": "fairmon.explain.api",
    "evaluate": "fairmon.explain.openxai",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fairmon.explain' has no attribute {name!r}")
