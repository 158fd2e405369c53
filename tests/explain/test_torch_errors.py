"""Torch errors a user can cause (a model of the wrong dtype, an unknown device) are FairmonErrors."""

from __future__ import annotations

import numpy as np
import pytest
from explain_helpers import mixed_frame, torch_model

from fairmon._device import ERR_UNKNOWN_DEVICE, resolve_device
from fairmon.errors import DeviceError, MethodError
from fairmon.explain import explain, kernelshap_batched, lime_batched


@pytest.fixture(scope="module")
def double_model():  # type: ignore[no-untyped-def]
    """A torch model whose weights are float64: its float32 forward pass fails inside torch."""
    model = torch_model(mixed_frame(60))
    model.estimator.double()
    return model


@pytest.mark.parametrize(("method", "params"), [("lime", {"n_samples": 50}), ("kernelshap", {"n_samples": 50}), ("gradient", {})])
def test_model_of_the_wrong_dtype_is_a_method_error(double_model, method: str, params: dict) -> None:  # type: ignore[no-untyped-def]
    Z = double_model.schema.transform(mixed_frame(60))
    with pytest.raises(MethodError, match="the torch model failed on .* encoded rows of width") as err:
        explain(double_model, Z[:2], method=method, background=Z, device="cpu", **params)
    assert isinstance(err.value.__cause__, RuntimeError)


def test_batched_estimators_map_the_same_error(double_model) -> None:  # type: ignore[no-untyped-def]
    Z = double_model.schema.transform(mixed_frame(60)).astype(np.float64)
    with pytest.raises(MethodError, match="does its input layer, dtype or device"):
        lime_batched(double_model, Z[:2], background=Z, n_samples=50, device="cpu")
    with pytest.raises(MethodError, match="does its input layer, dtype or device"):
        kernelshap_batched(double_model, Z[:2], background=Z[:10], n_samples=50, device="cpu")


def test_unknown_device_string_is_a_device_error() -> None:
    with pytest.raises(DeviceError) as err:
        resolve_device("gpu")
    assert str(err.value).startswith(ERR_UNKNOWN_DEVICE.format(device="gpu", error=""))
    assert isinstance(err.value.__cause__, RuntimeError)
