"""Registering a torch module trained outside fairmon: its weights, its builder, a checked round trip.

The user passes the module's ``state_dict`` file (``torch.save(module.state_dict(), PATH)``), the builder
that makes the untrained module (``package.module:function`` plus keyword arguments) and reference
rows. What fairmon must know is the module's input: fairmon's encoded matrix of the features
(``encoded``: standardised numeric columns, one-hot categories, the layout of
:class:`~fairmon.schema.FeatureSchema`) or the raw numeric columns in order (``raw``). It is detected
from the widths the module accepts (the encoded width and the number of raw columns differ as soon as
a feature is categorical). When every feature is numeric both widths are equal; the mode whose decisions
agree with the reference label on clearly more rows (at least :data:`MIN_LABEL_MARGIN` more) is taken,
else registration is refused asking for ``--input``.

The check (:class:`~fairmon.registry._import.RegistrationCheck`) compares the decisions of the snapshot
*as the registry will load it* (builder rebuilt, weights loaded, wrapped in
:class:`~fairmon.registry.Model`) with the original module's own on the reference rows, given the
inputs of the detected mode; registration is refused above ``tolerance``. The rows' agreement with the
label under the chosen mode is stored with it (``metrics.registration_check.label_agreement``).

Examples
--------
>>> import numpy as np, pandas as pd, torch
>>> ref = pd.DataFrame({"x": np.linspace(0, 10, 40), "g": ["a", "b"] * 20})
>>> ref["y"] = (ref["x"] > 5).astype(int)
>>> _ = torch.manual_seed(0)
>>> net = torch.nn.Linear(3, 1)  # x standardised + g one-hot: fairmon's encoded width
>>> info, check = register_torch(net, builder="torch.nn:Linear", builder_kwargs={"in_features": 3,
...     "out_features": 1}, registry=Registry("memory://doctest-torch-import"), name="net", reference=ref,
...     label="y")
>>> info.framework, check.input, check.agreement
('torch', 'encoded', 1.0)
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import SnapshotError
from fairmon.registry._import import RegistrationCheck, model_features
from fairmon.registry._torch_module import imported_module
from fairmon.registry.model import Model
from fairmon.registry.registry import Registry, SnapshotInfo, Status
from fairmon.schema import FeatureSchema

if TYPE_CHECKING:
    import torch

__all__ = [
    "register_torch",
    "load_state_dict",
    "detect_torch_input",
    "MIN_LABEL_MARGIN",
    "ERR_STATE",
    "ERR_WIDTH",
    "ERR_RAW_CATEGORICAL",
    "ERR_AMBIGUOUS",
    "ERR_ROUND_TRIP",
]

InputMode = Literal["raw", "encoded"]

#: how much more often one input mode must agree with the label to be chosen when both widths fit
MIN_LABEL_MARGIN = 0.05
ERR_STATE = "cannot load {path!r} as a torch state_dict (torch.save(module.state_dict(), PATH)): {error}"
ERR_WIDTH = (
    "the module accepts none of fairmon's inputs for features {features}: the encoded matrix has "
    "{n_enc} columns, the raw numeric columns {n_raw} ({error}); name the module's input columns with "
    "--features (without it: every reference column but --label)"
)
ERR_RAW_CATEGORICAL = (
    "input mode 'raw' needs every feature numeric (the module is given the raw columns as floats); "
    "categorical: {columns}"
)
ERR_AMBIGUOUS = (
    "every feature is numeric, so the module accepts both fairmon's encoded (standardised) columns and "
    "the raw ones; {detail}: pass --input raw or --input encoded"
)
ERR_ROUND_TRIP = (
    "the snapshot as fairmon loads it (builder {target!r} rebuilt, weights loaded) agrees with the "
    "module's own decisions on {rate:.1%} of the {rows} reference rows (tolerance: {tol:.1%} "
    "disagreement); check --builder-kwargs and that the state_dict belongs to this builder"
)


def load_state_dict(path: str | Path) -> dict[str, Any]:
    """The tensors of a state_dict file, loaded with ``weights_only=True`` (no code runs)."""
    import torch

    try:
        state = torch.load(Path(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any torch/pickle failure is the user's file, reported once
        raise SnapshotError(ERR_STATE.format(path=str(path), error=exc)) from exc
    if isinstance(state, Mapping) and "state_dict" in state and isinstance(state["state_dict"], Mapping):
        state = state["state_dict"]
    if not isinstance(state, Mapping) or not all(isinstance(k, str) for k in state):
        raise SnapshotError(ERR_STATE.format(path=str(path), error=f"holds a {type(state).__name__}"))
    return dict(state)


def _own_proba(module: torch.nn.Module, X: np.ndarray) -> np.ndarray:
    """P(class 1) of the module on ``X`` (one logit: sigmoid; two: softmax), fairmon's convention."""
    import torch

    with torch.no_grad():
        out = module(torch.tensor(np.array(X, dtype=np.float32)))
        if out.ndim == 2 and out.shape[1] == 2:
            p = torch.softmax(out, dim=1)[:, 1]
        else:
            p = torch.sigmoid(out.reshape(-1))
    out_np: np.ndarray = p.double().numpy()
    return out_np


def _inputs(schema: FeatureSchema, frame: pd.DataFrame, mode: InputMode) -> np.ndarray:
    if mode == "encoded":
        return schema.transform(frame)
    raw: np.ndarray = frame[schema.names].to_numpy(dtype=float)
    return raw


def _accepts(module: torch.nn.Module, width: int) -> str | None:
    """None when the module runs on ``(2, width)`` zeros, else its error text."""
    try:
        _own_proba(module, np.zeros((2, width)))
    except Exception as exc:  # noqa: BLE001 - a shape error of any layer means "not this width"
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return None


def detect_torch_input(
    module: torch.nn.Module, schema: FeatureSchema, reference: pd.DataFrame, *, label: str | None = None,
    threshold: float = 0.5,
) -> InputMode:
    """The module's input mode (module docstring): by accepted width, then by label agreement."""
    numeric = all(c.kind == "numeric" for c in schema.columns)
    enc_err = _accepts(module, schema.n_encoded)
    raw_err = _accepts(module, len(schema.names)) if numeric else "categorical features"
    if enc_err is not None and raw_err is not None:
        raise SnapshotError(ERR_WIDTH.format(features=schema.names, n_enc=schema.n_encoded, n_raw=len(schema.names),
                                             error=enc_err))
    if raw_err is not None:
        return "encoded"
    if enc_err is not None:
        return "raw"
    if label is None or label not in reference.columns:
        raise SnapshotError(ERR_AMBIGUOUS.format(detail="no --label to tell them apart"))
    y = reference[label].to_numpy()
    rates = {m: float(np.mean((_own_proba(module, _inputs(schema, reference, m)) >= threshold).astype(int) == y))
             for m in ("encoded", "raw")}
    if abs(rates["encoded"] - rates["raw"]) < MIN_LABEL_MARGIN:
        raise SnapshotError(ERR_AMBIGUOUS.format(
            detail=f"their decisions agree with the label on {rates['encoded']:.1%} (encoded) and "
            f"{rates['raw']:.1%} (raw) of the rows"))
    return "encoded" if rates["encoded"] > rates["raw"] else "raw"


def register_torch(
    module: torch.nn.Module,
    *,
    builder: str,
    builder_kwargs: Mapping[str, Any] | None = None,
    registry: Registry,
    name: str,
    reference: pd.DataFrame,
    label: str | None = None,
    features: list[str] | None = None,
    input: InputMode | None = None,
    tolerance: float = 0.0,
    threshold: float = 0.5,
    status: Status = "production",
    description: str = "",
) -> tuple[SnapshotInfo, RegistrationCheck]:
    """Register a trained torch module (with its builder) after a checked round trip (module docstring).

    ``module`` holds the trained weights (e.g. ``builder(**builder_kwargs)`` with the user's state_dict
    loaded); the registry stores its state_dict and the builder. Raises
    :class:`~fairmon.errors.SnapshotError` when the input mode cannot be told, or when the loaded
    snapshot's decisions differ from the module's own on more than ``tolerance`` of the rows (nothing
    is written then).
    """
    if not 0.0 <= tolerance <= 1.0:
        raise SnapshotError(f"tolerance must be in [0, 1], got {tolerance}")
    module.eval()
    kwargs = dict(builder_kwargs or {})
    cols = model_features(module, reference, label=label, features=features)
    schema = FeatureSchema.fit(reference, columns=cols)
    if input == "raw" and not all(c.kind == "numeric" for c in schema.columns):
        raise SnapshotError(ERR_RAW_CATEGORICAL.format(columns=[c.name for c in schema.columns if c.kind != "numeric"]))
    mode: InputMode = input or detect_torch_input(module, schema, reference, label=label, threshold=threshold)
    raw = mode == "raw"
    wrapper = imported_module(
        builder, kwargs, input=mode, n_inputs=schema.n_encoded,
        mean=[c.mean for c in schema.columns] if raw else None,
        scale=[c.scale for c in schema.columns] if raw else None, inner=module,
    )
    model = Model(wrapper, schema, framework="torch", threshold=threshold, device="cpu")
    # the round trip: register where nothing lasts, load it as a worker would, compare decisions
    scratch = Registry(f"memory://fairmon-register-check-{uuid.uuid4().hex}")
    scratch.register(model, name=name)
    loaded = scratch.load(name, device="cpu")
    scratch.fs.rm(scratch.root, recursive=True)
    own = (_own_proba(module, _inputs(schema, reference, mode)) >= threshold).astype(int)
    ours = loaded.predict(reference[cols])
    check = RegistrationCheck(mode, mode, len(reference), int(np.sum(own == ours)), tolerance)
    if not check.passed:
        raise SnapshotError(ERR_ROUND_TRIP.format(target=builder, rate=check.agreement, rows=check.rows, tol=tolerance))
    record: dict[str, Any] = {**check.to_dict(), "compared_with": "module(inputs) before registration",
                              "builder": builder}
    if label is not None and label in reference.columns:
        record["label_agreement"] = float(np.mean(own == reference[label].to_numpy()))
    info = registry.register(model, name=name, status=status, metrics={"registration_check": record},
                             description=description)
    return info, check
