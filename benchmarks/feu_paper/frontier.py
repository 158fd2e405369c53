"""fairlearn's mitigators along their own trade-off knobs, beside FEU's recommendation (issue 16's goal).

The goal compares FEU's recommended candidate with "the better fairlearn mitigator at equal balanced
accuracy (± 0.01)". ``run.py`` fits each mitigator at one setting (ThresholdOptimizer at exact parity,
ExponentiatedGradient at ``eps`` 0.01), so on most seeds no mitigator sits at FEU's balanced accuracy
and the goal cannot be judged there. A team would turn the mitigator's knob until it reaches the
utility it needs; this script does that, on each run's own split and seed (``run.py``'s run files:
the same subsample, split, production network and decision seed):

* ThresholdOptimizer with ``tol`` in :data:`TOLS` (fairlearn >= 0.12: the DP it may leave; None is
  exact parity), on the production network's scores;
* ExponentiatedGradient with ``eps`` in :data:`EPSS` (the constraint violation it may leave).

Every setting is evaluated on **test**; per seed the mitigator "at equal balanced accuracy" is the
lowest-DP setting whose test balanced accuracy is at least FEU's minus 0.01 (equal within ±0.01, or
higher: a setting with more utility and a lower DP beats FEU too) — **chosen on test**, an oracle choice
in the mitigator's favour, so a match by FEU is a conservative claim — once over all settings
(``any``) and once over the settings whose test positive rate stays inside production's ±0.10 band
(``in_band``: the constraint FEU's recommendations keep). A third view without the oracle
(``feu_rule``) takes the setting FEU's own rule would pick on **validation** (inside the band, utility
no worse than production's minus 0.02, lowest validation DP) and compares it with FEU on test
(``balanced_accuracy_ok``: FEU's test balanced accuracy no more than 0.01 below it). The run's own
``eps`` 0.01 / exact-parity fits are reproduced first (``reproduced``: their test metrics equal the
run file's).

A fourth view (``like_for_like``, session 19) is ``any`` restricted to the mitigator that decides the
way FEU's mode does (:data:`LIKE_FOR_LIKE`): by default FEU's networks decide with one threshold on
the encoded features, as ExponentiatedGradient's classifiers do (both may read the protected column
as a feature, neither applies a threshold per group); with ``--group-thresholds`` they read the group
at decision time, as ThresholdOptimizer does. The product already withholds a pick for
ThresholdOptimizer only when FEU's decisions read the group too (``fairmon.feu._versus_mitigator``);
this view measures the goal the same way. ``like_for_like_best_balanced_accuracy`` is that
mitigator's highest test balanced accuracy over its settings, so "no setting reaches FEU's bal. acc."
comes with how far it stays below; ``like_for_like_at_feu_dp`` is the comparison the other way round,
the mitigator's highest test balanced accuracy among its settings whose test DP is no higher than
FEU's (None: no setting is that fair), and ``like_for_like_at_feu_dp_verdict`` says whether FEU's
balanced accuracy is higher there (by more than 0.01), equal (within ±0.01) or lower.

Two knobs of ExponentiatedGradient tell what its utility depends on. ``--eg-base mlp`` refits it on
scikit-learn's ``MLPClassifier`` (>= 1.7, whose ``fit`` takes ``sample_weight``; FEU's torch trainer
does not) in the production network's shape and training (hidden layers, learning rate 1e-3, 20
epochs, batch 32) instead of the product's logistic regression. ``--eg-objective`` picks its
objective: ``balanced`` (the default, the product's since session 19: the balanced error rate,
``fairmon.feu._baselines.balanced_error_rate``, the utility FEU and ThresholdOptimizer optimise) or
``error`` (fairlearn's default error rate, the product's before, which on imbalanced data trades
balanced accuracy for accuracy). ``reproduced`` checks ExponentiatedGradient only for the logistic
base learner and an ``--eps`` list starting at 0.01. Run files written before commit 4094527 (the
group-threshold and paper-mode runs of session 18) were fit with the error rate: with the default
objective their ExponentiatedGradient is not reproduced (``reproduced`` False), with
``--eg-objective error`` it is. Paper mode has no like-for-like mitigator (its candidates are
threshold-free): that view and ``at_feu_dp`` are left out there.

With ``--final-gesd`` (default on) each chosen setting's GESD is computed with the run's final-GESD
settings and ``random_state`` (the same sampled test rows and perturbations as the run's FEU GESD)
and compared with FEU's stored one by ``final_gesd.paired_difference``; ``testable`` says whether the
mitigator's own GESD is above its noise (p < 0.05), without which no model can be shown below it.

Usage::

    python benchmarks/feu_paper/frontier.py --mode default                # results/frontier_default.*
    python benchmarks/feu_paper/frontier.py --smoke --out /tmp/x           # one German run file (CI)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

import numpy as np  # noqa: E402

from benchmarks._meta import write_results  # noqa: E402
from benchmarks.feu_paper import final_gesd as fg  # noqa: E402
from fairmon.feu._mitigator_constraints import TOLS as _TOLS  # noqa: E402
from fairmon.feu._mitigator_constraints import _keeps  # noqa: E402

#: ThresholdOptimizer's ``tol`` (None: exact demographic parity, the run's baseline): the values the
#: product's tuned baseline tries (``fairmon.feu._mitigator_constraints``)
TOLS = _TOLS
#: ExponentiatedGradient's ``eps`` (0.01: the run's baseline)
EPSS: tuple[float, ...] = (0.01, 0.02, 0.04, 0.06, 0.08, 0.10, 0.15, 0.20)
EQUAL_BA = fg.EQUAL_BA
BAND = 0.10
#: the mitigator that decides as FEU does in each mode (module docstring, ``like_for_like``)
LIKE_FOR_LIKE = {"default": "exponentiated_gradient", "default+gt": "threshold_optimizer"}
#: ExponentiatedGradient's base learners (``--eg-base``): the product's, or the production network's shape
EG_BASES = ("logistic", "mlp")
#: ExponentiatedGradient's objectives (``--eg-objective``): the product's balanced error rate, or fairlearn's
EG_OBJECTIVES = ("balanced", "error")
VIEWS = ("any", "in_band", "feu_rule", "like_for_like")


def _frame_and_prep(row: dict[str, Any]) -> tuple[Any, Any]:
    """The run's subsample and split, as ``run.run_one`` builds them."""
    from sklearn.model_selection import train_test_split

    from fairmon.datasets import load_adult, load_gesd
    from fairmon.feu._data import _prepare
    from fairmon.feu.settings import FEUSettings

    ds = load_adult() if row["dataset"] == "adult" else load_gesd(row["dataset"])
    frame, sensitive = ds.frame, "sex" if row["dataset"] == "adult" else ds.sensitive[0]
    if len(frame) > row["rows"]:
        frame, _ = train_test_split(frame, train_size=row["rows"], random_state=0, stratify=frame[ds.label])
        frame = frame.reset_index(drop=True)
    st = FEUSettings()
    return st, _prepare(frame, ds.features, sensitive, ds.label, ds.favorable, st.split, row["seed"])


def _result(doc: dict[str, Any]) -> Any:
    """FEU's stored final GESD (with its per-row stabilities) as a ``GESDResult`` for the paired difference."""
    from fairmon.explain.gesd import GESDResult, GroupStability

    d = doc["final_gesd"]["feu"]
    inst = d["instances"]
    return GESDResult(d["value"], d["p_value"] if d["p_value"] is not None else float("nan"),
                      tuple(GroupStability(**g) for g in d["groups"]), (),
                      np.array([i["index"] for i in inst]), np.array([i["group"] for i in inst], dtype=object),
                      np.array([i["stability"] for i in inst], dtype=float),
                      noise_floor=d["noise_floor"] if d["noise_floor"] is not None else float("nan"))


def eg_estimator(base: str, seed: int) -> Any:
    """ExponentiatedGradient's base learner for ``--eg-base`` (None: the product's logistic regression)."""
    if base == "logistic":
        return None
    from sklearn.neural_network import MLPClassifier

    from fairmon.feu._choose import REFERENCE_PRODUCTION
    from fairmon.feu.settings import FEUSettings

    st = FEUSettings()
    return MLPClassifier(hidden_layer_sizes=st.hidden, learning_rate_init=REFERENCE_PRODUCTION["lr"],
                         max_iter=int(REFERENCE_PRODUCTION["epochs"]), batch_size=st.batch_size, random_state=seed)


def eg_objective(objective: str) -> Any:
    """ExponentiatedGradient's objective for ``--eg-objective`` (None: the product's balanced error rate)."""
    if objective == "balanced":
        return None
    from fairlearn.reductions import ErrorRate

    return ErrorRate()


def settings_curve(prep: Any, proba: dict[str, np.ndarray], score: Any, seed: int, *, eg_base: str = "logistic",
                   epss: tuple[float, ...] = EPSS, objective: str = "balanced") -> list[dict[str, Any]]:
    """Test (and validation) metrics of every mitigator setting; the fitted mitigators kept for GESD."""
    from fairmon.feu._baselines import fit_mitigators, fit_threshold_optimizer, threshold_optimizer_explained
    from fairmon.feu._metrics import decision_metrics

    out = []
    for knob, values in (("tol", TOLS), ("eps", epss)):
        for v in values:
            c0 = time.process_time()
            if knob == "tol":  # ThresholdOptimizer alone (fit_mitigators would refit ExponentiatedGradient too)
                name, fitted = "threshold_optimizer", fit_threshold_optimizer(prep, proba["train"], v)
                model, note = threshold_optimizer_explained(fitted, prep, score)
            else:
                mit = fit_mitigators(prep, proba, production_score=score, eps=float(v),  # type: ignore[arg-type]
                                     eg_estimator=eg_estimator(eg_base, seed),
                                     eg_objective=eg_objective(objective))
                name, fitted = "exponentiated_gradient", mit.exponentiated_gradient
                model, note = mit.explained.get(name), mit.notes.get(name)
            entry: dict[str, Any] = {"mitigator": name, "knob": knob, "value": v, "_model": model, "_note": note}
            for part in ("validation", "test"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if knob == "tol":
                        yhat = fitted.predict(proba[part].reshape(-1, 1), sensitive_features=prep.s[part], random_state=seed)
                    else:
                        yhat = fitted.predict(prep.Z[part], random_state=seed)
                m = decision_metrics(prep.y[part], np.asarray(yhat, dtype=int), prep.s[part])
                entry.update({f"{part}_{k}": m[k] for k in ("balanced_accuracy", "dp", "selection_rate")})
            entry["fit_cpu_s"] = round(time.process_time() - c0, 2)
            out.append(entry)
    return out


def like_for_like(row: dict[str, Any]) -> str | None:
    """The mitigator that decides as the run's mode does (:data:`LIKE_FOR_LIKE`); None in paper mode."""
    return LIKE_FOR_LIKE.get(row.get("mode", "default"))


def _views(row: dict[str, Any], prod_val: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """Per view: which settings compete and the split the lowest DP is read on.

    * ``any`` — test balanced accuracy at least FEU's minus 0.01 (equal within ±0.01, or higher: a
      setting with more utility and a lower DP beats FEU too); chosen on test (oracle);
    * ``in_band`` — the same, test positive rate inside production's ±0.10 band too;
    * ``feu_rule`` — what FEU's own rule would pick among the settings, on **validation** only: inside
      the band and no worse than production's balanced accuracy minus 0.02 there, the lowest
      validation DP (no oracle; its test utility may then differ from FEU's);
    * ``like_for_like`` — ``any`` among the settings of the mitigator that decides as FEU's mode does
      (:data:`LIKE_FOR_LIKE`).
    """
    ba, rate = row["balanced_accuracy"], row["production_selection_rate"]

    def reaches(c: dict[str, Any]) -> bool:
        return bool(c["test_balanced_accuracy"] >= ba - EQUAL_BA - 1e-12)

    def in_band(c: dict[str, Any]) -> bool:
        return bool(abs(c["test_selection_rate"] - rate) <= BAND + 1e-12)

    def rule(c: dict[str, Any]) -> bool:  # the product's own constraint check, on the setting's validation metrics
        m = {"selection_rate": c["validation_selection_rate"], "balanced_accuracy": c["validation_balanced_accuracy"]}
        return _keeps(m, prod_val, band=BAND, tolerance=0.02, utility="balanced_accuracy") == (True, True)

    views: dict[str, tuple[Any, str]] = {"any": (reaches, "test"), "in_band": (lambda c: reaches(c) and in_band(c), "test"),
                                         "feu_rule": (rule, "validation")}
    like = like_for_like(row)
    if like is not None:
        views["like_for_like"] = (lambda c: reaches(c) and c["mitigator"] == like, "test")
    return views


def at_feu_dp(curve: list[dict[str, Any]], row: dict[str, Any]) -> dict[str, Any]:
    """The like-for-like mitigator's best test balanced accuracy overall and at FEU's test DP or lower.

    Example
    -------
    >>> curve = [{"mitigator": "exponentiated_gradient", "test_balanced_accuracy": ba, "test_dp": dp}
    ...          for ba, dp in ((0.70, 0.01), (0.72, 0.05), (0.74, 0.09))]
    >>> r = at_feu_dp(curve, {"mode": "default", "balanced_accuracy": 0.75, "dp": 0.06})
    >>> r["like_for_like_best_balanced_accuracy"], r["like_for_like_at_feu_dp"], r["like_for_like_at_feu_dp_verdict"]
    (0.74, 0.72, 'FEU higher')
    """
    like = [c for c in curve if c["mitigator"] == like_for_like(row)]
    if not like:  # paper mode: no like-for-like mitigator
        return {}
    fair = [c["test_balanced_accuracy"] for c in like if c["test_dp"] <= row["dp"] + 1e-12]
    best = max(fair) if fair else None
    verdict = ("no setting as fair as FEU" if best is None else "FEU higher" if row["balanced_accuracy"] > best + EQUAL_BA
               else "equal" if row["balanced_accuracy"] >= best - EQUAL_BA else "FEU lower")
    return {"like_for_like_best_balanced_accuracy": max(c["test_balanced_accuracy"] for c in like),
            "like_for_like_at_feu_dp": best, "like_for_like_at_feu_dp_verdict": verdict}


def _pick(curve: list[dict[str, Any]], ok: Any, split: str) -> dict[str, Any] | None:
    """The lowest-DP setting (DP read on ``split``) among those ``ok`` admits."""
    pool = [c for c in curve if ok(c)]
    return min(pool, key=lambda c: c[f"{split}_dp"]) if pool else None


def one_run(doc: dict[str, Any], *, final_gesd: bool, device: str | None, eg_base: str = "logistic",
            epss: tuple[float, ...] = EPSS, objective: str = "balanced") -> dict[str, Any]:
    """The frontier comparison of one run file (a recommended FEU candidate)."""
    from fairmon.feu._choose import REFERENCE_PRODUCTION
    from fairmon.feu._train import predict_proba, train_mlps

    row = doc["row"]
    st, prep = _frame_and_prep(row)
    ref = REFERENCE_PRODUCTION
    (net,) = train_mlps(prep.Z["train"], prep.y["train"], [(ref["lr"], int(ref["epochs"]), row["seed"])],
                        batch_size=st.batch_size, hidden=st.hidden, device=device)
    proba = {p: predict_proba(net, prep.Z[p]) for p in ("train", "validation", "test")}
    curve = settings_curve(prep, proba, lambda Z: predict_proba(net, Z), row["seed"], eg_base=eg_base, epss=epss,
                           objective=objective)
    base = {"threshold_optimizer": curve[0]}  # the run's own fits: exact parity, and eps 0.01 of its base learner
    if eg_base == "logistic" and epss[0] == 0.01:
        base["exponentiated_gradient"] = curve[len(TOLS)]
    out: dict[str, Any] = {
        "dataset": row["dataset"], "mode": row["mode"], "seed": row["seed"],
        "feu_balanced_accuracy": row["balanced_accuracy"], "feu_dp": row["dp"], "feu_selection_rate": row["selection_rate"],
        "production_selection_rate": row["production_selection_rate"],
        "reproduced": all(abs(base[b][f"test_{k}"] - row[f"{b}_{k}"]) < 1e-9 for b in base
                          for k in ("balanced_accuracy", "dp", "selection_rate")),
        "curve": [{k: v for k, v in c.items() if not k.startswith("_")} for c in curve],
    }
    feu = _result(doc) if final_gesd and doc.get("final_gesd", {}).get("feu") else None
    fs = row.get("final_gesd_settings")  # the explained functions: fit_mitigators' predict_proba wrappers
    gesd_cache: dict[int, dict[str, Any]] = {}
    out.update(at_feu_dp(curve, row))
    for view, (ok, split) in _views(row, doc["result"]["baselines"]["production"]["validation"]).items():
        c = _pick(curve, ok, split)
        key = f"{view}_"
        if c is None:
            out[key + "goal"] = ("no mitigator setting reaches FEU's bal. acc." if split == "test" else
                                 "no mitigator setting inside FEU's constraints on validation")
            continue
        ba_ok = bool(row["balanced_accuracy"] >= c["test_balanced_accuracy"] - EQUAL_BA - 1e-12)
        out.update({key + "mitigator": c["mitigator"], key + "knob": f"{c['knob']} {c['value']}",
                    key + "balanced_accuracy": c["test_balanced_accuracy"], key + "dp": c["test_dp"],
                    key + "selection_rate": c["test_selection_rate"], key + "dp_ok": bool(row["dp"] <= c["test_dp"]),
                    key + "balanced_accuracy_ok": ba_ok})
        if feu is not None and fs:
            if id(c) not in gesd_cache:
                gesd_cache[id(c)] = _gesd_vs_feu(prep, c, feu, fs, row["seed"], device)
            out.update({key + k: v for k, v in gesd_cache[id(c)].items()})
        verdict = out.get(key + "gesd_verdict")
        out[key + "goal"] = ("holds" if ba_ok and out[key + "dp_ok"] and verdict == "lower GESD shown" else
                             "not met, lower GESD not testable" if out.get(key + "gesd_testable") is False else "not met")
    return out


def _gesd_vs_feu(prep: Any, c: dict[str, Any], feu: Any, fs: dict[str, Any], seed: int,
                 device: str | None) -> dict[str, Any]:
    """The chosen setting's final GESD (the run's settings, rows and seed) and its paired difference from FEU's."""
    model = c["_model"]
    if model is None:
        return {"gesd_note": c["_note"]}
    entries, results = fg.compute(prep, {c["mitigator"]: model}, fs, random_state=seed, device=device)
    e = entries[c["mitigator"]]
    out = {"gesd": e.get("value"), "gesd_p_value": e.get("p_value"), "gesd_noise_floor": e.get("noise_floor"),
           "gesd_cpu_s": e.get("cpu_s")}
    if c["mitigator"] in results:
        d = fg.paired_difference(feu, results[c["mitigator"]], seed=seed)
        out.update(gesd_difference=d["difference"], gesd_ci=d["ci"], gesd_verdict=d["verdict"],
                   gesd_testable=bool(e.get("p_value") is not None and e["p_value"] < fg.DETECTABLE_P))
    return out


def markdown_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The flat per-seed rows of the results table (the curves stay in the JSON)."""
    flat = []
    for r in rows:
        f = {k: v for k, v in r.items() if k != "curve"}
        for view in VIEWS:
            if f.get(f"{view}_gesd_ci"):
                lo, hi = f.pop(f"{view}_gesd_ci")
                f[f"{view}_gesd_ci"] = f"[{lo:+.3f}, {hi:+.3f}]"
        flat.append(f)
    return flat


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", default=str(HERE / "results" / "runs"), help="folder of run.py's run files")
    p.add_argument("--mode", default="default", help="run files <mode>_*.json (default, default+gt)")
    p.add_argument("--datasets", default="german,bail,adult")
    p.add_argument("--final-gesd", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--eg-base", choices=EG_BASES, default="logistic",
                   help="ExponentiatedGradient's base learner (mlp: the production network's shape)")
    p.add_argument("--eg-objective", choices=EG_OBJECTIVES, default="balanced",
                   help="ExponentiatedGradient's objective (error: fairlearn's default, the product's before session 19)")
    p.add_argument("--eps", default=",".join(str(e) for e in EPSS), help="ExponentiatedGradient's eps values (> 0)")
    p.add_argument("--smoke", action="store_true", help="the first recommended German run file, no GESD (CI)")
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument("--name", default=None, help="results file name (default frontier_<mode>)")
    p.add_argument("--notes", default="")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    files = sorted(Path(args.runs).glob(f"{args.mode}_*.json"))
    docs = [json.loads(f.read_text()) for f in files]
    docs = [d for d in docs if d["row"]["mode"] == args.mode and d["row"]["recommended"]
            and d["row"]["dataset"] in args.datasets.split(",")]
    if args.smoke:
        docs = [d for d in docs if d["row"]["dataset"] == "german"][:1]
        args.final_gesd = False
    if not docs:
        raise SystemExit(f"no recommended run files {args.mode}_*.json for {args.datasets} in {args.runs}")
    epss = tuple(float(e) for e in args.eps.split(","))
    if any(e <= 0 for e in epss):
        p.error(f"--eps values must be > 0, got {args.eps}")
    rows = [one_run(d, final_gesd=args.final_gesd, device=args.device, eg_base=args.eg_base, epss=epss,
                    objective=args.eg_objective) for d in docs]
    settings = {"mode": args.mode, "datasets": args.datasets, "tols": TOLS, "epss": epss, "eg_base": args.eg_base,
                "eg_objective": args.eg_objective,
                "equal_ba": EQUAL_BA,
                "band": BAND, "final_gesd": args.final_gesd, "smoke": args.smoke, "runs": str(args.runs)}
    name = args.name or ("frontier_smoke" if args.smoke else f"frontier_{args.mode}")
    write_results(args.out, name, markdown_rows(rows), settings=settings, notes=args.notes)
    # every setting's validation and test metrics per run (the curves behind each row's choice)
    (Path(args.out) / f"{name}_curves.json").write_text(
        json.dumps({f"{r['dataset']}_{r['seed']}": r["curve"] for r in rows}, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
