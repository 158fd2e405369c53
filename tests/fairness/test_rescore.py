"""Model or data? (issue 19): the fired metric under two model versions and the documented verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import MethodError
from fairmon.fairness.rescore import Rescore, rescore_outcome, rescore_rules, rescore_sentence, verdict


@pytest.mark.parametrize(("new", "ci", "old", "baseline", "want"), [
    (0.19, (0.15, 0.23), 0.05, 0.04, "model"),      # outside, back near the baseline
    (0.19, (0.15, 0.23), 0.17, 0.04, "data"),       # inside the interval: the same within noise
    (0.19, (0.15, 0.23), 0.30, 0.04, "data"),       # outside but further from the baseline
    (0.19, (0.15, 0.23), 0.05, None, "model"),      # no baseline: outside is enough
    (0.19, None, 0.05, 0.04, "undetermined"),
    (None, (0.1, 0.2), 0.05, 0.04, "undetermined"),
    (-0.3, (-0.35, -0.25), -0.05, 0.0, "model"),    # direction-free: distances to the baseline
])
def test_verdict_rule(new: float | None, ci: tuple[float, float] | None, old: float, baseline: float | None,
                      want: str) -> None:
    assert verdict(new, ci, old, baseline=baseline) == want


def _world(seed: int = 0, n: int = 3000) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    mask = sex == "F"
    new = (rng.random(n) < np.where(mask, 0.35, 0.6)).astype(float)
    return mask, new, pd.DataFrame({"sex": sex})


def test_rules_dscore_tells_a_model_change_from_the_same_model() -> None:
    mask, new, _ = _world()
    rng = np.random.default_rng(5)
    fair_old = (rng.random(mask.size) < 0.55).astype(float)
    (vn, cn), (vo, co) = rescore_rules(new, fair_old, mask, n_bootstrap=200)
    assert vn == pytest.approx(0.25, abs=0.05) and abs(vo) < 0.05
    assert cn is not None and co is not None and cn[0] <= vn <= cn[1]
    assert verdict(vn, cn, vo, baseline=0.0) == "model"
    # the same model again (fresh noise in the decisions): within noise -> data
    same_old = (rng.random(mask.size) < np.where(mask, 0.35, 0.6)).astype(float)
    (vn2, cn2), (vo2, _) = rescore_rules(new, same_old, mask, n_bootstrap=200)
    assert verdict(vn2, cn2, vo2, baseline=0.0) == "data"


def test_outcome_series_under_both_models() -> None:
    mask, new, sex = _world(seed=1)
    old = (np.random.default_rng(2).random(mask.size) < 0.6).astype(float)
    (vn, cn), (vo, _) = rescore_outcome(new, old, sex, metric="dp_difference", group="sex", n_bootstrap=100)
    assert vn == pytest.approx(0.25, abs=0.05) and vo < 0.06 and cn is not None
    (rf, _), (ro, _) = rescore_outcome(new, old, sex, metric="selection_rate", group="sex=F", n_bootstrap=50)
    assert rf == pytest.approx(0.35, abs=0.04) and ro == pytest.approx(0.6, abs=0.04)
    with pytest.raises(MethodError, match="not an outcome metric"):
        rescore_outcome(new, old, sex, metric="gesd", group="sex")
    with pytest.raises(MethodError, match="no column"):
        rescore_outcome(new, old, sex, metric="dp_difference", group="race")


def test_rules_need_matching_lengths() -> None:
    with pytest.raises(MethodError):
        rescore_rules(np.zeros(3), np.zeros(4), np.zeros(3, dtype=bool))


def test_sentence_and_round_trip() -> None:
    r = Rescore(kind="ci_outside_range", metric="dp_difference", group="sex", old_version="v1", new_version="v2",
                value_old=0.18, value_new=0.19, ci_new=(0.15, 0.23), ci_old=(0.14, 0.22), verdict="data")
    assert Rescore.from_dict(r.to_dict()) == r
    s = rescore_sentence(metric=r.metric, group=r.group, old_version="v1", new_version="v2", value_old=0.18,
                         value_new=0.19, verdict="data")
    assert s == ("with v1 on this window's data the `dp_difference` of `sex` would be 0.18 (v2: 0.19): "
                 "the change follows the data, not the model")
