"""Attribution gaps (issue 19, "why disfavored") on a synthetic model whose gap has a known driver.

The model's decision depends on ``a`` (strongly) and ``b`` (weakly), never on ``region``; the group
``region = north`` has ``a`` shifted down (or up), so KernelSHAP must rank ``a`` first with the sign
of the shift, and leave ``region`` near zero.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairmon.explain.attribution_gap import GroupAttributionGap, attribution_gap
from fairmon.registry import Model
from fairmon.schema import FeatureSchema


def _world(shift: float, n: int = 1200, seed: int = 0) -> tuple[Model, pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], n, p=[0.3, 0.4, 0.3])
    inside = region == "north"
    a = rng.normal(size=n) + np.where(inside, shift, 0.0)
    b = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "b": b, "region": region})
    y = (a + 0.3 * b + 0.3 * rng.normal(size=n) > 0).astype(int)
    schema = FeatureSchema.fit(X, categorical=["region"])
    clf = LogisticRegression(max_iter=500).fit(schema.transform(X), y)
    return Model(clf, schema, framework="sklearn"), X, inside


def _gap(model: Model, X: pd.DataFrame, inside: np.ndarray, **kw: object) -> GroupAttributionGap:
    args: dict[str, object] = {"background": X.sample(40, random_state=1), "group_kind": "declared",
                               "group": "region=north", "sample_size": 120, "n_bootstrap": 200,
                               "explainer": "kernelshap", "explainer_params": {"n_samples": 64},
                               "device": "cpu", "random_state": 0}
    args.update(kw)
    return attribution_gap(model, X, inside, **args)  # type: ignore[arg-type]


def test_the_driving_feature_ranks_first_and_lowers_p_favourable_inside() -> None:
    model, X, inside = _world(shift=-1.5)
    res = _gap(model, X, inside, favorable=model.predict(X).astype(float))
    assert res.status == "ok" and res.n_inside == 120 and res.n_outside == 120
    top = res.features[0]
    assert top.feature == "a" and top.direction == "lowers" and top.significant, res.features
    assert top.ci_low is not None and top.ci_high is not None and top.ci_low <= top.difference <= top.ci_high
    # the model does not use region, and b is distributed alike inside and out
    others = {f.feature: f for f in res.features[1:]}
    assert abs(others["region"].difference) < abs(top.difference) / 5
    assert abs(others["b"].difference) < abs(top.difference) / 3
    assert res.favorable_rate_inside is not None and res.favorable_rate_outside is not None
    assert res.favorable_rate_inside < res.favorable_rate_outside
    assert top.sentence().startswith("`a` lowers P(favorable) by ")
    assert GroupAttributionGap.from_dict(res.to_dict()) == res


def test_the_sign_follows_the_shift_and_the_favourable_class() -> None:
    model, X, inside = _world(shift=+1.5, seed=1)
    up = _gap(model, X, inside)
    assert up.features[0].feature == "a" and up.features[0].direction == "raises"
    down = _gap(model, X, inside, favorable_class=0)  # P(favorable) = P(class 0): the sign flips
    assert down.features[0].feature == "a" and down.features[0].direction == "lowers"
    assert down.features[0].difference == pytest.approx(-up.features[0].difference)


def test_seeded_and_bounded_by_the_sample_size() -> None:
    model, X, inside = _world(shift=-1.0, seed=2)
    one = _gap(model, X, inside, sample_size=30, n_bootstrap=50)
    two = _gap(model, X, inside, sample_size=30, n_bootstrap=50)
    assert one == two and one.n_inside == 30 and one.n_outside == 30


def test_a_group_too_small_is_insufficient_not_zero() -> None:
    model, X, _ = _world(shift=-1.0)
    tiny = np.zeros(len(X), dtype=bool)
    tiny[:3] = True
    res = _gap(model, X, tiny)
    assert res.status == "insufficient" and res.features == () and "3 rows inside" in res.reason
