"""GESD's component explainers: each ``"+"``-joined name of an ``explainer`` spec as a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import MethodError
from fairmon.explain import _api  # the module, so a patched explain() is seen

if TYPE_CHECKING:
    from fairmon.config import Explainer
    from fairmon.registry.model import Model

__all__ = ["resolve_explainer", "ExplainerFn", "DEFAULT_EXPLAINER_PARAMS", "ERR_UNKNOWN_EXPLAINER"]

#: ``(Z) -> attributions``: encoded rows ``(n, d)`` in, positive-class attributions ``(n, d)`` out.
ExplainerFn = Callable[[np.ndarray], np.ndarray]

ERR_UNKNOWN_EXPLAINER = "unknown GESD explainer component {name!r}; use 'shap', 'lime', 'deepshap', a method of fairmon.explain.explain, or a callable"

#: Default options per component (override with ``explainer_params``). The libraries' defaults
#: (LIME 5000 samples; KernelSHAP ``2M + 2048`` coalitions over 100 background rows) cost minutes
#: for the ``m * (N + 1) = 1100`` rows of one GESD evaluation on a CPU, so GESD uses lighter
#: estimators: LIME with 1000 samples, KernelSHAP with 128 coalitions over 20 background rows
#: (``background_size`` of a component takes the first rows of the sampled background). DeepSHAP
#: keeps the reference's 100 background rows.
DEFAULT_EXPLAINER_PARAMS: dict[str, dict[str, Any]] = {
    "kernelshap": {"n_samples": 128, "background_size": 20},
    "lime": {"n_samples": 1000},
}

#: Aliases of component names (the paper's "SHAP" is fairmon's batched KernelSHAP).
_ALIASES = {"shap": "kernelshap", "deep": "deepshap", "deepexplainer": "deepshap"}


def resolve_explainer(
    explainer: str | ExplainerFn,
    model: Model,
    *,
    background: np.ndarray,
    train: np.ndarray,
    random_state: int,
    device: str | None,
    params: dict[str, dict[str, Any]] | None = None,
) -> list[tuple[str, ExplainerFn]]:
    """Component explainers of an ``explainer`` spec, each a ``(Z) -> attributions`` callable.

    ``"shap+lime"`` -> batched KernelSHAP and LIME (positive class) of :func:`fairmon.explain.explain`;
    ``"deepshap"`` -> shap's DeepExplainer on the torch model's P(class 1); other names are passed to
    :func:`fairmon.explain.explain` as ``method``. ``params`` maps a component name to extra keyword
    arguments for it (e.g. ``{"lime": {"n_samples": 1000}}``).
    """
    params = {k: dict(v) for k, v in (DEFAULT_EXPLAINER_PARAMS | (params or {})).items()}
    if callable(explainer):
        return [(getattr(explainer, "__name__", "custom"), explainer)]
    names = [n.strip().lower() for n in str(explainer).split("+") if n.strip()]
    if not names:
        raise MethodError(ERR_UNKNOWN_EXPLAINER.format(name=explainer))
    out: list[tuple[str, ExplainerFn]] = []
    for k, raw in enumerate(names):
        name = _ALIASES.get(raw, raw)
        extra = dict(params.get(raw, params.get(name, {})))
        bg_rows = extra.pop("background_size", None)
        bg = background if bg_rows is None else background[: int(bg_rows)]
        if name == "deepshap":
            out.append((raw, _deep_shap_fn(model, bg, device)))
        else:
            out.append((raw, _library_fn(model, name, bg, train, random_state + 7919 * k, device, extra)))
    return out


def _library_fn(
    model: Model,
    method: str,
    background: np.ndarray,
    train: np.ndarray,
    random_state: int,
    device: str | None,
    extra: dict[str, Any],
) -> ExplainerFn:
    # LIME's feature statistics come from the whole training matrix (the reference passes X_train);
    # SHAP integrates over a sample of background rows (the reference uses 100).
    bg = train if "lime" in method else background

    def fn(Z: np.ndarray) -> np.ndarray:
        try:
            return np.asarray(
                _api.explain(
                    # explain() checks the name against METHODS itself and raises its own MethodError
                    model, Z, method=cast("Explainer", method),
                    target="positive", background=bg, random_state=random_state, device=device, **extra,
                ),
                dtype=float,
            )
        except (ValueError, TypeError) as exc:
            raise MethodError(ERR_UNKNOWN_EXPLAINER.format(name=method) + f" ({exc})") from exc

    fn.__name__ = method
    return fn


def _deep_shap_fn(model: Model, background: np.ndarray, device: str | None) -> ExplainerFn:
    """shap.DeepExplainer on P(class 1) of a torch model (the reference code's SHAP)."""
    import shap
    import torch

    module = model.require_differentiable("deepshap")
    dev = resolve_device(device)

    class _PositiveProbability(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner
            self.sigmoid = torch.nn.Sigmoid()
            self.softmax = torch.nn.Softmax(dim=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = self.inner(x)
            if out.ndim == 2 and out.shape[1] == 2:
                prob: torch.Tensor = self.softmax(out)[:, 1:2]
                return prob
            sig: torch.Tensor = self.sigmoid(out.reshape(-1, 1))
            return sig

    wrapped = _PositiveProbability(module).to(dev).eval()
    bg = torch.as_tensor(background, dtype=torch.float32, device=dev)
    explainer = shap.DeepExplainer(wrapped, bg)

    def fn(Z: np.ndarray) -> np.ndarray:
        vals = explainer.shap_values(torch.as_tensor(Z, dtype=torch.float32, device=dev), check_additivity=False)
        if isinstance(vals, list):
            vals = vals[0]
        arr = np.asarray(vals, dtype=float)
        return arr.reshape(arr.shape[0], -1)

    fn.__name__ = "deepshap"
    return fn


