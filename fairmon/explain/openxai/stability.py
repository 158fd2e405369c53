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

Precision (one precision end to end). The std-1e-5 perturbations change explanations and logits by
about 1e-5 relative, close to float32's resolution (6e-8 relative): float32 explanations divided by
float64 logit changes inflated the maximum ratio (ROS over 10 seeds 3.5-9.6 instead of 2.09).
With ``precision="float64"`` (the default, on CPU and CUDA alike; fp64 on the GPU) a torch model is
copied to float64 and the predicted labels, the perturbations' labels, the representations, the
logits and — for a gradient method named by ``explainer`` (``"gradient"``, ``"gradient_x_input"``,
``"smoothgrad"``, ``"integrated_gradients"``) — both explanations ``e`` (recomputed, the passed
``explanations`` are not used) and ``e'`` are computed in float64. ``precision="float32"`` uses
the model as it is, in float32 throughout (representations cast up only after the forward pass). A
callable ``explainer`` (or another method name) is called as given and its output compared in
float64; its own precision is the caller's (the model-agnostic explainers evaluate torch models in
float32), and ``e`` is then the explanation passed in.

Other documented choices: for a model without an internal representation (a scikit-learn model, or a
torch module without a hidden layer) RRS is **undefined**: every row's value is NaN and the note
:data:`RRS_UNDEFINED_NOTE` says why (the pipeline stores it as NULL with that reason). OpenXAI's reference
reports ROS under RRS's name for logistic regression; a copy of ROS would look like a second, agreeing
measurement (issue 22: RRS equal to ROS, 4.7 and 14.9, for a scikit-learn pipeline). A scikit-learn model's "logits" are ``[0, log(p1/p0)]``
(the single-logit convention of :meth:`fairmon.registry.Model.logits`). Draws come from one seeded
torch generator for all rows (the reference reseeds per row).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairmon._device import resolve_device, torch_generator
from fairmon.errors import MethodError
from fairmon.explain._common import check_matrix
from fairmon.explain._gradients import GRADIENT_METHODS, gradient_attributions
from fairmon.explain._prob import as_prob_fn
from fairmon.explain.openxai._perturb import Layout, perturb
from fairmon.registry.model import Model

if TYPE_CHECKING:
    import torch

__all__ = ["StabilityResult", "relative_stability", "Explainer", "RRS_UNDEFINED_NOTE", "Precision"]

Precision = Literal["float64", "float32"]
ERR_PRECISION = "precision must be 'float64' or 'float32', got {value!r}"

#: explains encoded rows (m, d) for the given labels (m,) -> attributions (m, d)
Explainer = Callable[[np.ndarray, np.ndarray], np.ndarray]
ERR_EXPLAINER_NAME = (
    "stability explainer {name!r} by name must be a gradient method of a torch model ({methods}); "
    "pass any other explainer as a callable (rows, labels) -> attributions"
)
RRS_UNDEFINED_NOTE = (
    "undefined: the model has no internal representation (a scikit-learn model or a torch module without "
    "a hidden layer); RRS compares explanation changes with hidden-layer changes"
)


@dataclass
class StabilityResult:
    """Per-row values of each requested stability metric, with the number of kept perturbations."""

    values: dict[str, np.ndarray]
    n_kept: np.ndarray
    notes: dict[str, str] = field(default_factory=dict)
    #: precision of the labels, representations and (for a named gradient method) the explanations
    precision: str = "float64"


def relative_stability(
    model: Model,
    Z: np.ndarray,
    explanations: np.ndarray,
    explainer: Explainer | str,
    *,
    metrics: tuple[str, ...] = ("RIS", "RRS", "ROS"),
    std: float = 1e-5,
    n_draws: int = 1000,
    n_keep: int = 100,
    random_state: int | None = 0,
    device: str | None = None,
    precision: Precision = "float64",
    explainer_params: Mapping[str, Any] | None = None,
) -> StabilityResult:
    """RIS / RRS / ROS per row in one pass (the perturbations are explained once for all three).

    ``explainer`` is a callable ``(rows, labels) -> attributions`` or the name of a gradient method
    (explained here, in ``precision``, with ``explainer_params``); see the module docstring.

    Examples
    --------
    >>> import numpy as np, pandas as pd, torch
    >>> from fairmon.registry.model import Model, build_mlp
    >>> from fairmon.schema import FeatureSchema
    >>> df = pd.DataFrame({"a": np.linspace(-1, 1, 8), "b": np.linspace(1, -1, 8) ** 2})
    >>> schema = FeatureSchema.fit(df); _ = torch.manual_seed(0)
    >>> model = Model(build_mlp(2, (4,)), schema, framework="torch", device="cpu")
    >>> Z = schema.transform(df)
    >>> res = relative_stability(model, Z, np.zeros_like(Z), "gradient", metrics=("ROS",), n_draws=20,
    ...                          n_keep=5, device="cpu")
    >>> res.precision, res.values["ROS"].shape
    ('float64', (8,))
    """
    import torch

    if precision not in ("float64", "float32"):
        raise MethodError(ERR_PRECISION.format(value=precision))
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
    model.to(str(dev))
    work = _float64(model) if precision == "float64" else model  # the model every number comes from
    prob = as_prob_fn(model, device=dev)

    def label(X: torch.Tensor) -> torch.Tensor:
        return _labels(work, prob, X)

    layout = Layout.from_schema(model.schema)
    gen = torch_generator(random_state, dev)
    Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
    y = label(Zt)

    # 1. perturbations with the same predicted label (first n_keep of n_draws)
    xs, owner = [], []
    step = max(1, (1 << 22) // (n_draws * d))
    for s in range(0, n, step):
        xp = perturb(Zt[s : s + step], n_draws, std=std, layout=layout, keep=None, generator=gen)
        r = xp.shape[0]
        yp = label(xp.reshape(-1, d)).reshape(r, n_draws)
        same = yp == y[s : s + r].unsqueeze(1)
        sel = same & (same.cumsum(dim=1) <= n_keep)
        rows, cols = torch.nonzero(sel, as_tuple=True)
        xs.append(xp[rows, cols])
        owner.append(rows + s)
    Xp = torch.cat(xs) if xs else torch.zeros((0, d), dtype=torch.float64, device=dev)
    own = torch.cat(owner) if owner else torch.zeros(0, dtype=torch.int64, device=dev)
    n_kept = torch.bincount(own, minlength=n).cpu().numpy()
    own_np = own.cpu().numpy()

    # 2. explanations of the kept perturbations, for the row's label (and of the rows themselves for a
    #    named gradient method, so that e and e' come from the same model in the same precision)
    explain_fn = _explainer_fn(work, explainer, dict(explainer_params or {}), random_state, dev)
    if isinstance(explainer, str) and work.differentiable:
        E = explain_fn(Z, y.cpu().numpy())
    if Xp.shape[0]:
        Ep = np.asarray(explain_fn(Xp.cpu().numpy(), y[own].cpu().numpy()), dtype=np.float64)
        if Ep.shape != (Xp.shape[0], d):
            raise MethodError(f"explainer returned shape {Ep.shape}, expected {(Xp.shape[0], d)}")
    else:
        Ep = np.zeros((0, d))
    exp_rel = _relative(E, Ep, own_np)

    notes: dict[str, str] = {}
    values: dict[str, np.ndarray] = {}
    model = work
    hidden_x = _hidden(model, Zt)
    for metric in metrics:
        if metric == "RIS":
            rep, rep_p = Z, Xp.cpu().numpy()
        elif metric == "RRS" and hidden_x is None:
            notes["RRS"] = RRS_UNDEFINED_NOTE
            values[metric] = np.full(n, np.nan)
            continue
        elif metric == "RRS":
            hp = _hidden(model, Xp)
            assert hp is not None and hidden_x is not None
            rep, rep_p = hidden_x, hp
        else:
            rep, rep_p = _logits(model, prob, Zt), _logits(model, prob, Xp)
        rep_rel = _relative(rep, rep_p, own_np)
        values[metric] = _max_ratio(exp_rel, rep_rel, own_np, n)
    return StabilityResult(values, n_kept, notes, precision=precision)


def _explainer_fn(
    model: Model, explainer: Explainer | str, params: dict[str, Any], random_state: int | None, dev: Any
) -> Explainer:
    """The explainer as a callable; a gradient method name explains with ``model`` (its precision)."""
    if callable(explainer):
        return explainer
    if explainer not in GRADIENT_METHODS or not model.differentiable:
        raise MethodError(ERR_EXPLAINER_NAME.format(name=explainer, methods=list(GRADIENT_METHODS)))
    import torch


    dtype = next(model.estimator.parameters()).dtype

    def fn(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
        Xt = torch.as_tensor(X, dtype=dtype, device=dev)
        lab = torch.as_tensor(labels, dtype=torch.int64, device=dev)
        gen = torch_generator(random_state, dev)
        out = gradient_attributions(model, Xt, lab, method=str(explainer), generator=gen, **params)
        return np.asarray(out.detach().double().cpu().numpy(), dtype=np.float64)

    return fn


def _labels(model: Model, prob: Any, X: torch.Tensor) -> torch.Tensor:
    """Predicted labels in the working model's precision (float64 for the float64 copy)."""
    import torch

    if not model.differentiable:
        labels: torch.Tensor = prob.label(X)
        return labels
    dtype = next(model.estimator.parameters()).dtype
    with torch.no_grad():
        p1 = torch.softmax(model.logits(X.to(dtype)).double(), dim=1)[:, 1]
    return (p1 >= model.threshold).to(torch.int64)


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

    if not model.differentiable:
        return model
    module = copy.deepcopy(model.estimator).double()
    return Model(module, model.schema, framework="torch", threshold=model.threshold,
                 device=str(model.device))


def _hidden(model: Model, X: torch.Tensor) -> np.ndarray | None:
    import torch

    if not model.differentiable:
        return None
    dtype = next(model.estimator.parameters()).dtype
    with torch.no_grad():
        h = model.hidden(X.to(dtype))
    return None if h is None else h.double().cpu().numpy()


def _logits(model: Model, prob: object, X: torch.Tensor) -> np.ndarray:
    import torch

    if model.differentiable:
        dtype = next(model.estimator.parameters()).dtype
        with torch.no_grad():
            return np.asarray(model.logits(X.to(dtype)).double().cpu().numpy())
    p = np.clip(model.predict_proba_encoded(X.cpu().numpy())[:, 1], 1e-12, 1 - 1e-12)
    return np.column_stack([np.zeros_like(p), np.log(p / (1 - p))])
