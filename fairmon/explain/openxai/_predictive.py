"""Predictive faithfulness PGI and PGU (OpenXAI ``eval_pred_faithfulness``), batched.

PGI perturbs the top-k features of each row's explanation (by |attribution|) and keeps the rest;
PGU perturbs everything except the top-k. The score per row is the mean over ``n_samples`` (100)
perturbations of ``|P(class | x') − P(class | x)|`` — the reference takes the first probability
column; for a binary classifier this equals the change of P(class 1). A faithful explanation has a
high PGI and a low PGU. Perturbations: :func:`fairmon.explain.openxai._perturb.perturb` (Gaussian
std 0.1 on continuous columns, binary flips with probability sqrt(2/π)·0.1, one-hot groups together).
``auc=True`` integrates over k = 1..max_k like the ground-truth metrics. An all-zero explanation
row has no top-k, so its PGI/PGU is NaN (counted as ``n_nan`` by ``evaluate``; the reference would
pick the first k columns of the tie).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairmon._device import resolve_device, torch_generator
from fairmon.errors import MethodError
from fairmon.explain._common import check_matrix
from fairmon.explain._prob import as_prob_fn
from fairmon.explain.openxai._groundtruth import k_to_int
from fairmon.explain.openxai._perturb import Layout, perturb
from fairmon.registry.model import Model

__all__ = ["pgi", "pgu", "prediction_gap"]


def prediction_gap(
    f: Any,
    Z: np.ndarray,
    explanations: np.ndarray,
    *,
    invert: bool,
    k: float | int = 0.25,
    n_samples: int = 100,
    std: float = 0.1,
    layout: Layout | None = None,
    auc: bool = False,
    random_state: int | None = 0,
    device: str | None = None,
) -> np.ndarray:
    """Per-row mean |ΔP| when perturbing the top-k (``invert=False``, PGI) or the rest (PGU)."""
    import torch

    Z = check_matrix(Z)
    n, d = Z.shape
    E = check_matrix(explanations, name="explanations", width=d)
    if E.shape[0] != n:
        raise MethodError(f"explanations have {E.shape[0]} rows but Z has {n}")
    if n_samples < 1 or std < 0:
        raise MethodError(f"n_samples must be >= 1 and std >= 0, got {n_samples}, {std}")
    max_k = k_to_int(k, d)
    layout = layout or _layout_of(f, d)
    dev = resolve_device(device)
    prob = as_prob_fn(f, device=dev)
    Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
    Et = torch.as_tensor(E, dtype=torch.float64, device=dev)
    p0 = prob.p1_chunked(Zt)
    order = torch.argsort(Et.abs(), dim=1, descending=True, stable=True)
    ks = range(1, max_k + 1) if (auc and max_k > 1) else [max_k]
    vals = []
    for kk in ks:
        gen = torch_generator(random_state, dev)  # same draws for every k: only the mask changes
        top = torch.zeros((n, d), dtype=torch.bool, device=dev)
        top.scatter_(1, order[:, :kk], True)
        keep = top if invert else ~top
        res = torch.empty(n, dtype=torch.float64, device=dev)
        step = max(1, (1 << 22) // max(1, n_samples * d))
        for s in range(0, n, step):
            xp = perturb(Zt[s : s + step], n_samples, std=std, layout=layout, keep=keep[s : s + step], generator=gen)
            r = xp.shape[0]
            pp = prob.p1_chunked(xp.reshape(-1, d)).reshape(r, n_samples)
            res[s : s + r] = (pp - p0[s : s + r].unsqueeze(1)).abs().mean(dim=1)
        vals.append(res.cpu().numpy())
    out = vals[0] if len(vals) == 1 else np.trapezoid(np.array(vals), np.arange(max_k) / (max_k - 1), axis=0)
    return np.where(np.all(E == 0, axis=1), np.nan, out)


def pgi(f: Any, Z: np.ndarray, explanations: np.ndarray, **kwargs: Any) -> np.ndarray:
    """Prediction gap on important features (perturb the top-k); see :func:`prediction_gap`.

    Example
    -------
    >>> import numpy as np
    >>> f = lambda Z: 1 / (1 + np.exp(-3 * Z[:, 0]))
    >>> Z = np.zeros((2, 3)); E = np.array([[1.0, 0, 0], [0, 0, 1.0]])
    >>> v = pgi(f, Z, E, k=1, device="cpu")
    >>> bool(v[0] > 0.01 and v[1] == 0.0)
    True
    """
    return prediction_gap(f, Z, explanations, invert=False, **kwargs)


def pgu(f: Any, Z: np.ndarray, explanations: np.ndarray, **kwargs: Any) -> np.ndarray:
    """Prediction gap on unimportant features (perturb all but the top-k); see :func:`prediction_gap`."""
    return prediction_gap(f, Z, explanations, invert=True, **kwargs)


def _layout_of(f: Any, d: int) -> Layout:
    if isinstance(f, Model):
        return Layout.from_schema(f.schema)
    return Layout.all_continuous(d)
