"""The one explainer entry point: ``explain(model, Z, method=...)`` on the encoded matrix.

Every explainer returns attributions ``(n, d)`` over the *encoded* standardised columns of the
model's :class:`~fairmon.schema.FeatureSchema` (one-hot columns separately);
:func:`to_columns` sums them back to the raw columns.

``target="predicted"`` explains each row's predicted class (OpenXAI's convention);
``target="positive"`` explains P(class 1) for every row (GESD's convention).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon._device import resolve_device, torch_generator
from fairmon.config import EXPLAINERS, Explainer
from fairmon.errors import MethodError
from fairmon.explain._common import ERR_TARGET, Target, check_matrix, resolve_target
from fairmon.explain._gradients import gradient_attributions, random_attributions
from fairmon.explain._kernelshap import kernelshap_batched
from fairmon.explain._library import kernelshap_library, lime_library
from fairmon.explain._lime import lime_batched
from fairmon.explain._prob import as_prob_fn

if TYPE_CHECKING:
    from fairmon.registry.model import Model
    from fairmon.schema import FeatureSchema

__all__ = ["explain", "to_columns", "METHODS", "Method", "ERR_UNKNOWN_METHOD", "ERR_UNKNOWN_PARAMS"]

#: the method names, defined once beside the spec that accepts them (``explanations.explainers``)
Method = Explainer
METHODS: tuple[str, ...] = EXPLAINERS
ERR_UNKNOWN_METHOD = "unknown explanation method {method!r}; expected one of {methods}"
ERR_UNKNOWN_PARAMS = "method {method!r} does not take parameter(s) {params}; it accepts {allowed}"

_PARAMS: dict[str, tuple[str, ...]] = {
    "lime": ("n_samples", "kernel_width", "alpha", "max_elements"),
    "kernelshap": ("n_samples", "max_elements"),
    "lime-lib": ("n_samples",),
    "kernelshap-lib": ("n_samples",),
    "gradient": ("batch_rows",),
    "gradient_x_input": ("batch_rows",),
    "smoothgrad": ("n_samples", "std", "batch_rows"),
    "integrated_gradients": ("n_steps", "batch_rows"),
    "random": (),
}


def explain(
    model: Model,
    Z: np.ndarray,
    *,
    method: Method,
    target: Target = "predicted",
    background: np.ndarray | None = None,
    random_state: int | None = 0,
    device: str | None = None,
    **params: Any,
) -> np.ndarray:
    """Attributions ``(n, d)`` of the encoded rows ``Z`` of ``model``'s schema.

    Parameters
    ----------
    model : fairmon.registry.Model
        The model; gradient methods need a torch model (:class:`MethodError` otherwise).
    Z : ndarray (n, d)
        Encoded standardised rows (``model.schema.transform(df)``).
    method : str
        ``"lime"`` / ``"kernelshap"`` (batched torch implementations of the libraries' estimators),
        ``"lime-lib"`` / ``"kernelshap-lib"`` (through the libraries), ``"gradient"``,
        ``"gradient_x_input"``, ``"smoothgrad"``, ``"integrated_gradients"``, ``"random"``.
    target : {"predicted", "positive"}
        Class explained per row.
    background : ndarray (m, d), optional
        LIME's training data / SHAP's background / IG's baseline mean. Defaults to ``Z`` itself for
        LIME (statistics of the explained rows) and to at most 100 rows of ``Z`` drawn with
        ``random_state`` for KernelSHAP; pass reference data in production.
    random_state : int
        Seeds every random draw; same inputs give the same attributions.
    device : str, optional
        ``None``/"auto", "cpu" or "cuda" for the torch computations.
    **params
        Method options: ``n_samples`` (lime 5000, kernelshap "auto", smoothgrad 100),
        ``kernel_width``/``alpha`` (lime), ``std`` (smoothgrad 0.1), ``n_steps`` (IG 50),
        ``batch_rows``/``max_elements`` (memory).

    Example
    -------
    >>> import numpy as np, pandas as pd, torch
    >>> from fairmon.schema import FeatureSchema
    >>> from fairmon.registry import Model, build_mlp
    >>> df = pd.DataFrame({"x": np.arange(8.0), "g": list("abababab")})
    >>> schema = FeatureSchema.fit(df)
    >>> _ = torch.manual_seed(0)
    >>> model = Model(build_mlp(schema.n_encoded, (4,)), schema, framework="torch", device="cpu")
    >>> explain(model, schema.transform(df), method="gradient", device="cpu").shape
    (8, 3)
    """
    import torch

    if method not in METHODS:
        raise MethodError(ERR_UNKNOWN_METHOD.format(method=method, methods=list(METHODS)))
    if target not in ("positive", "predicted"):
        raise MethodError(ERR_TARGET.format(target=target))
    unknown = sorted(set(params) - set(_PARAMS[method]))
    if unknown:
        raise MethodError(ERR_UNKNOWN_PARAMS.format(method=method, params=unknown, allowed=list(_PARAMS[method])))
    d = model.schema.n_encoded
    Z = check_matrix(Z, width=d)
    bg = None if background is None else check_matrix(background, name="background", width=d)
    dev = resolve_device(device)
    model.to(str(dev))  # every method, the library ones too, runs the model where the caller asked
    categorical = ~model.schema.continuous_mask

    if method in ("gradient", "gradient_x_input", "smoothgrad", "integrated_gradients"):
        model.require_differentiable(method)
        Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
        labels = resolve_target(target, as_prob_fn(model, device=dev), Zt)
        gen = torch_generator(random_state, dev)
        out = gradient_attributions(model, Zt, labels, method=method, background=bg, generator=gen, **params)
        return out.detach().cpu().numpy()
    if method == "random":
        return random_attributions(Z.shape[0], d, random_state=random_state)
    if method in ("lime", "lime-lib"):
        bg_l = Z if bg is None else bg
        if method == "lime":
            return lime_batched(
                model, Z, background=bg_l, target=target, categorical=categorical,
                random_state=random_state, device=str(dev), **params,
            )
        labels_np = _labels_np(model, Z, target)
        return lime_library(model, Z, labels_np, background=bg_l, categorical=categorical,
                            random_state=random_state, **params)
    bg_s = bg if bg is not None else default_shap_background(Z, random_state=random_state)
    if method == "kernelshap":
        return kernelshap_batched(model, Z, background=bg_s, target=target, random_state=random_state,
                                  device=str(dev), **params)
    return kernelshap_library(model, Z, _labels_np(model, Z, target), background=bg_s,
                              random_state=random_state, **params)


def default_shap_background(Z: np.ndarray, *, random_state: int | None = 0, size: int = 100) -> np.ndarray:
    """At most ``size`` rows of ``Z`` drawn without replacement (shap's advice: <= 100 rows)."""
    if Z.shape[0] <= size:
        return Z
    idx = np.random.default_rng(random_state).choice(Z.shape[0], size=size, replace=False)
    return Z[np.sort(idx)]


def _labels_np(model: Model, Z: np.ndarray, target: str) -> np.ndarray:
    if target == "positive":
        return np.ones(Z.shape[0], dtype=int)
    return model.predict_encoded(Z)


def to_columns(attributions: np.ndarray, schema: FeatureSchema) -> np.ndarray:
    """Sum encoded attributions back to raw columns ``(n, p)`` (one-hot blocks summed).

    Example
    -------
    >>> import pandas as pd
    >>> from fairmon.schema import FeatureSchema
    >>> schema = FeatureSchema.fit(pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]}))
    >>> to_columns(np.array([[0.5, 0.25, 0.25]]), schema).tolist()
    [[0.5, 0.5]]
    """
    A = np.asarray(attributions, dtype=float)
    if A.ndim != 2:
        raise MethodError(f"attributions must be a 2-D matrix, got shape {A.shape}")
    return schema.aggregate(A)
