"""Relative stability RIS, RRS, ROS (OpenXAI ``eval_relative_stability``), batched.

For each row x with explanation e and predicted label y:

1. draw ``n_draws`` (1000) perturbations x' with std ``1e-5`` (continuous noise, binary flips with
   probability sqrt(2/π)·1e-5, one-hot groups together) and keep the first ``n_keep`` (100) whose
   predicted label is still y;
2. explain every kept x' for label y with the same explainer;
3. ratio = (‖e − e'‖₂ / ‖e‖₂) / (‖r − r'‖₂ / ‖r‖₂) with the representation r = x (RIS), the first
   hidden layer after its activation (RRS) or the class logits (ROS);
4. the row's value is the maximum ratio over the kept x'. A perturbation whose ratio is undefined
   (zero or NaN denominator, e.g. ‖e‖ = 0 or r' = r) is skipped; a row with no valid perturbation is
   NaN and is counted (``n_nan`` in :func:`~fairmon.explain.openxai.evaluate`).

Documented choices: ``e`` is the explanation passed in (computed by the same explainer) rather than
recomputed; representations are computed with a float64 copy of a torch model (float32 cannot
resolve the changes caused by std-1e-5 noise reliably); for a model without a hidden layer (and for scikit-learn models) RRS is computed as ROS,
as the reference does for logistic regression; a scikit-learn model's "logits" are ``[0, log(p1/p0)]``
(the single-logit convention of :meth:`fairmon.registry.Model.logits`). Draws come from one seeded
torch generator for all rows (the reference reseeds per row).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from fairmon.errors import MethodError
from fairmon.explain.openxai._perturb import Layout, perturb

if TYPE_CHECKING:
    import torch

    from fairmon.registry.model import Model

__all__ = ["StabilityResult", "relative_stability", "Explainer", "RRS_AS_ROS_NOTE"]

#: explains encoded rows (m, d) for the given labels (m,) -> attributions (m, d)
Explainer = Callable[[np.ndarray, np.ndarray], np.ndarray]
RRS_AS_ROS_NOTE = "RRS computed as ROS: the model has no hidden layer (OpenXAI's convention)"


@dataclass
class StabilityResult:
    """Per-row values of each requested stability metric, with the number of kept perturbations."""

    values: dict[str, np.ndarray]
    n_kept: np.ndarray
    notes: dict[str, str] = field(default_factory=dict)


def relative_stability(
    model: Model,
    Z: np.ndarray,
    explanations: np.ndarray,
    explainer: Explainer,
    *,
    metrics: tuple[str, ...] = ("RIS", "RRS", "ROS"),
    std: float = 1e-5,
    n_draws: int = 1000,
    n_keep: int = 100,
    random_state: int | None = 0,
    device: str | None = None,
) -> StabilityResult:
    """RIS / RRS / ROS per row in one pass (the perturbations are explained once for all three)."""
    import torch

    from fairmon._device import resolve_device, torch_generator
    from fairmon.explain._common import check_matrix
    from fairmon.explain._prob import as_prob_fn

    bad = sorted(set(metrics) - {"RIS", "RRS", "ROS"})
    if bad:
        raise MethodError(f"unknown stability metric(s) {bad}; expected RIS, RRS, ROS")
    if n_draws < 1 or not 1 <= n_keep <= n_draws:
        raise MethodError(f"need n_draws >= 1 and 1 <= n_keep <= n_draws, got {n_draws}, {n_keep}")
    d = model.schema.n_encoded
    Z = check_matrix(Z, width=d)
    E = check_matrix(explanations, name="explanations", width=d)
    n = Z.shape[0]
    if E.shape[0] != n:
        raise MethodError(f"explanations have {E.shape[0]} rows but Z has {n}")
    dev = resolve_device(device)
    prob = as_prob_fn(model, device=dev)
    layout = Layout.from_schema(model.schema)
    gen = torch_generator(random_state, dev)
    Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
    y = prob.label(Zt)

    # 1. perturbations with the same predicted label (first n_keep of n_draws)
    xs, owner = [], []
    step = max(1, (1 << 22) // (n_draws * d))
    for s in range(0, n, step):
        xp = perturb(Zt[s : s + step], n_draws, std=std, layout=layout, keep=None, generator=gen)
        r = xp.shape[0]
        yp = prob.label(xp.reshape(-1, d)).reshape(r, n_draws)
        same = yp == y[s : s + r].unsqueeze(1)
        sel = same & (same.cumsum(dim=1) <= n_keep)
        rows, cols = torch.nonzero(sel, as_tuple=True)
        xs.append(xp[rows, cols])
        owner.append(rows + s)
    Xp = torch.cat(xs) if xs else torch.zeros((0, d), dtype=torch.float64, device=dev)
    own = torch.cat(owner) if owner else torch.zeros(0, dtype=torch.int64, device=dev)
    n_kept = torch.bincount(own, minlength=n).cpu().numpy()
    own_np = own.cpu().numpy()

    # 2. explanations of the kept perturbations, for the row's label
    if Xp.shape[0]:
        Ep = np.asarray(explainer(Xp.cpu().numpy(), y[own].cpu().numpy()), dtype=float)
        if Ep.shape != (Xp.shape[0], d):
            raise MethodError(f"explainer returned shape {Ep.shape}, expected {(Xp.shape[0], d)}")
    else:
        Ep = np.zeros((0, d))
    exp_rel = _relative(E, Ep, own_np)

    notes: dict[str, str] = {}
    values: dict[str, np.ndarray] = {}
    model = _float64(model)  # representation changes under std 1e-5 noise need float64 resolution
    hidden_x = _hidden(model, Zt)
    for metric in metrics:
        if metric == "RIS":
            rep, rep_p = Z, Xp.cpu().numpy()
        elif metric == "RRS" and hidden_x is not None:
            hp = _hidden(model, Xp)
            assert hp is not None
            rep, rep_p = hidden_x, hp
        else:
            if metric == "RRS":
                notes["RRS"] = RRS_AS_ROS_NOTE
            rep, rep_p = _logits(model, prob, Zt), _logits(model, prob, Xp)
        rep_rel = _relative(rep, rep_p, own_np)
        values[metric] = _max_ratio(exp_rel, rep_rel, own_np, n)
    return StabilityResult(values, n_kept, notes)


def _relative(base: np.ndarray, pert: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """‖base[owner] − pert‖₂ / ‖base[owner]‖₂ per perturbation (NaN where ‖base‖ = 0)."""
    b = base[owner]
    num = np.linalg.norm(b - pert, axis=1)
    den = np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


def _max_ratio(exp_rel: np.ndarray, rep_rel: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    valid = ~np.isnan(exp_rel) & ~np.isnan(rep_rel) & (rep_rel != 0)
    ratio = np.where(valid, exp_rel / np.where(valid, rep_rel, 1.0), -np.inf)
    out = np.full(n, -np.inf)
    np.maximum.at(out, owner, ratio)
    has = np.zeros(n, dtype=bool)
    has[owner[valid]] = True
    return np.where(has, np.maximum(out, 0.0), np.nan)


def _float64(model: Model) -> Model:
    """A float64 copy of a torch model (same weights) for the representation metrics."""
    import copy

    from fairmon.registry.model import Model

    if not model.differentiable:
        return model
    module = copy.deepcopy(model.estimator).double()
    return Model(module, model.schema, framework="torch", threshold=model.threshold,
                 device=str(model.device))


def _hidden(model: Model, X: torch.Tensor) -> np.ndarray | None:
    import torch

    if not model.differentiable:
        return None
    with torch.no_grad():
        h = model.hidden(X.to(torch.float64))
    return None if h is None else h.double().cpu().numpy()


def _logits(model: Model, prob: object, X: torch.Tensor) -> np.ndarray:
    import torch

    if model.differentiable:
        with torch.no_grad():
            return model.logits(X.to(torch.float64)).double().cpu().numpy()
    p = np.clip(model.predict_proba_encoded(X.cpu().numpy())[:, 1], 1e-12, 1 - 1e-12)
    return np.column_stack([np.zeros_like(p), np.log(p / (1 - p))])
