"""``time_budget_s`` over the whole FEU step (:mod:`fairmon.feu._budget`, sessions 16-17).

The estimate charges a refit stack at least a whole generation's step; the plan refits the lowest
validation DP first, as many as fit, at least one; the search's reserve counts the feasible front only;
candidates not refit are recorded as not eligible and never recommended; a search out of time refits
only its most promising candidate, and one with time to spare refits all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _feu_data import group_effect_frame

from fairmon.feu import FEUSettings, predict_proba, search
from fairmon.feu._budget import NOT_REFIT, StepBudget, TrainingClock, plan_refits, reserve_termination
from fairmon.feu._choose import _all_feasible, _production, _recommend
from fairmon.feu._crossval import CVGate
from fairmon.feu._data import _prepare
from fairmon.feu._evaluate import _Evaluator

LIGHT = dict(population=6, generations=3, epoch_bounds=(3, 10),
             gesd={"explainer": "gradient", "sample_size": 30, "n_perturbations": 3, "stratify": True,
                   "min_group_size": 5})
FEATURES: dict[str, Any] = dict(features=["x1", "x2", "sex"], sensitive="sex", label="y")


def _clock() -> TrainingClock:
    clock = TrainingClock(batch_size=10)
    clock.record(seconds=1.0, networks=10, epochs=[5, 10], rows=100)  # 10 epochs x 10 steps: 0.01 s per step
    clock.record(seconds=9.0, networks=10, epochs=[10], rows=100)  # a load spike: 0.09
    clock.record(seconds=2.0, networks=10, epochs=[10], rows=100)  # 0.02
    return clock


def test_the_clock_charges_a_small_refit_stack_a_whole_generation_and_a_large_one_more() -> None:
    clock = _clock()
    assert clock.network_step_s == pytest.approx(0.002) and clock.stack == 10  # the median, not the spike
    small = TrainingClock(batch_size=10)  # a generation shrunk by duplicate elimination: charged per network
    small.record(seconds=2.0, networks=10, epochs=[10], rows=100)
    small.record(seconds=1.6, networks=8, epochs=[10], rows=100)
    assert small.refit_s([10], fit_rows=100, folds=1, stand_in_epochs=None) == pytest.approx(10 * 10 * 0.002 * 10)
    # 2 recipes + the stand-in (3 < 10 networks): a whole generation's step; 5 folds x 20 epochs x 20 steps
    assert clock.refit_s([20, 4], fit_rows=200, folds=5, stand_in_epochs=20) == pytest.approx(5 * 20 * 20 * 0.02)
    # 19 recipes + the stand-in = 2 generations' stacks: twice as long per step
    assert clock.refit_s([4] * 19, fit_rows=200, folds=5, stand_in_epochs=None) == pytest.approx(5 * 4 * 20 * 0.02 * 1.9)
    assert clock.refit_s([4] * 19, fit_rows=200, folds=5, stand_in_epochs=20) == pytest.approx(5 * 20 * 20 * 0.02 * 2)
    assert TrainingClock(10).refit_s([5], fit_rows=200, folds=5, stand_in_epochs=20) == 0.0  # nothing measured yet
    assert clock.refits_within([5, 5, 5], fit_rows=200, folds=5, stand_in_epochs=None, seconds_left=-1.0) == [0]
    assert clock.refits_within([5, 5, 50], fit_rows=200, folds=5, stand_in_epochs=None, seconds_left=10.0) == [0, 1]
    # a long recipe does not block the shorter ones behind it
    assert clock.refits_within([5, 50, 5], fit_rows=200, folds=5, stand_in_epochs=None, seconds_left=10.0) == [0, 2]
    assert clock.refits_within([], fit_rows=200, folds=5, stand_in_epochs=None, seconds_left=10.0) == []


def test_the_search_does_not_start_a_generation_that_would_overrun_the_budget() -> None:
    def clock(*times: float) -> Callable[[], float]:
        return iter(times).__next__

    # the step started at 0 and its setup took 10 s: the search starts at 10 (the setup is not a generation)
    t = reserve_termination(40.0, 0.0, lambda: 0.0, clock=clock(10.0, 14.0, 18.0, 22.0, 33.0))
    assert t.update(None) == pytest.approx(18 / 40)  # generation 1 ended at 14 and took 4 s: 14 + 4
    assert t.update(None) == pytest.approx(22 / 40)
    assert t.update(None) == pytest.approx(26 / 40)
    assert t.update(None) >= 1.0  # 33 used + 11 for the next (the last took 11 s) = 44 > 40: stop
    refits = reserve_termination(40.0, 0.0, lambda: 15.0, clock=clock(10.0, 14.0, 22.0))
    assert refits.update(None) < 1.0  # 14 + 4 + 15 = 33
    assert refits.update(None) >= 1.0  # 22 + 8 + 15 = 45: the next generation would eat the refits' time


def _row(i: int, dp: float, epochs: int, *, feasible: bool = True, utility: float = 0.3) -> dict[str, Any]:
    return {"id": i, "epochs": epochs, "objectives": [utility, dp, 0.0], "state": {}, "error": None,
            "constraints": [-0.1 if feasible else 0.1]}


def test_the_plan_refits_the_lowest_validation_dp_first_as_many_as_fit_and_at_least_one() -> None:
    rows = [_row(0, 0.10, 5), _row(1, 0.02, 5), _row(2, 0.05, 5), _row(3, 0.02, 50)]
    started = time.perf_counter()
    unbounded = StepBudget(_clock(), started, None, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    assert plan_refits(unbounded, rows) == ([0, 1, 2, 3], {"time_budget_s": None})
    spent = StepBudget(_clock(), started - 100.0, 50.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    keep, record = plan_refits(spent, rows)
    assert keep == [1]  # DP 0.02; the tie with evaluation 3 goes to the lower id
    assert record["candidates_not_refit"] == [0, 2, 3] and record["refit_seconds_left"] < -49
    assert record["not_refit_reason"] == NOT_REFIT.format(m=1, n=4, left=0.0)
    # room for 5 folds x 5 epochs x 20 steps x 0.02 s = 10 s of refits: the three 5-epoch recipes (one stack),
    # not the 50-epoch one (ten times as many steps), though it is second in order
    roomy = StepBudget(_clock(), time.perf_counter(), 10.5, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    keep, record = plan_refits(roomy, rows)
    assert keep == [0, 1, 2] and record["candidates_not_refit"] == [3]
    assert record["not_refit_reason"] == NOT_REFIT.format(m=3, n=4, left=record["refit_seconds_left"])
    roomy = StepBudget(_clock(), time.perf_counter(), 10.5, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    keep, record = plan_refits(roomy, rows[:3])
    assert keep == [0, 1, 2] and record["refit_estimate_s"] == pytest.approx(10.0) and "not_refit_reason" not in record


def test_the_search_reserves_the_refits_of_its_feasible_front_only() -> None:
    archive = [_row(0, 0.05, 10, utility=0.30), _row(1, 0.10, 40, utility=0.35),  # dominated by 0
               _row(2, 0.01, 40, feasible=False), _row(3, 0.02, 20, utility=0.40)]
    b = StepBudget(_clock(), time.perf_counter(), 60.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    assert b.reserve_s(archive) == pytest.approx(_clock().refit_s([10, 20], fit_rows=200, folds=5, stand_in_epochs=None))
    assert StepBudget(_clock(), 0.0, 60.0, cv=False, fit_rows=200, folds=5, stand_in_epochs=None).reserve_s(archive) == 0
    assert b.reserve_s([_row(0, 0.05, 10, feasible=False)]) == 0.0


def test_the_search_also_reserves_the_tail_of_the_front_it_would_report() -> None:
    archive = [_row(0, 0.05, 10, utility=0.30), _row(1, 0.10, 40, utility=0.35), _row(2, 0.02, 20, utility=0.40)]
    b = StepBudget(_clock(), time.perf_counter(), 60.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None,
                   deploy_scorings=2)
    refits = _clock().refit_s([10, 20], fit_rows=200, folds=5, stand_in_epochs=None)
    assert b.tail_s(2) == 0.0 and b.reserve_s(archive) == pytest.approx(refits)  # no scoring measured yet
    b.record_scoring([1.0, 0.9, 1.2])
    b.record_scoring([9.0, 9.5])  # a load spike in one generation: the median per candidate does not follow it
    b.record_scoring([0.8, 1.1])
    assert b.tail_s(2) == pytest.approx(1.1 * (2 + 2))  # the front and the ensemble's two GESDs
    assert b.tail_s(2, deploy=False) == pytest.approx(1.1 * 2)
    assert b.reserve_s(archive) == pytest.approx(refits + 1.1 * 4)
    # nothing feasible: no refits and nothing deployed, but the front of all trained candidates is scored on test
    infeasible = [_row(0, 0.05, 10, feasible=False), _row(1, 0.01, 10, feasible=False, utility=0.5)]
    assert b.reserve_s(infeasible) == pytest.approx(1.1 * 2)
    searched = StepBudget(_clock(), 0.0, 60.0, cv=False, fit_rows=200, folds=5, stand_in_epochs=None)
    searched.record_scoring([2.0])  # the validation gate: no refits, the searched network deployed as scored
    assert searched.reserve_s(archive) == pytest.approx(2.0 * 2)


def test_the_refits_plan_leaves_the_tail_its_time() -> None:
    rows = [_row(0, 0.01, 5), _row(1, 0.02, 5)]
    b = StepBudget(_clock(), time.perf_counter(), 14.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None)
    keep, record = plan_refits(b, rows)
    assert keep == [0, 1] and record["refit_seconds_left"] == pytest.approx(14.0, abs=0.1)  # 10 s of refits fit
    b.record_scoring([2.0, 2.0, 2.0])  # a tail of 2 s for each of the 2 candidates
    keep, record = plan_refits(b, rows)
    assert keep == [0] and record["candidates_not_refit"] == [1]  # 10 s no longer fit in 14 - 4
    assert record["refit_seconds_left"] == pytest.approx(10.0, abs=0.1)


def test_the_fold_ensembles_nested_check_is_reserved_at_the_fronts_longest_recipe() -> None:
    """20 networks (k = 5) on 120 rows: 0.002 s per step and network (the clock's median), charged for 20
    networks (more than the measured stack of 10), 12 steps an epoch, the longest front recipe's 20 epochs."""
    archive = [_row(0, 0.05, 10, utility=0.30), _row(2, 0.02, 20, utility=0.40)]
    b = StepBudget(_clock(), time.perf_counter(), 45.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None,
                   nested_networks=20, nested_rows=120)
    assert b.nested_s([10, 20]) == pytest.approx(20 * 12 * 0.002 * 20)  # 9.6 s
    refits = _clock().refit_s([10, 20], fit_rows=200, folds=5, stand_in_epochs=None)  # 40 s
    assert b.reserve_s(archive) == pytest.approx(refits + 9.6)
    keep, record = plan_refits(b, archive)  # 45 s less the check's 9.6: both refits (40 s) no longer fit
    assert keep == [1] and record["nested_estimate_s"] == pytest.approx(9.6)
    assert record["refit_seconds_left"] == pytest.approx(45.0 - 9.6, abs=0.1)
    assert StepBudget(_clock(), 0.0, 60.0, cv=False, fit_rows=200, folds=5, stand_in_epochs=None,
                      nested_networks=20, nested_rows=120).nested_s([10, 20]) == 0.0  # no refits, no ensemble
    assert StepBudget(_clock(), 0.0, 60.0, cv=True, fit_rows=200, folds=5, stand_in_epochs=None,
                      nested_networks=0, nested_rows=120).nested_s([10, 20]) == 0.0  # cv_deploy searched


@pytest.mark.slow
def test_the_budget_counts_the_baselines_which_run_before_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairmon.feu._search as feu_search

    order: list[str] = []
    baselines = feu_search._baselines

    def slow_baselines(*args: Any) -> Any:  # 3 s more of baselines must come out of the refits' time
        order.append("baselines")
        time.sleep(3.0)
        return baselines(*args)

    monkeypatch.setattr(feu_search, "_baselines", slow_baselines)
    res = search(group_effect_frame(500, 1, effect=1.5), **FEATURES,
                 settings=FEUSettings.small(**{**LIGHT, "generations": 2}, time_budget_s=3600), random_state=1,
                 device="cpu", progress=lambda g, n, t: order.append(f"generation {g} after {t:.1f} s"))
    assert [o.split(" after")[0] for o in order] == ["baselines", "generation 1", "generation 2"]
    assert float(order[1].split("after ")[1].split(" s")[0]) >= 3.0  # the step's clock ran through the baselines
    assert {"exponentiated_gradient", "threshold_optimizer"} <= set(res.baselines)
    timing, sel = res.selection["timing"], res.selection
    assert timing["baselines_s"] >= 3.0
    # the refits were planned after generation 2, on the step's clock and less the tail's estimate
    searched = float(order[2].split("after ")[1].split(" s")[0])
    assert sel["refit_seconds_left"] <= 3600 - searched - timing["tail_estimate_s"] + 0.05
    # the tail's estimate: the front's test metrics and, deployed, the fold ensemble's two GESDs at the search's
    # seconds per scoring; its measured time excludes the comparison with the tuned ThresholdOptimizer
    assert timing["tail_estimate_s"] > 0 and timing["tail_s"] > 0 and "versus_mitigator_s" in timing
    assert timing["deployed_fold_ensemble"] == (res.selected is not None and res.selected.deployment is not None
                                                and res.selected.deployment["model"] == "fold_ensemble")


def test_candidates_not_refit_are_recorded_as_not_eligible() -> None:
    cv = CVGate(np.array([True]), np.array([0.02]), np.array([0.01]), np.array([0.7]), np.array([0.03]),
                [{"selection": "cv5", "eligible": True}], {"dp": 0.1})
    full = _all_feasible(cv, [1], 3, "why not")
    assert full.eligible.tolist() == [False, True, False] and full.dp[1] == 0.02 and np.isnan(full.dp[[0, 2]]).all()
    assert np.isnan(full.lower_bound[0]) and full.records[1] == {"selection": "cv5", "eligible": True}
    assert full.records[0] == {"selection": "cv5", "refit": False, "eligible": False, "why": "why not"}
    assert _all_feasible(cv, [0], 1, "") is cv


@pytest.mark.slow
def test_a_search_out_of_time_refits_only_its_most_promising_candidate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = group_effect_frame(500, 5, effect=1.5)  # validation 100 rows: the out-of-fold gate
    settings = FEUSettings.small(**{**LIGHT, "population": 10}, time_budget_s=0.01)
    res = search(df, **FEATURES, settings=settings, registry=str(tmp_path), random_state=5, device="cpu")
    assert res.stopped_by == "time_budget_s" and res.generations_run == 1
    feasible = [c for c in res.pareto if c.feasible]
    assert len(feasible) >= 2, "the data and seed are chosen to give a front of several feasible candidates"
    sel = res.selection
    first = min(feasible, key=lambda c: (c.objectives[1], c.id))
    assert sel["candidates_refit"] == 1 and sel["time_budget_s"] == 0.01
    assert sorted(sel["candidates_not_refit"]) == sorted(c.id for c in feasible if c.id != first.id)
    for c in feasible:
        g = c.recommendation_gate
        assert g is not None and ("refit" not in g) == (c.id == first.id)
        if c.id != first.id:
            assert not g["eligible"] and g["why"] == sel["not_refit_reason"] and c.dp_improvement_lb is None
    if res.selected is None:
        assert sel["not_refit_reason"] in res.recommendation
    else:
        assert res.selected.id == first.id
        assert f"1 of {len(feasible)} feasible candidates refit within time_budget_s" in res.recommendation


@pytest.mark.slow
def test_a_search_with_time_to_spare_refits_every_feasible_candidate() -> None:
    res = search(group_effect_frame(500, 1, effect=1.5), **FEATURES,
                 settings=FEUSettings.small(**LIGHT, time_budget_s=3600), random_state=1, device="cpu")
    assert res.stopped_by == "generations" and res.generations_run == 3
    assert res.selection["candidates_not_refit"] == [] and "not_refit_reason" not in res.selection
    assert res.selection["candidates_refit"] == sum(c.feasible for c in res.pareto)
    assert 0 < res.selection["refit_estimate_s"] < res.selection["refit_seconds_left"]


class _Holes(StepBudget):
    """A plan that refits the second and the last feasible candidate only (the mapping, not the timing)."""

    def plan(self, rows, budget_s):  # type: ignore[no-untyped-def]
        return [1, len(rows) - 1], {"time_budget_s": 1.0, "not_refit_reason": "planned holes"}


@pytest.mark.slow
def test_the_gate_maps_a_refit_subset_with_holes_back_to_its_candidates() -> None:
    rs = 3
    st = FEUSettings.small(**LIGHT, baselines=False)
    prep = _prepare(group_effect_frame(2000, 2, effect=1.5), ["x1", "x2", "sex"], "sex", "y", None, st.split, rs)
    ev = _Evaluator(prep, st, gesd_seed=rs + 1, device="cpu")
    anchor = _production(ev, None, rs)
    ev.anchor = {"selection_rate": anchor.validation["selection_rate"], "utility": anchor.validation[st.utility]}
    rows = []
    for i, (weight, epochs) in enumerate([(0.0, 8), (3.0, 8), (6.0, 10), (10.0, 10)]):
        (net,) = ev.train([(1e-2, epochs, 11 + i)], [weight])
        # production's validation positive rate: inside the band
        thr = float(np.quantile(predict_proba(net, prep.Z["validation"]), 1 - anchor.validation["selection_rate"]))
        r = ev.score({k: v.detach().clone() for k, v in net.state_dict().items()}, 1e-2, epochs, thr, 11 + i, weight)
        r.update(id=i, generation=0)
        rows.append(r)
    F = np.asarray([r["objectives"] for r in rows])
    budget = _Holes(TrainingClock(32), time.perf_counter(), 1.0, cv=True, fit_rows=1, folds=5, stand_in_epochs=20)
    rec = _recommend(ev, anchor, rows, list(range(len(rows))), F, rs, budget)
    feasible = [p for p, r in enumerate(rows) if r["error"] is None and all(c <= 0 for c in r["constraints"])]
    assert len(feasible) >= 3, [r["constraints"] for r in rows]
    refit = [feasible[1], feasible[-1]]
    assert rec.position is not None, "the data and seed are chosen to give a recommendation: " + rec.message
    assert rec.oof is not None and rec.oof.proba.shape[0] == 2 and rec.selection["candidates_refit"] == 2
    s = rec.oof.s
    for a, p in enumerate(refit):  # each refit candidate's record holds the DP of its own out-of-fold row
        d = rec.oof.decisions[a]
        dp = abs(d[s == "F"].mean() - d[s == "M"].mean())
        assert rec.gate[p]["oof"]["dp"] == pytest.approx(dp) and "refit" not in rec.gate[p]
    for p in feasible:
        if p not in refit:
            g = rec.gate[p]
            assert (g["refit"], g["eligible"], g["why"]) == (False, False, "planned holes") and p not in rec.dp_lb
            assert g["validation_gate"]["selection"] == "validation"
    # the pick (feasible position 1) is the first refit recipe: its fold models, not those of position 1
    assert rec.position in refit and rec.oof_index == refit.index(rec.position)
    assert rec.members is rec.oof.fold_models[rec.oof_index]
    assert f"2 of {len(feasible)} feasible candidates refit within time_budget_s" in rec.message
