"""The FEU paper benchmark's smoke mode runs a tiny search on German and writes its results files."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(script: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_feu_paper_{script}", REPO / "benchmarks" / "feu_paper" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bench() -> ModuleType:
    return _load("run")


def test_final_gesd_paired_difference_and_verdicts() -> None:
    """The final comparison's paired difference: value, floor, bootstrap interval and verdict."""
    import numpy as np

    from fairmon.explain.gesd import GESDResult, GroupStability

    fg = _bench().fg
    g = np.repeat(["F", "M"], 60)
    idx = np.arange(120)
    rng = np.random.default_rng(1)
    base = rng.uniform(0.7, 0.9, 120)

    def res(s: np.ndarray, floor: float) -> GESDResult:
        groups = tuple(GroupStability(x, 60, 60, float(s[g == x].mean()), 0.0, True) for x in ("F", "M"))
        return GESDResult(abs(s[:60].mean() - s[60:].mean()), 0.5, groups, (), idx, g, s, noise_floor=floor)

    a, b = res(base, 0.010), res(base + np.r_[np.zeros(60), np.full(60, 0.06)], 0.012)
    d = fg.paired_difference(a, b)
    assert math.isclose(d["difference"], a.value - b.value) and d["floor"] == 0.012
    assert d["ci"][0] <= d["difference"] <= d["ci"][1] and d["ci"][1] < 0 and d["verdict"] == "lower GESD shown"
    assert fg.paired_difference(b, a)["verdict"] == "not shown"
    assert fg.paired_difference(a, res(base + 0.001, 0.02))["verdict"] == "within noise"
    # the per-seed goal: the lower-DP mitigator within ±0.01 balanced accuracy, and its verdict
    row = {"recommended": True, "balanced_accuracy": 0.75, "dp": 0.02,
           "threshold_optimizer_balanced_accuracy": 0.755, "threshold_optimizer_dp": 0.03,
           "exponentiated_gradient_balanced_accuracy": 0.70, "exponentiated_gradient_dp": 0.01,
           "final_gesd_diff_threshold_optimizer_verdict": "lower GESD shown",
           "final_gesd_diff_threshold_optimizer_difference": -0.02}
    assert fg.seed_goal(row)["goal_mitigator"] == "threshold_optimizer" and fg.seed_goal(row)["goal_seed"] == "holds"
    row["threshold_optimizer_balanced_accuracy"] = 0.77
    assert fg.seed_goal(row)["goal_seed"] == "no mitigator at equal bal. acc."


@pytest.mark.slow
@pytest.mark.datasets
def test_feu_paper_benchmark_smoke(tmp_path: Path, data_dir: Path) -> None:
    mod = _bench()
    rows = mod.main(["--smoke", "--mode", "paper", "--out", str(tmp_path)])
    summary = rows[0]
    assert summary["dataset"] == "german" and summary["seeds"] == 1
    assert 0.5 <= summary["auc_mean"] <= 1.0 and 0.0 <= summary["dp_mean"] <= 1.0
    data = json.loads((tmp_path / "feu_paper_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "feu_paper_smoke.md").is_file()
    assert (tmp_path / "pareto_paper_german_seed42.png").is_file()

    # fairmon's default mode: the recommended candidate (or none) beside production and the baselines
    rows = mod.main(["--smoke", "--time-budget", "600", "--out", str(tmp_path / "default")])
    summary = rows[0]
    assert summary["mode"] == "default" and summary["seeds"] == 1 and summary["recommended"] in (0, 1)
    for b in ("production", "constant", "threshold_optimizer", "exponentiated_gradient"):
        assert 0.0 <= summary[f"{b}_dp_mean"] <= 1.0
    assert summary["constant_selection_rate_mean"] == 1.0
    assert summary["outside_band_validation"] == 0
    assert (tmp_path / "default" / "feu_paper_smoke_default.json").is_file()
    for b in ("threshold_optimizer", "exponentiated_gradient"):  # the mitigators' GESD is computed (issue 16)
        assert 0.0 <= summary[f"{b}_gesd_mean"] <= 1.0
    table = (tmp_path / "default" / "feu_paper_smoke_default_comparison.md").read_text()
    assert "fairlearn ThresholdOptimizer (DP)" in table and "| FEU recommended |" in table
    if summary["recommended"]:
        assert "balanced accuracy ≥ production − 0.02" in table

    # the final GESD comparison (same rows and seed for every model): fields and their arithmetic
    runs = [json.loads(f.read_text()) for f in (tmp_path / "default" / "runs").glob("default_*.json")]
    assert len(runs) == 1
    r = runs[0]["row"]
    prov = runs[0]["provenance"]  # each run file says where and when it ran (aggregated across sessions)
    assert prov["commit"] and prov["finished_at"].endswith("+00:00") and "loadavg" in prov["machine"]
    assert r["final_gesd_constant"] == 0.0 and r["final_gesd_settings"]["sample_size"] == 30
    assert r["final_gesd_production_reproduced"] is True  # the search's production network, retrained
    present = [m for m in mod.fg.MODELS if r.get(f"final_gesd_{m}") is not None]
    assert {"production", "threshold_optimizer", "exponentiated_gradient"} <= set(present)
    assert ("feu" in present) == bool(r["recommended"])
    assert len({r[f"final_gesd_{m}_sampled"] for m in present}) == 1  # the same sampled rows
    for m in present:
        assert 0.0 <= r[f"final_gesd_{m}"] <= 1.0 and r[f"final_gesd_{m}_noise_floor"] >= 0.0
        assert r[f"final_gesd_{m}_cpu_s"] > 0.0
        assert runs[0]["final_gesd"][m]["value"] == r[f"final_gesd_{m}"]
    if r["recommended"]:
        for other in mod.fg.OTHERS:
            d = r[f"final_gesd_diff_{other}_difference"]
            assert math.isclose(d, r["final_gesd_feu"] - r[f"final_gesd_{other}"], abs_tol=1e-12)
            assert r[f"final_gesd_diff_{other}_floor"] == max(r["final_gesd_feu_noise_floor"],
                                                                r[f"final_gesd_{other}_noise_floor"])
            lo, hi = r[f"final_gesd_diff_{other}_ci"]
            assert lo <= hi and r[f"final_gesd_diff_{other}_verdict"] == mod.fg.verdict(
                d, (lo, hi), r[f"final_gesd_diff_{other}_floor"])
    assert "Final GESD on test" in table
    # the budget's estimates beside what they estimated (fairmon.feu._budget); 600 s leaves the tiny run unbounded
    assert r["time_budget_s"] == 600 and r["stopped_by"] == "generations" and 0 < r["step_s"] <= 600
    assert r["timing_baselines_s"] > 0 and r["timing_tail_estimate_s"] > 0 and r["timing_tail_s"] > 0
    assert r["refit_candidates"] is not None, "the smoke's seed gives a feasible front (German: the out-of-fold gate)"
    assert r["refit_candidates"] >= 1 and r["refit_not"] == 0 and r["refit_estimate_s"] > 0 and r["refit_wall_s"] > 0
    checks = json.loads((tmp_path / "default" / "feu_paper_smoke_default.json").read_text())["settings"]["checks"]
    assert checks["german"]["time_budget_within"] == 1
    assert "| tail: estimate, measured |" in table and "| 42 | 600 | 1 (generations) |" in table
    # the fold ensemble's nested check is reserved (fairmon.feu._nested): estimated whenever refits are planned
    assert r["nested_estimate_s"] > 0 and "| nested check: estimate, measured |" in table
    assert r["nested_checked"] == (r["nested_passed"] is not None)
    # --aggregate-only rebuilds the same files from runs/*.json without running anything
    (tmp_path / "default" / "feu_paper_smoke_default_comparison.md").unlink()
    mod.main(["--smoke", "--aggregate-only", "--out", str(tmp_path / "default")])
    assert (tmp_path / "default" / "feu_paper_smoke_default_comparison.md").read_text() == table


def _frontier() -> ModuleType:
    return _load("frontier")


def test_frontier_picks_the_lowest_dp_setting_at_feus_utility_or_above() -> None:
    fr = _frontier()
    curve = [{"test_balanced_accuracy": ba, "test_dp": dp, "test_selection_rate": rate, "validation_balanced_accuracy": vba,
              "validation_dp": vdp, "validation_selection_rate": vrate}
             for ba, dp, rate, vba, vdp, vrate in ((0.70, 0.01, 0.50, 0.70, 0.00, 0.52), (0.745, 0.03, 0.62, 0.74, 0.02, 0.63),
                                                  (0.80, 0.02, 0.75, 0.79, 0.05, 0.74), (0.76, 0.00, 0.95, 0.76, 0.00, 0.90))]
    views = fr._views({"balanced_accuracy": 0.75, "production_selection_rate": 0.70},
                      {"selection_rate": 0.70, "balanced_accuracy": 0.75})
    assert fr._pick(curve, *views["any"])["test_dp"] == 0.00  # higher utility counts too
    assert fr._pick(curve, *views["in_band"])["test_dp"] == 0.02  # 0.95 is outside the ±0.10 band
    assert fr._pick(curve, *views["feu_rule"])["validation_dp"] == 0.02  # on validation: band and utility floor
    # like for like: only the mitigator that decides as FEU's mode does
    for c, name in zip(curve, ("exponentiated_gradient", "threshold_optimizer", "exponentiated_gradient",
                               "threshold_optimizer")):
        c["mitigator"] = name
    for mode, dp in (("default", 0.02), ("default+gt", 0.00)):
        like = fr._views({"balanced_accuracy": 0.75, "production_selection_rate": 0.70, "mode": mode},
                         {"selection_rate": 0.70, "balanced_accuracy": 0.75})["like_for_like"]
        assert fr._pick(curve, *like)["test_dp"] == dp
    # the other way round: the like-for-like mitigator's best utility at FEU's DP or lower
    at = fr.at_feu_dp(curve, {"mode": "default", "balanced_accuracy": 0.75, "dp": 0.015})
    assert (at["like_for_like_at_feu_dp"], at["like_for_like_at_feu_dp_verdict"]) == (0.70, "FEU higher")
    at = fr.at_feu_dp(curve, {"mode": "default", "balanced_accuracy": 0.75, "dp": 0.025})
    assert (at["like_for_like_at_feu_dp"], at["like_for_like_at_feu_dp_verdict"]) == (0.80, "FEU lower")
    at = fr.at_feu_dp(curve, {"mode": "default", "balanced_accuracy": 0.75, "dp": 0.005})
    assert (at["like_for_like_at_feu_dp"], at["like_for_like_at_feu_dp_verdict"]) == (None, "no setting as fair as FEU")
    at = fr.at_feu_dp(curve, {"mode": "default", "balanced_accuracy": 0.705, "dp": 0.015})
    assert (at["like_for_like_at_feu_dp"], at["like_for_like_at_feu_dp_verdict"]) == (0.70, "equal")
    assert fr.at_feu_dp(curve, {"mode": "paper", "balanced_accuracy": 0.75, "dp": 0.015}) == {}  # no like for like
    assert "like_for_like" not in fr._views({"balanced_accuracy": 0.75, "production_selection_rate": 0.70, "mode": "paper"},
                                            {"selection_rate": 0.70, "balanced_accuracy": 0.75})
    high = fr._views({"balanced_accuracy": 0.85, "production_selection_rate": 0.70},
                     {"selection_rate": 0.70, "balanced_accuracy": 0.75})
    assert fr._pick(curve, *high["any"]) is None


@pytest.mark.slow
@pytest.mark.datasets
def test_frontier_smoke_reproduces_the_run_and_sweeps_both_knobs(tmp_path: Path, data_dir: Path) -> None:
    """On a committed German run file: the run's own mitigator fits are reproduced, every setting of both
    knobs is evaluated, and the chosen setting obeys the rule."""
    fr = _frontier()
    (row,) = fr.main(["--smoke", "--out", str(tmp_path)])
    assert row["reproduced"] is True and len(row["curve"]) == len(fr.TOLS) + len(fr.EPSS)
    assert {c["knob"] for c in row["curve"]} == {"tol", "eps"}
    for view, in_band in (("any", False), ("in_band", True)):
        ok = [c for c in row["curve"] if c["test_balanced_accuracy"] >= row["feu_balanced_accuracy"] - 0.01 - 1e-12
              and (not in_band or abs(c["test_selection_rate"] - row["production_selection_rate"]) <= 0.10 + 1e-12)]
        if ok:
            assert row[f"{view}_dp"] == min(c["test_dp"] for c in ok)
        else:
            assert row[f"{view}_goal"] == "no mitigator setting reaches FEU's bal. acc."
    assert row.get("feu_rule_mitigator") or row["feu_rule_goal"] == "no mitigator setting inside FEU's constraints on validation"
    like = [c for c in row["curve"] if c["mitigator"] == fr.LIKE_FOR_LIKE[row["mode"]]]
    assert row["like_for_like_best_balanced_accuracy"] == max(c["test_balanced_accuracy"] for c in like)
    fair = [c["test_balanced_accuracy"] for c in like if c["test_dp"] <= row["feu_dp"]]
    assert row["like_for_like_at_feu_dp"] == (max(fair) if fair else None)
    if "like_for_like_mitigator" in row:
        assert row["like_for_like_mitigator"] == fr.LIKE_FOR_LIKE[row["mode"]]
    else:
        assert row["like_for_like_goal"] == "no mitigator setting reaches FEU's bal. acc."
    assert (tmp_path / "frontier_smoke.md").is_file() and (tmp_path / "frontier_smoke_curves.json").is_file()
    # ExponentiatedGradient on the production network's shape instead of the product's logistic regression
    (mlp,) = fr.main(["--smoke", "--eg-base", "mlp", "--eps", "0.05", "--out", str(tmp_path / "mlp")])
    eg = [c for c in mlp["curve"] if c["knob"] == "eps"]
    assert mlp["reproduced"] is True and [c["value"] for c in eg] == [0.05]
    (lr,) = fr.main(["--smoke", "--eps", "0.05", "--out", str(tmp_path / "lr")])
    assert eg[0]["test_balanced_accuracy"] != lr["curve"][-1]["test_balanced_accuracy"]  # another learner, another model
    assert fr.eg_estimator("mlp", 7).hidden_layer_sizes == (64, 32) and fr.eg_estimator("logistic", 7) is None
