"""Explanations and their quality: explainers, OpenXAI metrics, SynthGauss.

``explain(model, Z, method=...)`` computes attributions on the encoded matrix of the model's schema
(batched LIME/KernelSHAP, the lime/shap libraries, gradient methods, random baseline);
``to_columns`` sums them back to raw columns; ``evaluate`` computes the OpenXAI metrics as a tidy
table; ``lime_batched`` / ``kernelshap_batched`` explain any probability function of encoded rows.
Only numpy is imported here; torch, scipy, lime and shap load when a computation needs them.
"""

from fairmon.explain.api import METHODS, explain, to_columns
from fairmon.explain.kernelshap_batched import kernelshap_batched
from fairmon.explain.lime_batched import lime_batched
from fairmon.explain.openxai import evaluate

__all__ = ["explain", "to_columns", "METHODS", "lime_batched", "kernelshap_batched", "evaluate"]
