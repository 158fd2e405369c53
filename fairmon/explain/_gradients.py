"""Gradient explainers and the random baseline, batched with torch autograd.

Conventions follow OpenXAI's explainers (captum under the hood there): attributions are gradients
of the explained class's *probability* (softmax of :meth:`Model.logits`), because OpenXAI's models
output probabilities. With a single-logit model the class-0 logit is the constant 0, so the
probability — not the logit — is what gives class-0 explanations their (negated) direction.

* ``gradient``: ∂p_c/∂x (captum ``Saliency(abs=False)``);
* ``gradient_x_input``: x ⊙ ∂p_c/∂x;
* ``smoothgrad``: mean gradient over ``n_samples`` (100) copies of x plus N(0, ``std``²) noise
  (``std`` 0.1 on the standardised inputs, OpenXAI's default);
* ``integrated_gradients``: (x − x̄) ⊙ ∫₀¹ ∂p_c/∂x(x̄ + t(x − x̄)) dt with a ``n_steps``-point
  Gauss–Legendre rule (captum's default, 50 steps) and baseline x̄ = mean of the background (the
  OpenXAI default; zeros — the standardised mean — without a background);
* ``random``: i.i.d. standard normal attributions (OpenXAI's control), independent of model and row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairmon.errors import MethodError
from fairmon.explain._prob import torch_model_errors

if TYPE_CHECKING:
    import torch

    from fairmon.registry.model import Model

__all__ = ["gradient_attributions", "random_attributions", "GRADIENT_METHODS"]

GRADIENT_METHODS = ("gradient", "gradient_x_input", "smoothgrad", "integrated_gradients")


def _grad(model: Model, X: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    import torch

    X = X.detach().clone().requires_grad_(True)
    with torch_model_errors(X):
        logits = model.logits(X)
    probs = torch.softmax(logits.double(), dim=1)  # float64: no saturation at large |logit|
    sel = probs.gather(1, labels.view(-1, 1)).sum()
    (g,) = torch.autograd.grad(sel, X)
    return g


def gradient_attributions(
    model: Model,
    Zt: torch.Tensor,
    labels: torch.Tensor,
    *,
    method: str,
    background: np.ndarray | None = None,
    n_samples: int = 100,
    std: float = 0.1,
    n_steps: int = 50,
    generator: torch.Generator | None = None,
    batch_rows: int = 4096,
) -> torch.Tensor:
    """Attributions ``(n, d)`` (float64) of ``Zt`` for class ``labels`` by a gradient ``method``."""
    import torch

    model.require_differentiable(method)
    if method not in GRADIENT_METHODS:
        raise MethodError(f"unknown gradient method {method!r}; expected one of {GRADIENT_METHODS}")
    X = Zt.to(next(model.estimator.parameters()).dtype)  # float32, or float64 for a float64 copy (stability)
    labels = labels.to(X.device)
    n, d = X.shape
    out = torch.empty((n, d), dtype=torch.float64, device=X.device)
    if method == "smoothgrad":
        if n_samples < 1 or std < 0:
            raise MethodError(f"smoothgrad needs n_samples >= 1 and std >= 0, got {n_samples}, {std}")
        step = max(1, batch_rows // n_samples)
        for s in range(0, n, step):
            x = X[s : s + step]
            r = x.shape[0]
            noise = torch.randn((n_samples, r, d), generator=generator, device=generator.device if generator else None)
            xs = (x.unsqueeze(0) + std * noise.to(x.device, x.dtype)).reshape(-1, d)
            g = _grad(model, xs, labels[s : s + r].repeat(n_samples))
            out[s : s + r] = g.reshape(n_samples, r, d).double().mean(dim=0)
        return out
    if method == "integrated_gradients":
        if n_steps < 1:
            raise MethodError(f"integrated_gradients needs n_steps >= 1, got {n_steps}")
        base = (
            torch.zeros(d, dtype=X.dtype, device=X.device)
            if background is None
            else torch.as_tensor(np.asarray(background, dtype=float).mean(axis=0), dtype=X.dtype, device=X.device)
        )
        nodes, wts = np.polynomial.legendre.leggauss(n_steps)
        alphas = torch.as_tensor((nodes + 1) / 2, dtype=X.dtype, device=X.device)
        weights = torch.as_tensor(wts / 2, dtype=torch.float64, device=X.device)
        step = max(1, batch_rows // n_steps)
        for s in range(0, n, step):
            x = X[s : s + step]
            r = x.shape[0]
            diff = x - base
            path = (base + alphas.view(-1, 1, 1) * diff.unsqueeze(0)).reshape(-1, d)
            g = _grad(model, path, labels[s : s + r].repeat(n_steps)).reshape(n_steps, r, d).double()
            out[s : s + r] = diff.double() * (weights.view(-1, 1, 1) * g).sum(dim=0)
        return out
    for s in range(0, n, batch_rows):
        x = X[s : s + batch_rows]
        g = _grad(model, x, labels[s : s + batch_rows]).double()
        out[s : s + batch_rows] = g * x.double() if method == "gradient_x_input" else g
    return out


def random_attributions(n: int, d: int, *, random_state: int | None = 0) -> np.ndarray:
    """OpenXAI's control explainer: standard normal attributions, independent of model and input."""
    return np.random.default_rng(random_state).standard_normal((n, d))

