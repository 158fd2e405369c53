"""One predictive interface over scikit-learn estimators and torch modules.

Every fairmon method talks to a model through :class:`Model`: raw DataFrame in, numpy out
(``predict_proba``), or the encoded standardised matrix of the model's :class:`FeatureSchema` in
(``predict_proba_encoded``) — the space explanation perturbations live in. Torch models additionally
expose class logits and the first hidden layer as tensors for gradient explainers and the OpenXAI
stability metrics.

Conventions (documented choices):

* a scikit-learn model is either ``input="encoded"`` (fitted on ``schema.transform(df)``) or
  ``input="raw"`` (a pipeline fitted on the raw DataFrame; encoded inputs are decoded through the
  schema first, one-hot blocks by argmax);
* a torch module maps the encoded float32 matrix to either one logit of the positive class per row
  (shape ``(n,)`` or ``(n, 1)``) or two class logits ``(n, 2)``; a single logit ``z`` is represented as
  class logits ``[0, z]`` so that softmax equals sigmoid;
* ``threshold`` turns P(class 1) into a label (FEU tunes it; 0.5 otherwise);
* ``group_thresholds`` (opt-in, FEU's ``group_thresholds`` setting) replaces it per protected group:
  :meth:`Model.predict` reads the raw ``group_columns`` of the rows (several joined by ``|``) and
  applies that group's threshold, ``threshold`` for a group without one. Such a model uses the
  protected attribute at decision time (disparate treatment; see :mod:`fairmon.feu._group_thresholds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairmon._device import resolve_device
from fairmon.errors import MethodError, SchemaError
from fairmon.schema import FeatureSchema

if TYPE_CHECKING:
    import torch

__all__ = ["Model", "MLP", "build_mlp", "ERR_NOT_DIFFERENTIABLE", "ERR_GROUP_RAW"]  # noqa: F822 - MLP is built lazily

ERR_GROUP_RAW = (
    "this model applies group-specific thresholds keyed by the raw protected column(s) {columns}; predict from "
    "the raw rows (Model.predict), which must hold them"
)

ERR_NOT_DIFFERENTIABLE = (
    "method {method!r} needs gradients, but the model is a {framework} model and not differentiable; "
    "use a torch model or a model-agnostic explainer (lime, kernelshap)"
)

Framework = Literal["sklearn", "torch"]


class Model:
    """Uniform ``predict_proba`` wrapper bound to a feature schema.

    Example
    -------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "g": ["a", "b", "a", "b"]})
    >>> schema = FeatureSchema.fit(df)
    >>> est = LogisticRegression().fit(schema.transform(df), [0, 0, 1, 1])
    >>> model = Model(est, schema, framework="sklearn")
    >>> model.predict_proba(df).shape
    (4, 2)
    """

    #: the labels :meth:`predict` returns (fairmon monitors binary classifiers: class 1 is the positive
    #: class whose probability ``predict_proba[:, 1]`` is, thresholded at ``threshold``)
    classes: tuple[int, int] = (0, 1)

    def __init__(
        self,
        estimator: Any,
        schema: FeatureSchema,
        *,
        framework: Framework,
        input: Literal["raw", "encoded"] = "encoded",
        threshold: float = 0.5,
        device: str | None = None,
        group_thresholds: Mapping[str, float] | None = None,
        group_columns: Sequence[str] = (),
    ) -> None:
        if framework not in ("sklearn", "torch"):
            raise MethodError(f"unknown model framework {framework!r}; expected 'sklearn' or 'torch'")
        if framework == "torch" and input != "encoded":
            raise MethodError("torch models take the encoded matrix; input must be 'encoded'")
        if not 0.0 < threshold < 1.0:
            raise MethodError(f"threshold must be in (0, 1), got {threshold}")
        self.estimator = estimator
        self.schema = schema
        self.framework: Framework = framework
        self.input = input
        self.threshold = float(threshold)
        self.group_thresholds = None if group_thresholds is None else {str(k): float(v) for k, v in group_thresholds.items()}
        self.group_columns = tuple(str(c) for c in group_columns)
        if self.group_thresholds is not None:
            if not self.group_columns:
                raise MethodError("group_thresholds need group_columns (the raw protected column(s) they are keyed by)")
            bad = {k: v for k, v in self.group_thresholds.items() if not 0.0 < v < 1.0}
            if bad:
                raise MethodError(f"group thresholds must be in (0, 1), got {bad}")
        self._device_request = device
        if framework == "torch":
            self.estimator.eval()

    # ------------------------------------------------------------------ device
    @property
    def device(self) -> torch.device:
        return resolve_device(self._device_request)

    def to(self, device: str | None) -> Model:
        """Move a torch model to ``device`` (no-op for scikit-learn)."""
        self._device_request = device
        if self.framework == "torch":
            self.estimator.to(self.device)
        return self

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, df: pd.DataFrame) -> np.ndarray:
        """Class probabilities ``(n, 2)`` for raw rows."""
        self.schema.check_frame(df)
        if self.framework == "sklearn" and self.input == "raw":
            return self._sk_proba(df[self.schema.names])
        return self.predict_proba_encoded(self.schema.transform(df))

    def predict_proba_encoded(self, Z: np.ndarray) -> np.ndarray:
        """Class probabilities ``(n, 2)`` for rows of the encoded standardised matrix."""

        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.schema.n_encoded:
            raise SchemaError(
                f"encoded input has shape {Z.shape}, the model's schema expects (n, {self.schema.n_encoded})"
            )
        if self.framework == "sklearn":
            if self.input == "raw":
                return self._sk_proba(self.schema.inverse_transform(Z))
            return self._sk_proba(Z)
        import torch

        with torch.no_grad():
            logits = self.logits(torch.as_tensor(Z, dtype=torch.float32, device=self.device))
            return torch.softmax(logits, dim=1).double().cpu().numpy()

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """Labels 0/1 using ``threshold`` (or the row's group threshold) on P(class 1)."""
        return (self.predict_proba(df)[:, 1] >= self.thresholds(df)).astype(int)

    def predict_encoded(self, Z: np.ndarray) -> np.ndarray:
        """Labels 0/1 of encoded rows (a group-threshold model needs the raw rows: :meth:`predict`)."""
        if self.group_thresholds is not None:
            raise MethodError(ERR_GROUP_RAW.format(columns=list(self.group_columns)))
        return (self.predict_proba_encoded(Z)[:, 1] >= self.threshold).astype(int)

    def thresholds(self, df: pd.DataFrame) -> float | np.ndarray:
        """``threshold``, or per row its group's threshold read from the raw ``group_columns``."""
        if self.group_thresholds is None:
            return self.threshold
        missing = [c for c in self.group_columns if c not in df.columns]
        if missing:
            raise SchemaError(ERR_GROUP_RAW.format(columns=missing))
        g = df[list(self.group_columns)].astype(str).agg("|".join, axis=1).to_numpy()
        out = np.full(len(df), self.threshold)
        for name, t in self.group_thresholds.items():
            out[g == name] = t
        return out

    def _sk_proba(self, X: Any) -> np.ndarray:

        proba = np.asarray(self.estimator.predict_proba(X), dtype=float)
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise MethodError(f"fairmon monitors binary classifiers; predict_proba returned shape {proba.shape}")
        return proba

    # ------------------------------------------------------------------ torch-only views
    @property
    def differentiable(self) -> bool:
        return self.framework == "torch"

    def require_differentiable(self, method: str) -> torch.nn.Module:
        if not self.differentiable:
            raise MethodError(ERR_NOT_DIFFERENTIABLE.format(method=method, framework=self.framework))
        module: torch.nn.Module = self.estimator
        return module

    def logits(self, Z: torch.Tensor) -> torch.Tensor:
        """Class logits ``(n, 2)`` as a differentiable tensor (torch models only)."""
        module = self.require_differentiable("logits")
        out: torch.Tensor = module(Z)
        if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1):
            z = out.reshape(-1, 1)
            return torch_cat_zero(z)
        if out.ndim == 2 and out.shape[1] == 2:
            return out
        raise MethodError(f"torch module returned shape {tuple(out.shape)}; expected (n,), (n, 1) or (n, 2)")

    def hidden(self, Z: torch.Tensor) -> torch.Tensor | None:
        """First hidden layer after its activation, or ``None`` for a model without one.

        Needs a module exposing ``first_hidden(x)`` (as :class:`MLP` does); OpenXAI's RRS uses it.
        """
        module = self.require_differentiable("hidden")
        fn = getattr(module, "first_hidden", None)
        return fn(Z) if callable(fn) else None


def torch_cat_zero(z: torch.Tensor) -> torch.Tensor:
    import torch

    return torch.cat([torch.zeros_like(z), z], dim=1)


def build_mlp(n_inputs: int, hidden: tuple[int, ...] = (64, 32)) -> torch.nn.Module:
    """The MLP used across fairmon (FEU's 64-32 ReLU network): one logit of the positive class."""
    module: torch.nn.Module = _get_mlp()(n_inputs, hidden)
    return module


def _mlp_class() -> type:
    import torch

    class _MLP(torch.nn.Module):
        """Fully connected ReLU network emitting one logit; ``sigmoid(logit)`` = P(class 1)."""

        def __init__(self, n_inputs: int, hidden: tuple[int, ...] = (64, 32)) -> None:
            super().__init__()
            self.n_inputs = int(n_inputs)
            self.hidden_sizes = tuple(int(h) for h in hidden)
            layers: list[torch.nn.Module] = []
            prev = self.n_inputs
            for h in self.hidden_sizes:
                layers += [torch.nn.Linear(prev, h), torch.nn.ReLU()]
                prev = h
            layers.append(torch.nn.Linear(prev, 1))
            self.net = torch.nn.Sequential(*layers)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.net(x).squeeze(-1)
            return out

        def first_hidden(self, x: torch.Tensor) -> torch.Tensor | None:
            if not self.hidden_sizes:
                return None
            hidden: torch.Tensor = self.net[1](self.net[0](x))
            return hidden

        def config(self) -> dict[str, Any]:
            return {"n_inputs": self.n_inputs, "hidden": list(self.hidden_sizes)}

    _MLP.__name__ = "MLP"
    _MLP.__qualname__ = "MLP"
    return _MLP


def _get_mlp() -> type:
    cls = globals().get("_MLP_CLASS")
    if cls is None:
        cls = _mlp_class()
        cls.__module__ = __name__
        globals()["_MLP_CLASS"] = cls
    return cls


def __getattr__(name: str) -> Any:
    # MLP subclasses torch.nn.Module; build the class on first use so importing this module stays
    # light (``import fairmon`` must not import torch). Pickle finds it here by name too.
    if name == "MLP":
        return _get_mlp()
    raise AttributeError(name)
