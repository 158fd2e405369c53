"""Issue 18 item 5: GESD's noise floor (permutation null over group labels) at the configured sample size."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from gesd_data import frame, logistic_model

from fairmon.errors import MethodError
from fairmon.explain.gesd import ERR_PARAM, gesd


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    return logistic_model(frame(600, wide=False, seed=2)[0])


def _linear(model):  # type: ignore[no-untyped-def]
    w = model.estimator.weight.detach().numpy()[0].astype(float)
    return lambda Z: Z * w


def test_noise_floor_covers_gesd_of_random_labels_in_at_least_90_percent_of_seeds(model) -> None:  # type: ignore[no-untyped-def]
    X, _ = frame(400, wide=True, seed=5)  # heterogeneous rows, so per-instance stability varies
    train = frame(600, wide=False, seed=2)[0]
    below = []
    for seed in range(20):
        labels = np.random.default_rng(100 + seed).integers(0, 2, len(X))  # groups that mean nothing
        res = gesd(model, X, labels, X_train=train, explainer=_linear(model), sample_size=100,
                   random_state=seed)
        assert res.noise_floor_permutations == 1000 and res.noise_floor_quantile == 0.95
        assert math.isfinite(res.noise_floor) and res.noise_floor > 0
        below.append(res.value <= res.noise_floor)
        assert res.within_noise == below[-1]
    assert sum(below) >= 18, below


def test_real_difference_stands_above_the_floor_and_floor_is_reproducible(model) -> None:  # type: ignore[no-untyped-def]
    X, g = frame(600, wide=True, seed=1)
    train = frame(600, wide=False, seed=2)[0]
    a = gesd(model, X, g, X_train=train, explainer=_linear(model), sample_size=100, random_state=3)
    b = gesd(model, X, g, X_train=train, explainer=_linear(model), sample_size=100, random_state=3)
    assert a.value > 2 * a.noise_floor and not a.within_noise
    assert a.noise_floor == b.noise_floor
    d = a.to_dict(instances=False)
    assert d["noise_floor"] == a.noise_floor and d["noise_floor_quantile"] == 0.95
    assert d["settings"]["noise_floor_permutations"] == 1000
    # the floor has its own random stream: the value is the one computed without the floor
    off = gesd(model, X, g, X_train=train, explainer=_linear(model), sample_size=100, random_state=3,
               noise_floor_permutations=0)
    assert off.value == a.value and math.isnan(off.noise_floor) and not off.within_noise


def test_three_groups_and_component_floors(model) -> None:  # type: ignore[no-untyped-def]
    X, _ = frame(600, wide=False, seed=4)
    labels = np.random.default_rng(0).integers(0, 3, len(X))
    lin = _linear(model)
    res = gesd(model, pd.DataFrame(X), labels, X_train=X, explainer=lambda Z: lin(Z), sample_size=90)
    assert math.isfinite(res.noise_floor) and res.noise_floor < 0.01  # variance scale with K > 2


@pytest.mark.parametrize(("kwargs", "name"), [({"noise_floor_quantile": 1.0}, "noise_floor_quantile"),
                                              ({"noise_floor_permutations": -1}, "noise_floor_permutations")])
def test_bad_floor_parameters(model, kwargs, name) -> None:  # type: ignore[no-untyped-def]
    X, g = frame(100, wide=False, seed=1)
    with pytest.raises(MethodError) as ei:
        gesd(model, X, g, X_train=X, explainer=_linear(model), **kwargs)
    value = next(iter(kwargs.values()))
    why = "need a quantile in (0, 1)" if name == "noise_floor_quantile" else "need an integer >= 0"
    assert str(ei.value) == ERR_PARAM.format(name=name, value=value, why=why)
