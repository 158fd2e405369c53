"""Input checks and target resolution shared by the explainers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from fairmon.errors import MethodError

if TYPE_CHECKING:
    import torch

    from fairmon.explain._prob import ProbFn

__all__ = [
    "Target",
    "check_matrix",
    "resolve_target",
    "ERR_NOT_2D",
    "ERR_WIDTH",
    "ERR_NAN",
    "ERR_EMPTY",
    "ERR_TARGET",
]

Target = Literal["positive", "predicted"]

ERR_NOT_2D = "{name} must be a 2-D matrix (rows x encoded features), got shape {shape}"
ERR_WIDTH = "{name} has {got} columns, expected {expected} (the encoded width of the model's schema)"
ERR_NAN = "{name} contains {count} NaN or infinite values; explanations need finite encoded inputs"
ERR_EMPTY = "{name} has no rows"
ERR_TARGET = "target must be 'positive' or 'predicted', got {target!r}"


def check_matrix(Z: object, *, name: str = "Z", width: int | None = None, allow_empty: bool = False) -> np.ndarray:
    """Return ``Z`` as a finite float64 matrix or raise :class:`MethodError` naming the problem."""
    try:
        arr = np.asarray(Z, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MethodError(f"{name} is not numeric: {exc}") from exc
    if arr.ndim != 2:
        raise MethodError(ERR_NOT_2D.format(name=name, shape=arr.shape))
    if width is not None and arr.shape[1] != width:
        raise MethodError(ERR_WIDTH.format(name=name, got=arr.shape[1], expected=width))
    if arr.shape[0] == 0 and not allow_empty:
        raise MethodError(ERR_EMPTY.format(name=name))
    bad = ~np.isfinite(arr)
    if bad.any():
        raise MethodError(ERR_NAN.format(name=name, count=int(bad.sum())))
    return arr


def resolve_target(target: str, prob: ProbFn, Zt: torch.Tensor) -> torch.Tensor:
    """Class explained per row (int64 tensor): 1 for ``"positive"``, the predicted label otherwise."""
    import torch

    if target == "positive":
        return torch.ones(Zt.shape[0], dtype=torch.int64, device=Zt.device)
    if target == "predicted":
        return prob.label(Zt).to(Zt.device)
    raise MethodError(ERR_TARGET.format(target=target))
