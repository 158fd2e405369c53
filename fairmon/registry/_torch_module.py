"""A torch module trained outside fairmon, rebuilt from its builder: the wrapper the registry stores.

A team's network is not fairmon's :func:`~fairmon.registry.build_mlp`, so the registry cannot rebuild it
from a fixed config. It stores the module's ``state_dict`` (tensors only, loaded with
``weights_only=True``) and the *builder*: an importable ``package.module:function`` and its keyword
arguments, which return the untrained module. Loading imports that function on the worker, calls it and
loads the weights; nothing in the artifact runs code.

Input: fairmon hands every model the encoded, standardised matrix of its feature schema (the space the
explainers perturb). A module trained on that encoding (``input="encoded"``) is called as it is; a module
trained on the raw numeric columns (``input="raw"``, every feature numeric) gets them back through a
fixed affine map ``x = z * scale + mean`` inside the wrapper, which keeps gradients with respect to the
encoded inputs exact. ``first_hidden`` is the builder module's own when it has one (OpenXAI's RRS),
else there is none (RRS is then undefined).

Trust: the builder is code installed on the worker, named by the registry's metadata; whoever can write
the registry chooses which installed function builds the module (the metadata is trusted, see
:mod:`fairmon.registry.registry`).

Examples
--------
>>> parse_target("torch.nn:Linear")
('torch.nn', 'Linear')
>>> m = imported_module("torch.nn:Linear", {"in_features": 2, "out_features": 1}, input="raw",
...                     mean=[1.0, 2.0], scale=[2.0, 4.0])
>>> m.config()["builder"], m.config()["input"], m.n_inputs
('import', 'raw', 2)
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from fairmon.errors import SnapshotError

if TYPE_CHECKING:
    import torch

__all__ = [
    "parse_target",
    "import_builder",
    "build_module",
    "imported_module",
    "module_from_config",
    "ERR_TARGET",
    "ERR_BUILDER_IMPORT",
    "ERR_BUILDER_CALL",
]

ERR_TARGET = "the builder must be written 'package.module:function', got {value!r}"
ERR_BUILDER_IMPORT = "cannot import the builder {target!r}: {error}"
ERR_BUILDER_CALL = "the builder {target!r} called with {kwargs} did not return a torch.nn.Module: {error}"
_TARGET_RE = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*):([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)$")


def parse_target(value: str) -> tuple[str, str]:
    """``"pkg.mod:fn"`` → ``("pkg.mod", "fn")``; anything else is a :class:`SnapshotError` (:data:`ERR_TARGET`)."""
    m = _TARGET_RE.match(str(value))
    if m is None:
        raise SnapshotError(ERR_TARGET.format(value=value))
    return m.group(1), m.group(2)


def import_builder(target: str) -> Callable[..., Any]:
    """The function named by ``target`` (``package.module:function``, attributes with dots allowed)."""
    mod_name, attr = parse_target(target)
    try:
        obj: Any = importlib.import_module(mod_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise SnapshotError(ERR_BUILDER_IMPORT.format(target=target, error=exc)) from exc
    if not callable(obj):
        raise SnapshotError(ERR_BUILDER_IMPORT.format(target=target, error="not callable"))
    return obj  # type: ignore[no-any-return]


def build_module(target: str, kwargs: Mapping[str, Any]) -> torch.nn.Module:
    """``builder(**kwargs)``, checked to be a ``torch.nn.Module`` (:data:`ERR_BUILDER_CALL` otherwise)."""
    import torch

    fn = import_builder(target)
    try:
        module = fn(**dict(kwargs))
    except Exception as exc:  # noqa: BLE001 - the user's builder: any failure is reported once, named
        raise SnapshotError(ERR_BUILDER_CALL.format(target=target, kwargs=dict(kwargs), error=exc)) from exc
    if not isinstance(module, torch.nn.Module):
        raise SnapshotError(ERR_BUILDER_CALL.format(target=target, kwargs=dict(kwargs),
                                                    error=f"got {type(module).__name__}"))
    return module


def imported_module(
    target: str,
    kwargs: Mapping[str, Any],
    *,
    input: Literal["raw", "encoded"],
    n_inputs: int | None = None,
    mean: Sequence[float] | None = None,
    scale: Sequence[float] | None = None,
    inner: torch.nn.Module | None = None,
) -> torch.nn.Module:
    """The stored wrapper around the builder's module (``inner``, else a freshly built one).

    ``raw``: ``mean``/``scale`` of the schema's numeric columns (the encoded → raw map); ``encoded``:
    ``n_inputs`` is the encoded width. The wrapper's ``state_dict`` is the inner module's under
    ``inner.`` plus the ``mean``/``scale`` buffers.
    """
    import torch

    module = inner if inner is not None else build_module(target, kwargs)
    width = len(mean) if mean is not None else int(n_inputs or 0)
    mu = torch.as_tensor(list(mean) if mean is not None else [0.0] * width, dtype=torch.float32)
    sd = torch.as_tensor(list(scale) if scale is not None else [1.0] * width, dtype=torch.float32)
    wrapper: torch.nn.Module = _wrapper_class()(module, target, dict(kwargs), input, mu, sd)
    return wrapper


def module_from_config(config: Mapping[str, Any]) -> torch.nn.Module:
    """Rebuild the (untrained) wrapper from a snapshot's ``module_config``; the caller loads the weights."""
    n = int(config["n_inputs"])
    raw = config.get("input") == "raw"
    return imported_module(
        str(config["target"]), dict(config.get("kwargs") or {}),
        input="raw" if raw else "encoded", n_inputs=n,
        mean=[0.0] * n if raw else None, scale=[1.0] * n if raw else None,
    )


def _wrapper_class() -> type:
    cls = globals().get("_WRAPPER_CLASS")
    if cls is not None:
        return cls  # type: ignore[no-any-return]
    import torch

    class ImportedModule(torch.nn.Module):
        """The builder's module behind fairmon's encoded input (see the module docstring)."""

        def __init__(self, inner: torch.nn.Module, target: str, kwargs: dict[str, Any], input: str,
                     mean: torch.Tensor, scale: torch.Tensor) -> None:
            super().__init__()
            self.inner = inner
            self.target = target
            self.kwargs = kwargs
            self.input = input
            self.n_inputs = int(mean.shape[0])
            self.register_buffer("mean", mean.clone())
            self.register_buffer("scale", scale.clone())

        def _raw(self, x: torch.Tensor) -> torch.Tensor:
            if self.input != "raw":
                return x
            scale: torch.Tensor = self.get_buffer("scale")
            mean: torch.Tensor = self.get_buffer("mean")
            return x * scale.to(x.dtype) + mean.to(x.dtype)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.inner(self._raw(x))
            return out

        def first_hidden(self, x: torch.Tensor) -> torch.Tensor | None:
            fn = getattr(self.inner, "first_hidden", None)
            return fn(self._raw(x)) if callable(fn) else None

        def config(self) -> dict[str, Any]:
            return {"builder": "import", "target": self.target, "kwargs": self.kwargs, "input": self.input,
                    "n_inputs": self.n_inputs}

    ImportedModule.__module__ = __name__
    globals()["_WRAPPER_CLASS"] = ImportedModule
    return ImportedModule
