"""The aggregates of ``run.py``: per dataset, the recommended candidate beside the baselines (test,
mean ± sd over seeds), issue 16's floors and goal, from the run files in ``<out>/runs``.

``run.py --aggregate-only`` calls :func:`aggregate` and :func:`comparison`; they run nothing, so run
files from other branches or machines can be dropped into ``runs/`` and aggregated together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.feu_paper import final_gesd as fg
from fairmon.feu.labels import baseline_label

#: Paper Table I, FEU column (German and Recid. = Bail).
PAPER = {
    "german": {"auc": 0.72, "f1": 0.77, "dp": 0.12, "eod": 0.14, "gesd": 0.01},
    "bail": {"auc": 0.99, "f1": 0.98, "dp": 0.06, "eod": 0.001, "gesd": 0.01},
    "math": {"auc": 0.91, "f1": 0.77, "dp": 0.16, "eod": 0.07, "gesd": 0.004},
    "por": {"auc": 0.94, "f1": 0.69, "dp": 0.15, "eod": 0.25, "gesd": 0.03},
}
REPORTED = ("auc", "balanced_accuracy", "f1", "selection_rate", "dp", "eod", "gesd")
PAPER_BASELINES = ("production", "constant", "threshold_optimizer", "exponentiated_gradient")
METRICS = (*REPORTED, "gesd_paper", "chebyshev_rule_balanced_accuracy", "chebyshev_rule_dp", "chebyshev_rule_gesd", "auc_sel_unit", "dp_sel_unit", "auc_sel_range",
           "dp_sel_range", "auc_select_on_test", "dp_select_on_test",
           *(f"{b}_{m}" for b in PAPER_BASELINES for m in REPORTED))


def aggregate(out: Path, datasets: list[str], mode: str = "default") -> list[dict[str, Any]]:
    from fairmon.feu import chebyshev_select

    rows = []
    for f in sorted((out / "runs").glob("*.json")):
        doc = json.loads(f.read_text())
        row = doc["row"]
        if row.get("mode", "paper") != mode:
            continue
        # the reference code's protocol: objectives and selection on the test split itself (optimistic;
        # shown for comparison with Table I only — fairmon selects on validation)
        P = doc["result"]["pareto"]
        F = np.array([[1 - c["test"]["auc"], c["test"]["dp"], 1.0 if c["test"]["gesd"] is None else c["test"]["gesd"]]
                      for c in P])
        st = doc["result"]["settings"]
        # runs written before selection_scale existed used min-max ("range") normalisation
        i, _ = chebyshev_select(F, tuple(st["weights"]), scale=st.get("selection_scale", "range"))
        row["auc_select_on_test"], row["dp_select_on_test"] = float(1 - F[i, 0]), float(F[i, 1])
        # both selection rules on the same Pareto set's *validation* objectives (what the search selects
        # on), with the chosen candidate's test AUC/DP: the effect of the rule alone, same models
        V = np.array([list(c["objectives"].values()) for c in P], dtype=float)
        for scale in ("unit", "range"):
            j, _ = chebyshev_select(V, tuple(st["weights"]), scale=scale)
            row[f"auc_sel_{scale}"], row[f"dp_sel_{scale}"] = P[j]["test"]["auc"], P[j]["test"]["dp"]
        if mode.startswith("default") and row.get("recommended"):
            # what the paper's Chebyshev choice would have picked among the same eligible candidates
            # (validation scores recorded by the search; test metrics reported only, never used to choose)
            el = [c for c in P if c.get("chebyshev") is not None]
            if el:
                c = min(el, key=lambda c: (c["chebyshev"], c["id"]))
                for m in ("balanced_accuracy", "dp", "gesd"):
                    row[f"chebyshev_rule_{m}"] = c["test"].get(m)
        row.update(fg.seed_goal(row))
        row["population"], row["generations"] = st.get("population"), st.get("generations")
        rows.append(row)
    summary = []
    for name in datasets:
        rs = [r for r in rows if r["dataset"] == name and r.get("mode", "paper") == mode]
        if not rs:
            continue
        s: dict[str, Any] = {"dataset": name, "mode": mode, "seeds": len(rs), "rows": rs[0]["rows"],
                             "recommended": sum(bool(r.get("recommended", True)) for r in rs),
                             "generations": f"{min(r['generations_run'] for r in rs)}-{max(r['generations_run'] for r in rs)}"}
        for m in METRICS:
            vals = np.array([r[m] for r in rs if r.get(m) is not None], dtype=float)
            if len(vals):
                s[m] = f"{np.nanmean(vals):.3f} ± {np.nanstd(vals, ddof=1) if len(vals) > 1 else 0.0:.3f}"
                s[f"{m}_mean"] = float(np.nanmean(vals))
        s.update(fg.summary_fields(rs))
        paper = PAPER.get(name, {})
        s["paper_FEU"] = ", ".join(f"{k} {v}" for k, v in paper.items())
        s["search_s_mean"] = float(np.mean([r["search_s"] for r in rs]))
        if mode == "paper" and name == "german":
            s["pass_auc>=0.72"] = bool(s.get("auc_mean", 0) >= 0.72)
            s["pass_dp<=0.12"] = bool(s.get("dp_mean", 1) <= 0.12)
        if mode.startswith("default"):  # issue 16's floors (test split; the band is enforced on validation)
            rec = [r for r in rs if r.get("recommended")]
            s["outside_band_validation"] = sum(
                abs(_gated_rate_diff(r)) > 0.10 + 1e-9 for r in rec)
            s["outside_band_test"] = sum(abs(r["selection_rate"] - r["production_selection_rate"]) > 0.10 for r in rec)
            if rec:
                s["pass_balanced_accuracy>=production-0.02"] = bool(
                    np.mean([r["balanced_accuracy"] for r in rec]) >= np.mean([r["production_balanced_accuracy"] for r in rec]) - 0.02)
                s["pass_dp<=0.6*production"] = bool(
                    np.mean([r["dp"] for r in rec]) <= 0.6 * np.mean([r["production_dp"] for r in rec]))
        summary.append(s)
    return summary + [{"dataset": f"{r['dataset']} seed {r['seed']}", **{k: v for k, v in r.items() if k != "dataset"}}
                      for r in rows]


LABELS = {"feu": "FEU recommended", **{b: baseline_label(b) for b in PAPER_BASELINES}}  # the report's and Slack's names
MITIGATORS = ("threshold_optimizer", "exponentiated_gradient")


def _gated_rate_diff(r: dict[str, Any]) -> float:
    """The positive-rate difference the band was enforced on: validation, or for a deployed fold ensemble
    (whose validation rows trained its members) its recipe's out-of-fold rate."""
    if r.get("deployed") == "fold_ensemble" and r.get("oof_rate_diff") is not None:
        return float(r["oof_rate_diff"])
    return float(r["validation_selection_rate"] - r["production_validation_selection_rate"])


def _outside(rs: list[dict[str, Any]]) -> str:
    """Per mitigator: on how many seeds its test positive rate leaves production's ±0.10 band, and the range
    of its rate difference — a DP a team with that band would not deploy."""
    parts = []
    for b in MITIGATORS:
        d = [r[f"{b}_selection_rate"] - r["production_selection_rate"] for r in rs]
        parts.append(f"{b} {sum(abs(x) > 0.10 for x in d)} of {len(d)} ({min(d):+.3f} to {max(d):+.3f})")
    return ", ".join(parts)


def _versus(rs: list[dict[str, Any]]) -> str:
    """How many gate-passing picks were compared with the tuned ThresholdOptimizer and withheld, with the
    withheld ones' test figures beside the mitigator's (what a team would deploy instead)."""
    compared = [r for r in rs if r.get("versus_contender")]
    if not compared:
        return ""
    held = [r for r in compared if r.get("versus_withheld")]
    out = f"{len(compared)} compared, {len(held)} withheld"
    for r in held:
        b = r["versus_contender"]  # the baseline name: threshold_optimizer_tuned, or threshold_optimizer at exact parity
        out += (f"; seed {r['seed']}: withheld candidate test bal. acc. {r['withheld_balanced_accuracy']:.3f}, DP "
                f"{r['withheld_dp']:.3f}, rate {r['withheld_selection_rate'] - r['production_selection_rate']:+.3f} vs "
                f"ThresholdOptimizer (tol {r['versus_tol']}) {r[f'{b}_balanced_accuracy']:.3f}, {r[f'{b}_dp']:.3f}, "
                f"{r[f'{b}_selection_rate'] - r['production_selection_rate']:+.3f} (production "
                f"{r['production_balanced_accuracy']:.3f}, {r['production_dp']:.3f})")
    kept = [r for r in compared if not r.get("versus_withheld")]
    if kept:
        # on test (never read by the rule): where the kept pick's mitigator was nonetheless better
        lost = [r for r in kept if r[f"{r['versus_contender']}_dp"] < r["dp"]
                and r[f"{r['versus_contender']}_balanced_accuracy"] >= r["balanced_accuracy"] - 0.01]
        unlawful = sum(bool(r.get("versus_shown_better")) for r in kept)  # shown better, group_thresholds off
        out += (f"; kept {len(kept)}: the mitigator not itself past FEU's gate on "
                f"{sum(not r.get('versus_beats_production') for r in kept)}, shown better but reading the "
                f"protected attribute at decision time (group_thresholds off) on {unlawful}, its DP not shown "
                f"lower on the rest; "
                f"on test the mitigator had the lower DP at FEU's bal. acc. - 0.01 or better on {len(lost)} of them"
                + (f" (seeds {', '.join(str(r['seed']) for r in lost)})" if lost else ""))
    return out


def _nested(rs: list[dict[str, Any]]) -> str:
    """How many chosen fold ensembles were checked on nested out-of-fold rows and withheld, and how far the
    nested ensemble's positive rate moved from its members' out-of-fold one (runs before session 18: "")."""
    checked = [r for r in rs if r.get("nested_checked")]
    if not checked:
        return ""
    failed = [r for r in checked if not r.get("nested_passed")]
    out = f"{len(checked)} checked, {len(failed)} withheld" + (
        f" (seeds {', '.join(str(r['seed']) for r in failed)})" if failed else "")
    moved = [r["nested_rate_diff"] - r["nested_members_rate_diff"] for r in checked
             if r.get("nested_members_rate_diff") is not None]
    if moved:
        out += f"; nested ensemble's rate minus its members' out-of-fold rate {min(moved):+.3f} to {max(moved):+.3f}"
    return out


def _ms(vals: list[float]) -> str:
    a = np.array([v for v in vals if v is not None], dtype=float)
    if not len(a):
        return "—"
    return f"{a.mean():.3f} ± {a.std(ddof=1) if len(a) > 1 else 0.0:.3f}"


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return float(np.mean(vals)) if vals else float("nan")


def comparison(out: Path, datasets: list[str], mode: str) -> tuple[str, dict[str, Any]]:
    """Markdown: per dataset, the recommended candidate beside the baselines (test, mean ± sd over
    seeds), and issue 16's floors and goal; plus the same as a dict."""
    runs = [json.loads(f.read_text())["row"] for f in sorted((out / "runs").glob(f"{mode}_*.json"))]
    for r in runs:
        r.update(fg.seed_goal(r))
    lines, checks = [f"## mode {mode}", ""], {}
    for name in datasets:
        rs = [r for r in runs if r["dataset"] == name]
        if not rs:
            continue
        rec = [r for r in rs if r.get("recommended")]
        lines += [f"### {name} ({rs[0]['rows']} rows; {len(rs)} seeds, {len(rec)} with a recommendation, "
                  f"{len(rs) - len(rec)} none)", "",
                  "| model | seeds | AUC | bal. acc. | F1 | positive rate | DP | EOD | GESD |", "|---|---|" + "---|" * 7]
        lines.append(f"| {LABELS['feu']} | {len(rec)} | " + " | ".join(_ms([r.get(m) for r in rec]) for m in REPORTED) + " |")
        for b in PAPER_BASELINES:
            lines.append(f"| {LABELS[b]} | {len(rs)} | " + " | ".join(_ms([r.get(f'{b}_{m}') for r in rs]) for m in REPORTED) + " |")
        notes = sorted({r.get(f"{b}_gesd_note") for r in rs for b in MITIGATORS if r.get(f"{b}_gesd_note")})
        lines += [""] + [f"- GESD note: {n}" for n in notes]
        c: dict[str, Any] = {"seeds": len(rs), "recommended": len(rec), "mitigators_outside_band_test": _outside(rs)}
        lines.append(f"- mitigators' test positive rate outside production's ±0.10 band (FEU's constraint): "
                     f"{c['mitigators_outside_band_test']}")
        versus = _versus(rs)
        if versus:
            c["versus_tuned_threshold_optimizer"] = versus
            lines.append(f"- FEU's pick against the tuned ThresholdOptimizer (fairmon.feu._versus_mitigator): {versus}")
        nested = _nested(rs)
        if nested:
            c["nested_check"] = nested
            lines.append(f"- the chosen fold ensemble on nested out-of-fold rows (fairmon.feu._nested): {nested}")
        if mode.startswith("default") and rec:
            c["outside_band_validation"] = sum(
                abs(_gated_rate_diff(r)) > 0.10 + 1e-9 for r in rec)
            c["outside_band_test"] = sum(abs(r["selection_rate"] - r["production_selection_rate"]) > 0.10 for r in rec)
            ba, pba = _mean(rec, "balanced_accuracy"), _mean(rec, "production_balanced_accuracy")
            dp, pdp = _mean(rec, "dp"), _mean(rec, "production_dp")
            c["balanced_accuracy_vs_production"] = f"{ba:.3f} vs {pba:.3f} (floor {pba - 0.02:.3f}): " + (
                "holds" if ba >= pba - 0.02 else "FAILS")
            c["dp_vs_0.6_production"] = f"{dp:.3f} vs 0.6 x {pdp:.3f} = {0.6 * pdp:.3f}: " + (
                "holds" if dp <= 0.6 * pdp else "FAILS")
            # the goal, paired on the seeds with a recommendation: the better (lower-DP) mitigator
            best = min(MITIGATORS, key=lambda b: _mean(rec, f"{b}_dp"))
            mba, mdp, mg = (_mean(rec, f"{best}_{k}") for k in ("balanced_accuracy", "dp", "gesd"))
            g = _mean(rec, "gesd")
            # GESD: the final comparison's paired verdicts when the runs have it (the light GESD is within noise)
            vs = [r.get(f"final_gesd_diff_{best}_verdict") for r in rec]
            final = all(vs)
            lower = all(v == "lower GESD shown" for v in vs) if final else g < mg
            gtxt = (f"final GESD {_mean(rec, 'final_gesd_feu'):.3f} vs {_mean(rec, f'final_gesd_{best}'):.3f} "
                    f"({', '.join(f'{vs.count(v)} {v}' for v in sorted(set(vs)))})" if final
                    else f"light GESD {g:.3f} vs {mg:.3f} (below its noise floor)")
            c["goal"] = (f"vs {best}: bal. acc. {ba:.3f} vs {mba:.3f}, DP {dp:.3f} vs {mdp:.3f}, {gtxt}: "
                         + ("holds" if abs(ba - mba) <= 0.01 and dp <= mdp and lower else
                            "holds with higher bal. acc." if ba > mba + 0.01 and dp <= mdp and lower else "not met"))
            goals = [r.get("goal_seed") for r in rec if r.get("goal_seed")]
            c["goal_per_seed"] = ", ".join(f"{goals.count(v)} {v}" for v in sorted(set(goals)))
            lines += ["", "Floors and goal (test split; means over the seeds with a recommendation, baselines on the same seeds):", ""]
            lines += [f"- recommended candidates outside the ±0.10 positive-rate band: {c['outside_band_validation']} of "
                      f"{len(rec)} where the band is enforced (validation; out of fold for a deployed fold ensemble: "
                      f"{sum(r.get('deployed') == 'fold_ensemble' for r in rec)} of {len(rec)}), "
                      f"{c['outside_band_test']} of {len(rec)} on test",
                      f"- balanced accuracy ≥ production − 0.02: {c['balanced_accuracy_vs_production']}",
                      f"- DP ≤ 0.6 × production's DP: {c['dp_vs_0.6_production']}",
                      f"- goal (equal bal. acc. ± 0.01, DP no worse than the better mitigator, lower GESD): {c['goal']}",
                      f"- goal per seed (the lower-DP mitigator within ±0.01 bal. acc., final GESD): {c['goal_per_seed']}"]
        lines += fg.markdown(rs)
        within, budget = budget_lines(rs)
        if budget:
            c["time_budget_within"] = within
            lines += budget
        checks[name] = c
        lines.append("")
    return "\n".join(lines), checks


def budget_lines(rs: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """How many runs with a ``time_budget_s`` ended within it, and markdown on how they spent it
    (fairmon.feu._budget), each estimate beside what it estimated (``[]``: no run had a budget). Runs
    written before session 17 lack the timing."""
    rows = [r for r in rs if r.get("time_budget_s") is not None]
    if not rows:
        return 0, []

    def num(v: Any, fmt: str = "{:.1f}") -> str:
        return "–" if v is None else fmt.format(v)

    out = ["", "Time budget (`time_budget_s`; seconds of wall time; the step is FEU's alone, not the final GESD):", "",
           "| seed | budget | generations (stopped by) | baselines | refit: candidates, estimate, measured | "
           "nested check: estimate, measured | tail: estimate, measured | step | within budget |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["seed"]):
        refit = (f"{r['refit_candidates']} of {r['refit_candidates'] + r['refit_not']}, {num(r['refit_estimate_s'])}, "
                 f"{num(r['refit_wall_s'])}") if r.get("refit_candidates") is not None else "–"
        out.append(f"| {r['seed']} | {r['time_budget_s']:g} | {r['generations_run']} ({r['stopped_by']}) | "
                   f"{num(r.get('timing_baselines_s'))} | {refit} | {num(r.get('nested_estimate_s'))}, "
                   f"{num(r.get('nested_wall_s'))} | {num(r.get('timing_tail_estimate_s'))}, "
                   f"{num(r.get('timing_tail_s'))} | {num(r.get('step_s'))} | "
                   f"{'yes' if r['step_s'] <= r['time_budget_s'] else 'no'} |")
    return sum(r["step_s"] <= r["time_budget_s"] for r in rows), out
