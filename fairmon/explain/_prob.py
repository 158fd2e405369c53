"""One probability interface for every explainer: ``P(class 1 | encoded rows)`` as a torch tensor.

The batched estimators (LIME, KernelSHAP) and the OpenXAI metrics evaluate the model on many
synthetic rows at once. They accept a :class:`fairmon.registry.Model` or a plain callable so other
methods (GESD) can explain arbitrary probability functions of encoded rows:

* a torch ``Model`` is evaluated on the device without leaving torch (float32 forward pass, results
  in float64);
* a scikit-learn ``Model`` goes through ``predict_proba_encoded`` (numpy round trip on the CPU);
* a plain callable takes encoded rows and returns ``(m, 2)`` class probabilities or ``(m,)``
  P(class 1); ``fn_input="numpy"`` (default) hands it a float64 numpy array, ``fn_input="torch"`` a
  float64 tensor on the device.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairmon.errors import DeviceError, MethodError
from fairmon.registry.model import Model

if TYPE_CHECKING:
    import torch

__all__ = [
    "ProbFn",
    "as_prob_fn",
    "FnInput",
    "torch_model_errors",
    "ERR_BAD_OUTPUT",
    "ERR_NOT_CALLABLE",
    "ERR_TORCH_MODEL",
    "ERR_DEVICE_MEMORY",
]

FnInput = Literal["numpy", "torch"]
ERR_BAD_OUTPUT = (
    "probability function returned shape {shape} for {rows} rows; expected (rows, 2) class probabilities "
    "or (rows,) P(class 1)"
)
ERR_NOT_CALLABLE = "expected a fairmon Model or a callable of encoded rows, got {type}"
ERR_TORCH_MODEL = (
    "the torch model failed on {rows} encoded rows of width {width} (does its input layer, dtype or device "
    "match the schema's encoded matrix?): {error}"
)
ERR_DEVICE_MEMORY = "the device ran out of memory evaluating the model on {rows} rows: {error}"


@contextmanager
def torch_model_errors(Z: Any) -> Iterator[None]:
    """Map torch's errors from a model forward pass on rows ``Z`` into the FairmonError tree.

    A user causes these with a model whose input width, dtype or device does not match the encoded
    matrix (``RuntimeError: mat1 and mat2 ...``) → :class:`~fairmon.errors.MethodError`; running out
    of GPU memory → :class:`~fairmon.errors.DeviceError`.

    >>> import torch
    >>> net = torch.nn.Linear(3, 1).double()
    >>> with torch_model_errors(torch.zeros(2, 3)):  # doctest: +ELLIPSIS
    ...     net(torch.zeros(2, 3))
    Traceback (most recent call last):
    ...
    fairmon.errors.MethodError: the torch model failed on 2 encoded rows of width 3 ...
    """
    import torch  # heavy: callers already hold torch tensors

    try:
        yield
    except torch.cuda.OutOfMemoryError as exc:
        raise DeviceError(ERR_DEVICE_MEMORY.format(rows=Z.shape[0], error=exc)) from exc
    except RuntimeError as exc:
        width = Z.shape[1] if Z.ndim > 1 else 1
        raise MethodError(ERR_TORCH_MODEL.format(rows=Z.shape[0], width=width, error=exc)) from exc


class ProbFn:
    """``P(class 1)`` and predicted labels of encoded rows, as float64 tensors on ``device``."""

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        device: torch.device,
        fn_input: FnInput,
        threshold: float = 0.5,
        torch_module: Any = None,
        model: Any = None,
    ) -> None:
        self._fn = fn
        self.device = device
        self.fn_input = fn_input
        self.threshold = float(threshold)
        self.torch_module = torch_module
        self.model = model

    def p1(self, Z: torch.Tensor) -> torch.Tensor:
        """P(class 1) of rows ``Z`` (any float dtype) as a float64 tensor ``(m,)`` on the device."""
        import torch

        m = Z.shape[0]
        if self.torch_module is not None:
            with torch.no_grad(), torch_model_errors(Z):
                out = self.torch_module(Z.to(self.device, torch.float32))
                if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1):  # one logit: sigmoid == softmax([0, z])
                    return torch.sigmoid(out.reshape(-1).double())
                logits = self.model.logits(Z.to(self.device, torch.float32))
                return torch.softmax(logits.double(), dim=1)[:, 1]
        if self.fn_input == "torch":
            out = self._fn(Z.to(self.device, torch.float64))
            out = torch.as_tensor(out, device=self.device, dtype=torch.float64)
        else:
            arr = np.asarray(self._fn(Z.detach().cpu().numpy().astype(np.float64)), dtype=np.float64)
            out = torch.as_tensor(arr, device=self.device, dtype=torch.float64)
        if out.ndim == 2 and out.shape == (m, 2):
            return out[:, 1]
        if out.ndim == 2 and out.shape == (m, 1):
            return out[:, 0]
        if out.ndim == 1 and out.shape[0] == m:
            return out
        raise MethodError(ERR_BAD_OUTPUT.format(shape=tuple(out.shape), rows=m))

    def p1_chunked(self, Z: torch.Tensor, *, chunk: int = 262_144) -> torch.Tensor:
        import torch

        if Z.shape[0] <= chunk:
            return self.p1(Z)
        return torch.cat([self.p1(Z[i : i + chunk]) for i in range(0, Z.shape[0], chunk)])

    def first_layer(self) -> tuple[torch.Tensor, torch.Tensor, Callable[[torch.Tensor], torch.Tensor]] | None:
        """``(W, b, rest)`` when the model is a one-logit ``Linear`` -> ... stack, else ``None``.

        Why: KernelSHAP evaluates the model on background rows with some columns replaced by the
        explained row's values. Through a first ``Linear`` layer that is ``W b_k + b + W((x - b_k) * m)``,
        so the first layer can run on the few columns that differ instead of on materialised
        synthetic rows (same function, fewer multiply-adds). ``rest`` maps first-layer
        pre-activations (float32; overwritten) to P(class 1) (float64). Recognised: fairmon's MLP
        (:func:`fairmon.registry.build_mlp`) and a plain ``torch.nn.Sequential`` whose first
        module is a ``Linear`` and whose last is a ``Linear`` with one output.
        """
        import torch

        mod = self.torch_module
        if mod is None:
            return None
        if isinstance(mod, torch.nn.Sequential):
            net = mod
        elif hasattr(mod, "hidden_sizes") and hasattr(mod, "first_hidden") and isinstance(
            getattr(mod, "net", None), torch.nn.Sequential
        ):
            net = mod.net
        else:
            return None
        if len(net) < 2 or not isinstance(net[0], torch.nn.Linear) or not isinstance(net[-1], torch.nn.Linear):
            return None
        if net[-1].out_features != 1:
            return None
        first = net[0]
        relu_first = isinstance(net[1], torch.nn.ReLU)  # applied in place on the caller's pre-activations
        tail = torch.nn.Sequential(*list(net)[2 if relu_first else 1 :])
        W = first.weight.detach().to(self.device, torch.float32)
        b = (
            first.bias.detach().to(self.device, torch.float32)
            if first.bias is not None
            else torch.zeros(W.shape[0], dtype=torch.float32, device=self.device)
        )

        def rest(h: torch.Tensor) -> torch.Tensor:
            with torch.no_grad(), torch_model_errors(h):
                if relu_first:
                    h = torch.relu_(h)
                return torch.sigmoid(tail(h).reshape(-1).double())

        return W, b, rest

    @property
    def work_dtype(self) -> torch.dtype:
        """dtype for synthetic rows: float32 when a torch model consumes them (it casts anyway)."""
        import torch

        return torch.float32 if self.torch_module is not None else torch.float64

    def label(self, Z: torch.Tensor) -> torch.Tensor:
        """Predicted labels (int64) with the model's threshold on P(class 1)."""
        import torch

        return (self.p1_chunked(Z) >= self.threshold).to(torch.int64)


def as_prob_fn(f: Any, *, device: torch.device, fn_input: FnInput = "numpy") -> ProbFn:
    """Wrap a :class:`~fairmon.registry.Model` or a callable into a :class:`ProbFn`."""
    if fn_input not in ("numpy", "torch"):
        raise MethodError(f"fn_input must be 'numpy' or 'torch', got {fn_input!r}")
    if isinstance(f, Model):
        if f.framework == "torch":
            f.to(str(device))
            return ProbFn(f.predict_proba_encoded, device=device, fn_input="numpy", threshold=f.threshold,
                          torch_module=f.estimator, model=f)
        return ProbFn(f.predict_proba_encoded, device=device, fn_input="numpy", threshold=f.threshold, model=f)
    if isinstance(f, ProbFn):
        return f
    if not callable(f):
        raise MethodError(ERR_NOT_CALLABLE.format(type=type(f).__name__))
    return ProbFn(f, device=device, fn_input=fn_input)
