"""FEU's default mode: candidates a team would deploy, or an honest "none" (issue 16).

Small synthetic data with a strong group effect (the production model is unfair) and without one
(it is already fair), a light search, and the checks of the recommendation rule: constraints hold for
the recommended candidate, the fairlearn baselines are computed on the same split, and with nothing
better than production nothing is recommended or registered.
"""

from __future__ import annotations

import numpy as np
import pytest
from _feu_data import group_effect_frame

from fairmon.errors import ConfigError
from fairmon.feu import FEUSettings, dp_difference, predict_proba, search, train_mlps
from fairmon.feu._mitigator_constraints import TOLS
from fairmon.feu._recommend import NO_BETTER_CANDIDATE
from fairmon.feu.labels import TUNED, baseline_label

#: ``cv_below_rows=0``: these tests pin the validation-split gate (their 100-row validation splits would
#: otherwise take the cross-validated gate, tested in test_feu_crossval.py)
LIGHT = dict(population=6, generations=2, epoch_bounds=(3, 10),
             gesd={"explainer": "gradient", "sample_size": 30, "n_perturbations": 3, "stratify": True,
                   "min_group_size": 5}, cv_below_rows=0)


_data = group_effect_frame


@pytest.fixture(scope="module")
def unfair_runs(tmp_path_factory):  # type: ignore[no-untyped-def]
    reg = tmp_path_factory.mktemp("registry")
    return [search(_data(500, seed, effect=1.5), features=["x1", "x2", "sex"], sensitive="sex", label="y",
                   settings=FEUSettings.small(**LIGHT), registry=str(reg), random_state=seed, device="cpu")
            for seed in (1, 2, 3)]


@pytest.mark.slow
def test_recommended_candidates_stay_in_the_positive_rate_band_and_beat_production(unfair_runs) -> None:  # type: ignore[no-untyped-def]
    for res in unfair_runs:
        prod = res.baselines["production"]["validation"]
        for c in res.pareto:  # the front is the feasible candidates' whenever one exists
            assert c.feasible or not any(e.feasible for e in res.evaluations)
        versus = res.selection.get("versus_mitigator")  # FEU's pick against the tuned ThresholdOptimizer
        if res.selected is None:
            assert res.recommendation.startswith("no candidate better than production")
            assert res.snapshot is None
            if versus is not None:  # a candidate passed FEU's gate: withheld only for a mitigator shown better
                assert versus["withheld"] and versus["contender_better"] and versus["contender_beats_production"]
                assert versus["dp_gain_over_candidate_lb"] > 0 and versus["dp_contender"] < versus["dp_candidate"]
                assert "fairlearn's ThresholdOptimizer" in res.recommendation
            continue
        if versus is not None and versus["contender"] is not None:  # compared and kept: said, and why
            assert not versus["withheld"] and "against fairlearn's ThresholdOptimizer" in res.recommendation
            # group_thresholds is off: a mitigator shown better is said, with why it cannot displace the pick
            assert versus["contender_better"] == ("reads the protected attribute" in res.recommendation)
            assert versus["candidate_id"] == res.selected.id and versus["where"] == "on validation"
            assert versus["rows"] == res.selection["validation_rows"]  # the validation gate's rows (cv_below_rows=0)
            assert res.snapshot is not None and res.snapshot.metrics["selection"]["versus_mitigator"] == versus
        c = res.selected
        assert abs(c.validation["selection_rate"] - prod["selection_rate"]) <= 0.10 + 1e-12
        assert c.validation["balanced_accuracy"] >= prod["balanced_accuracy"] - 0.02 - 1e-12
        assert c.dp_improvement_lb is not None and c.dp_improvement_lb > 0
        # the band shrunk by the rate difference's noise (since session 7), recorded with the reason
        gate = c.recommendation_gate
        assert gate is not None and gate["eligible"] and gate["band_ok"] and gate["gain_ok"]
        assert abs(gate["rate_diff"]) + gate["rate_margin_z"] * gate["rate_prediction_se"] <= 0.10 + 1e-12
        # the margin is the difference's SE on a fresh sample the size of the test split (since session 13)
        n_read, m = res.selection["validation_rows"], res.data["split_rows"]["test"]
        assert gate["rate_fresh_rows"] == m
        assert gate["rate_prediction_se"] == pytest.approx(gate["rate_diff_se"] * np.sqrt(1 + n_read / m))
        assert gate["rate_diff"] == pytest.approx(c.validation["selection_rate"] - prod["selection_rate"])
        assert gate["simultaneous_lb"] == c.dp_improvement_lb and res.snapshot is not None
        assert res.snapshot.metrics["recommendation_gate"] == gate
        for other in res.pareto:  # every feasible front candidate says why it was (in)eligible
            if other.feasible:
                g = other.recommendation_gate
                assert g is not None and g["eligible"] == (g["gain_ok"] and g["band_ok"])
        assert c.validation["dp"] < prod["dp"]
        assert res.snapshot is not None and res.snapshot.metrics["constraints"]["positive_rate_band"] == 0.10
        assert {"production", "constant", "threshold_optimizer", "exponentiated_gradient"} <= set(
            res.snapshot.metrics["baselines"]) <= {"production", "constant", "threshold_optimizer",
                                                   "exponentiated_gradient", "threshold_optimizer_tuned"}
    # a strong effect leaves room to improve: some candidate passes FEU's gate (recommended, or withheld for a
    # ThresholdOptimizer shown better)
    assert any(res.selected is not None or "versus_mitigator" in res.selection for res in unfair_runs)


@pytest.mark.slow
def test_fairlearn_baselines_on_the_same_split(unfair_runs) -> None:  # type: ignore[no-untyped-def]
    res = unfair_runs[0]
    b = res.baselines
    assert b["constant"]["test"]["selection_rate"] == 1.0 and b["constant"]["test"]["dp"] == 0.0
    assert b["constant"]["test"]["balanced_accuracy"] == 0.5
    for name in ("threshold_optimizer", "exponentiated_gradient"):
        assert b[name]["test"]["dp"] < b["production"]["test"]["dp"]  # the mitigators do mitigate
        assert 0.5 < b[name]["test"]["balanced_accuracy"] <= 1.0
    assert res.to_dict()["baselines"].keys() == b.keys()
    assert res.gesd_noise_floor is not None and res.gesd_noise_floor > 0


@pytest.mark.slow
def test_mitigators_are_checked_against_feus_own_constraints(unfair_runs) -> None:  # type: ignore[no-untyped-def]
    """Each mitigator says, per split, whether it keeps FEU's band and utility floor, from the same metrics
    the result stores, and the recommendation names which of them meet the constraints on validation."""
    for res in unfair_runs:
        prod = res.baselines["production"]
        for name in ("threshold_optimizer", "exponentiated_gradient"):
            label = baseline_label(name)  # the report's and Slack's name
            for part in ("validation", "test"):
                m = res.baselines[name][part]
                d = m["selection_rate"] - prod[part]["selection_rate"]
                assert m["rate_diff_vs_production"] == pytest.approx(d)
                assert m["band_ok"] == (abs(d) <= 0.10 + 1e-12)
                u = m["balanced_accuracy"] - prod[part]["balanced_accuracy"]
                assert m["utility_ok"] == (u >= -0.02 - 1e-12)
            v = res.baselines[name]["validation"]
            inside = f"{label} inside FEU's constraints (DP {v['dp']:.3f}"
            assert (inside in res.recommendation) == bool(v["band_ok"] and v["utility_ok"])
            assert f"{label} outside FEU's constraints" in res.recommendation or inside in res.recommendation
        if res.snapshot is not None:  # the registry candidate records the same checks
            assert res.snapshot.metrics["baselines"]["threshold_optimizer"]["validation"]["band_ok"] == \
                res.baselines["threshold_optimizer"]["validation"]["band_ok"]
        tuned = res.baselines.get("threshold_optimizer_tuned")
        if tuned is not None:  # ThresholdOptimizer at the tol FEU's constraints pick on validation
            v = tuned["validation"]
            assert v["tol"] in TOLS[1:] and v["band_ok"] and v["utility_ok"] and tuned["test"]["tol"] == v["tol"]
            assert v["dp"] <= res.baselines["threshold_optimizer"]["validation"]["dp"] + 1e-12 or \
                not res.baselines["threshold_optimizer"]["validation"]["band_ok"] or \
                not res.baselines["threshold_optimizer"]["validation"]["utility_ok"]
            assert f"{baseline_label(TUNED, v['tol'])} inside FEU's constraints" in res.recommendation
    assert any("threshold_optimizer_tuned" in res.baselines for res in unfair_runs)


@pytest.mark.slow
def test_no_candidate_better_than_a_fair_production_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = search(_data(400, 5, effect=0.0), features=["x1", "x2", "sex"], sensitive="sex", label="y",
                 settings=FEUSettings.small(**LIGHT, baselines=False), registry=str(tmp_path), random_state=5,
                 device="cpu")
    assert res.selected is None and res.model is None and res.snapshot is None
    assert res.recommendation.startswith("no candidate better than production")
    assert not list(tmp_path.rglob("*.json"))  # nothing registered
    feasible = [c for c in res.pareto if c.feasible]
    if feasible:
        assert res.recommendation == NO_BETTER_CANDIDATE.format(n=len(feasible))
        assert all(c.recommendation_gate is not None and not c.recommendation_gate["eligible"] for c in feasible)
        assert all(c.dp_improvement_lb is not None and (c.dp_improvement_lb <= 0 or not c.recommendation_gate["band_ok"])
                   for c in feasible if c.recommendation_gate is not None)


def test_fair_training_weight_lowers_the_dp_of_the_trained_network() -> None:
    df = _data(600, 0, effect=2.0)
    Z = np.column_stack([df.x1, df.x2, (df.sex == "M").astype(float)])
    codes = (df.sex == "M").to_numpy().astype(int)
    plain, fair = train_mlps(Z, df.y.to_numpy(), [(1e-2, 20, 0), (1e-2, 20, 0)], device="cpu",
                             fairness_weights=[0.0, 20.0], groups=codes)
    dps = [dp_difference((predict_proba(net, Z) >= 0.5).astype(int), df.sex.to_numpy()) for net in (plain, fair)]
    assert dps[1] < 0.5 * dps[0]


def test_settings_modes_and_validation() -> None:
    assert FEUSettings().utility == "balanced_accuracy" and not FEUSettings().paper_mode
    paper = FEUSettings.paper()
    assert paper.paper_mode and paper.fairness_weight_bounds is None and paper.utility == "auc"
    with pytest.raises(ConfigError, match="utility"):
        FEUSettings(utility="precision")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="positive_rate_band"):
        FEUSettings(positive_rate_band=1.5)


def test_recommendation_takes_the_lowest_dp_and_breaks_ties_within_noise() -> None:
    from fairmon.errors import MethodError
    from fairmon.feu._recommend import choose_lowest_dp, dp_gain

    # no ties: the lowest DP wins even with the lowest utility (every eligible one meets the floor)
    assert choose_lowest_dp([0.10, 0.03, 0.07], [0.01, 0.01, 0.01], [0.0, 0.0, 0.0], [0.80, 0.70, 0.75],
                            gesd_floor=0.01) == 1
    # DP within one SE of the lowest: GESD beyond its floor decides first, then utility
    assert choose_lowest_dp([0.04, 0.03, 0.05], [0.02, 0.02, 0.02], [0.03, 0.06, 0.035], [0.70, 0.72, 0.74],
                            gesd_floor=0.01) == 2
    assert choose_lowest_dp([0.04, 0.03], [0.02, 0.02], [0.03, 0.06], [0.70, 0.72], gesd_floor=None) == 0
    # a non-finite GESD counts as the worst
    assert choose_lowest_dp([0.04, 0.03], [0.02, 0.02], [0.03, float("nan")], [0.70, 0.72], gesd_floor=0.0) == 0
    with pytest.raises(MethodError, match="equal, non-empty"):
        choose_lowest_dp([], [], [], [], gesd_floor=None)
    rng = np.random.default_rng(0)
    s = np.repeat(["a", "b"], 300)
    prod = np.r_[rng.random(300) < 0.7, rng.random(300) < 0.3].astype(int)
    fair = (rng.random(600) < 0.5).astype(int)
    g = dp_gain(prod, fair, s, n_boot=200, random_state=0)
    assert g.lower_bound > 0.2 and 0.01 < g.se < 0.1  # DP ~0.4 -> ~0.0, SE of a 300-row rate ~0.04
    assert dp_gain(prod, prod, s, n_boot=50, random_state=0).lower_bound == 0.0
