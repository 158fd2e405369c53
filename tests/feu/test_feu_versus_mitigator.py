"""FEU's pick against fairlearn's tuned ThresholdOptimizer (fairmon.feu._versus_mitigator).

The rule's two conditions are checked on constructed decisions (a contender that is better, one that
only matches production, one outside the band), the out-of-fold contender on real folds, and the
whole path on a search whose production model is unfair.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.feu._crossval import OutOfFold
from fairmon.feu._versus_mitigator import head_to_head, oof_threshold_optimizer
from fairmon.feu.labels import TUNED, baseline_label

KW = dict(utility="balanced_accuracy", band=0.10, tolerance=None, n_boot=300, random_state=0)  # floor: its own test


def _decisions(rate_a: float, rate_b: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Group a's ``n`` rows then group b's, with exactly these positive rates in random order."""
    return np.r_[rng.permutation(np.arange(n) < round(rate_a * n)), rng.permutation(np.arange(n) < round(rate_b * n))].astype(int)


def test_a_contender_better_than_production_and_the_candidate_displaces_it() -> None:
    rng = np.random.default_rng(1)
    s, y = np.repeat(["a", "b"], 400), rng.integers(0, 2, 800)
    prod, cand, to = (_decisions(a, b, 400, rng) for a, b in ((0.8, 0.3), (0.7, 0.45), (0.58, 0.55)))
    v = head_to_head(cand, prod, to, s, y, **KW)
    assert v["contender_beats_production"] and v["contender_dp_shown_lower"] and v["contender_better"]
    assert v["dp_gain_over_candidate"] == pytest.approx(v["dp_candidate"] - v["dp_contender"])
    assert 0 < v["dp_gain_over_candidate_lb"] < v["dp_gain_over_candidate"]
    assert v["rows"] == 800 and v["contender_vs_production"]["eligible"]


def test_a_contender_within_noise_of_the_candidate_does_not_displace_it() -> None:
    rng = np.random.default_rng(2)
    s, y = np.repeat(["a", "b"], 400), rng.integers(0, 2, 800)
    prod = _decisions(0.8, 0.3, 400, rng)
    cand, to = _decisions(0.6, 0.5, 400, rng), _decisions(0.6, 0.5, 400, rng)  # the same DP in distribution
    v = head_to_head(cand, prod, to, s, y, **KW)
    assert v["contender_beats_production"] and not v["contender_dp_shown_lower"] and not v["contender_better"]


def test_a_contender_outside_the_band_or_no_better_than_production_does_not_displace_it() -> None:
    rng = np.random.default_rng(3)
    s, y = np.repeat(["a", "b"], 400), rng.integers(0, 2, 800)
    prod, cand = _decisions(0.8, 0.3, 400, rng), _decisions(0.7, 0.45, 400, rng)
    low = _decisions(0.33, 0.3, 400, rng)  # parity by approving fewer: rate -0.24 from production's
    v = head_to_head(cand, prod, low, s, y, **KW)
    assert v["contender_dp_shown_lower"] and not v["contender_vs_production"]["band_ok"] and not v["contender_better"]
    v = head_to_head(cand, prod, prod.copy(), s, y, **KW)  # production itself: no gain over production
    assert not v["contender_beats_production"] and not v["contender_better"]


def test_a_contender_below_the_utility_floor_does_not_displace_it() -> None:
    rng = np.random.default_rng(4)
    s = np.repeat(["a", "b"], 400)
    prod = _decisions(0.8, 0.3, 400, rng)
    y = prod.copy()  # production is perfect; a random contender loses ~0.5 balanced accuracy
    v = head_to_head(_decisions(0.7, 0.45, 400, rng), prod, _decisions(0.56, 0.55, 400, rng), s, y,
                     **{**KW, "tolerance": 0.02})
    assert v["contender_dp_shown_lower"] and not v["contender_utility_ok"] and not v["contender_better"]


def test_out_of_fold_contender_decides_every_row_with_a_model_that_did_not_see_it() -> None:
    rng = np.random.default_rng(5)
    n = 600
    s = rng.choice(["F", "M"], n)
    score = 1 / (1 + np.exp(-(rng.normal(size=n) + (s == "M") * 1.5)))
    y = (rng.random(n) < score).astype(int)
    fold = np.arange(n) % 5
    oof = OutOfFold(fold, np.zeros((0, n)), np.zeros((0, n)), (score >= 0.5).astype(int), score, False,
                    np.ones(n, dtype=int), y=y, s=s)
    d = oof_threshold_optimizer(oof, np.zeros((n, 1)), None, random_state=0)
    assert set(np.unique(d)) <= {0, 1} and len(d) == n
    rates = {g: d[s == g].mean() for g in ("F", "M")}
    assert abs(rates["F"] - rates["M"]) < 0.12  # exact parity per fold, out of fold on the pooled rows
    assert abs((score >= 0.5)[s == "F"].mean() - (score >= 0.5)[s == "M"].mean()) > 0.25


@pytest.mark.slow
@pytest.mark.parametrize(("group_thresholds", "seed", "effect"), [(True, 38, 2.0), (False, 3, 1.5)])
def test_the_mitigator_withholds_the_candidate_only_when_decisions_may_read_the_attribute(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch, group_thresholds, seed, effect) -> None:
    """The wiring of the withholding path: with the head-to-head verdict forced to "better" (the verdict
    itself is tested above), the search registers nothing and says why — when the monitor allows
    decisions that read the protected attribute; otherwise the pick stays, and the comparison is said."""
    from _feu_data import group_effect_frame
    from test_feu_deployable import LIGHT

    import fairmon.feu._versus_mitigator as vm
    from fairmon.feu import FEUSettings, search

    real = vm.head_to_head
    monkeypatch.setattr(vm, "head_to_head", lambda *a, **k: {**real(*a, **k), "contender_better": True,
                                                             "dp_gain_over_candidate_lb": 0.01})
    from test_feu_group_thresholds import GESD  # group thresholds need a model-agnostic explainer

    light = {**LIGHT, "gesd": GESD} if group_thresholds else LIGHT
    kw = dict(features=["x1", "x2", "sex"], sensitive="sex", label="y", random_state=seed, device="cpu",
              settings=FEUSettings.small(**light, group_thresholds=group_thresholds))
    res = search(group_effect_frame(500, seed, effect=effect), registry=str(tmp_path), **kw)
    v = res.selection["versus_mitigator"]  # these seeds pass FEU's gate and have a tuned contender
    assert v["contender"] == "threshold_optimizer_tuned" and v["contender_better"]
    assert v["withheld"] is group_thresholds and res.to_dict()["selection"]["versus_mitigator"] == v
    if not group_thresholds:  # kept: registered, and the recommendation says why the mitigator cannot displace it
        assert res.selected is not None and res.selected.id == v["candidate_id"] and res.snapshot is not None
        assert "against fairlearn's ThresholdOptimizer" in res.recommendation
        assert "reads the protected attribute when it decides" in res.recommendation
        assert "retraining.group_thresholds: false" in res.recommendation
        return
    assert res.selected is None and res.model is None and res.snapshot is None
    assert not list(tmp_path.rglob("*.json"))  # nothing registered
    assert res.recommendation.startswith("no candidate better than production and fairlearn's ThresholdOptimizer")
    assert f"the candidate of evaluation {v['candidate_id']} passed FEU's gate" in res.recommendation
    assert f"tol {v['tol']:g}" in res.recommendation and baseline_label(TUNED, v["tol"]) in res.recommendation
    assert "reads the protected attribute when it decides" in res.recommendation
