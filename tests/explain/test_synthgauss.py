"""SynthGauss: the generator's guarantees, gradients rank correctly on LR, random sits near chance."""

from __future__ import annotations

import numpy as np
import pytest
from explain_helpers import lr_model

from fairmon.errors import MethodError
from fairmon.explain import cluster_centers, explain, synthgauss
from fairmon.explain.openxai import fa, pra, ra, rc, sa, sra


def test_generator_structure():
    data = synthgauss(3000, n_features=8, n_clusters=4, distance=6.0, random_state=0)
    assert data.X.shape == (3000, 8) and data.masks.shape == (3000, 8)
    np.testing.assert_array_equal(data.masks, data.cluster_masks[data.cluster])
    np.testing.assert_allclose(data.masked_weights, data.masks * data.cluster_weights[data.cluster])
    assert (data.cluster_masks.sum(axis=1) >= 1).all()
    for k in range(4):  # independent unit-variance features around each centre
        Xk = data.X[data.cluster == k] - data.centers[k]
        np.testing.assert_allclose(np.cov(Xk.T), np.eye(8), atol=0.15)
    dists = np.linalg.norm(data.centers[:, None] - data.centers[None], axis=2)
    assert dists[~np.eye(4, dtype=bool)].min() >= 6.0  # separated clusters
    expected = 1 / (1 + np.exp(-(data.X * data.masked_weights).sum(axis=1)))
    np.testing.assert_allclose(data.probs, expected)
    assert abs(data.y.mean() - data.probs.mean()) < 0.03  # Bernoulli labels
    assert list(data.frame().columns) == [f"x{j}" for j in range(8)] + ["y"]


def test_threshold_labels_split_evenly_and_same_seed_same_data():
    a = synthgauss(1000, n_features=5, n_clusters=10, labels="threshold", random_state=3)
    b = synthgauss(1000, n_features=5, n_clusters=10, labels="threshold", random_state=3)
    assert abs(a.y.mean() - 0.5) < 0.02
    np.testing.assert_array_equal(a.X, b.X)
    assert cluster_centers(4, 2, 1.0).tolist() == [[1, 0], [0, 1], [-1, 0], [0, -1]]


@pytest.mark.parametrize("kwargs", [{"sparsity": 0.0}, {"n_features": 0}, {"labels": "x"}, {"min_active": 9}])
def test_bad_arguments(kwargs):  # type: ignore[no-untyped-def]
    with pytest.raises(MethodError):
        synthgauss(10, **{"n_features": 8, **kwargs})


def test_gradients_rank_correctly_on_lr_and_random_is_near_chance():
    data = synthgauss(2000, n_features=10, n_clusters=5, weight_range=(-3.0, 3.0), random_state=0)
    df = data.frame().drop(columns="y")
    model, w, Z = lr_model(data.X, data.y, df)
    pred = model.predict_encoded(Z)
    assert 0.2 < pred.mean() < 0.8
    E = explain(model, Z, method="gradient", device="cpu")
    for fn in (fa, ra, sa, sra):
        np.testing.assert_allclose(fn(E, w, pred, k=0.5), 1.0)
    np.testing.assert_allclose(pra(E, w), 1.0)
    np.testing.assert_allclose(rc(E, w), 1.0)
    R = explain(model, Z, method="random", device="cpu", random_state=1)
    k = 5  # random top-5 of 10: expected overlap 5 * 5 / 10 -> FA = 0.5; PRA = 0.5; RC = 0
    assert fa(R, w, pred, k=k).mean() == pytest.approx(0.5, abs=0.03)
    assert pra(R, w).mean() == pytest.approx(0.5, abs=0.03)
    assert abs(rc(R, w).mean()) < 0.05
    assert sa(R, w, pred, k=k).mean() == pytest.approx(0.25, abs=0.03)  # half the shared ones agree in sign
