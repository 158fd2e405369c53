"""The final GESD comparison of ``run.py`` (issue 16): four models, one size, the same rows, on **test**.

The search's light GESD (50 rows, 5 perturbations, KernelSHAP 32 x 10, LIME 100) has a noise floor
(0.058-0.085) above every GESD it measured (0.01-0.05), so it cannot say which model has the lower
GESD. After the search, this module computes GESD once more, at a larger size chosen so that its
floor is smaller (``--final-gesd-*``; README "Session 8 run" gives the measurement behind the default),
for

* ``feu`` — the recommended (paper mode: selected) candidate: the network's P(favourable), or with
  group thresholds its score shifted by the group's threshold (``_Evaluator.explained``, what the
  light GESD explains for it);
* ``production`` — the production stand-in's P(favourable) (retrained as ``fairmon.feu._choose._production``
  trains it, with the search's seed: the same network; ``production_reproduced`` checks it);
* ``threshold_optimizer`` and ``exponentiated_gradient`` — their probability of a favourable decision
  (``fairmon.feu._baselines.fit_mitigators``, the functions the light GESD explains);
* ``constant`` — 0 by definition (a constant has zero attributions); not computed.

All four get the same call: the test split's encoded rows and groups, the training rows as background,
the same ``random_state`` (so the same sampled rows and the same perturbations), the same explainer
settings; each function as the light GESD explains it (the networks as torch models, the others as a
``predict_proba`` over the encoded rows: the same functions either way). Recorded per
model: value, p-value, noise floor (95th percentile of GESD under 1,000 random relabellings of the
sampled rows' groups), sampled rows per group, CPU-s (process time) and wall-s.

Paired differences ``GESD(feu) - GESD(other)`` for ``other`` in production and the two mitigators:
the sampled rows are the same, so a bootstrap that resamples them within each group (the same draws
for both models) gives a 95% interval of the difference. Verdict per pair:

* ``lower GESD shown`` — the difference is below ``-floor`` (``floor`` = the larger of the two
  models' noise floors) **and** the bootstrap interval lies below 0;
* ``within noise`` — ``|difference| <= floor``;
* ``not shown`` — otherwise (FEU's GESD higher beyond the floor, or a difference beyond the floor
  whose interval still contains 0); ``why`` says which.

Example
-------
>>> verdict(-0.03, (-0.05, -0.01), 0.02), verdict(0.01, (-0.02, 0.04), 0.02), verdict(0.03, (0.01, 0.05), 0.02)
('lower GESD shown', 'within noise', 'not shown')
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

from fairmon.errors import InsufficientDataError
from fairmon.explain.gesd import GESDResult, gesd, group_disparity
from fairmon.feu._baselines import fit_mitigators
from fairmon.feu._choose import REFERENCE_PRODUCTION
from fairmon.feu._data import _Prepared
from fairmon.feu._evaluate import _Evaluator
from fairmon.feu._metrics import outcome_metrics
from fairmon.feu._train import predict_proba, train_mlps
from fairmon.registry.model import Model

MODELS = ("feu", "production", "threshold_optimizer", "exponentiated_gradient")
MITIGATORS = ("threshold_optimizer", "exponentiated_gradient")
OTHERS = ("production", *MITIGATORS)
CONSTANT_NOTE = "0 by definition: a constant predictor has zero attributions (not computed)"
#: paired bootstrap resamples of the sampled rows (within groups) for the difference's interval
N_BOOT = 2000
#: balanced-accuracy tolerance of "equal balanced accuracy" in issue 16's goal
EQUAL_BA = 0.01
#: a final GESD with a permutation p-value below this is above its own noise floor (~ its 95th percentile)
DETECTABLE_P = 0.05


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``--final-gesd-*`` options of ``run.py``."""
    p.add_argument("--final-gesd-sample", type=int, default=100, help="final GESD: sampled test rows m")
    p.add_argument("--final-gesd-perturbations", type=int, default=10, help="final GESD: perturbations N")
    p.add_argument("--final-gesd-ks-samples", type=int, default=128, help="final GESD: KernelSHAP coalitions")
    p.add_argument("--final-gesd-ks-background", type=int, default=20, help="final GESD: KernelSHAP background")
    p.add_argument("--final-gesd-lime-samples", type=int, default=1000, help="final GESD: LIME samples")
    p.add_argument("--final-gesd-stratify", action=argparse.BooleanOptionalAction, default=True,
                   help="final GESD: equal allocation of the sampled rows to the groups (default on)")
    p.add_argument("--no-final-gesd", action="store_true", help="skip the final GESD comparison")


def gesd_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`fairmon.explain.gesd` for the final comparison."""
    return {
        "explainer": "shap+lime",
        "sample_size": args.final_gesd_sample,
        "n_perturbations": args.final_gesd_perturbations,
        "stratify": bool(args.final_gesd_stratify),
        "min_group_size": 10,
        "explainer_params": {
            "kernelshap": {"n_samples": args.final_gesd_ks_samples, "background_size": args.final_gesd_ks_background},
            "lime": {"n_samples": args.final_gesd_lime_samples},
        },
    }


def explained_models(prep: _Prepared, st: Any, res: Any, seed: int, device: str | None) -> tuple[dict[str, Model], dict[str, Any]]:
    """The functions whose GESD is compared (module docstring), and notes (why one is missing, checks).

    The production stand-in is retrained as the search trains it (``fairmon.feu._choose._production``:
    the reference hyperparameters and the search's seed; training is deterministic per seed), and
    ``production_reproduced`` records that its test metrics equal the search's. ``res`` is the search's
    ``FEUResult`` (None: production and the mitigators only, as ``floor_size.py`` uses it).
    """
    ref = REFERENCE_PRODUCTION
    (net,) = train_mlps(prep.Z["train"], prep.y["train"], [(ref["lr"], int(ref["epochs"]), seed)],
                        batch_size=st.batch_size, hidden=st.hidden, device=device)
    proba = {part: predict_proba(net, prep.Z[part]) for part in ("train", "validation", "test")}
    test = outcome_metrics(prep.y["test"], proba["test"], prep.s["test"], float(ref["threshold"]))
    prod = res.baselines["production"]["test"] if res is not None else {}
    notes: dict[str, Any] = {"production_reproduced": all(
        prod.get(k) is not None and abs(test[k] - prod[k]) < 1e-9 for k in ("balanced_accuracy", "dp", "selection_rate"))
        if res is not None else None}
    ev = _Evaluator(prep, st, gesd_seed=seed + 1, device=device)
    # torch networks as the light GESD explains them (``_Evaluator.model``: P(favourable), KernelSHAP's
    # first-layer path); the mitigators and a group-threshold candidate as ``predict_proba`` wrappers
    models = {"production": ev.model(net, 0.5)}
    mit = fit_mitigators(prep, proba, production_score=lambda Z: predict_proba(net, Z))
    models.update(mit.explained)
    notes.update({f"{k}_note": v for k, v in mit.notes.items()})
    if res is not None and res.model is not None and res.selected is not None:
        models["feu"] = ev.explained(res.model.estimator, res.selected.threshold, res.selected.group_thresholds)
    return models, notes


def compute(prep: _Prepared, models: dict[str, Model], settings: dict[str, Any], *, random_state: int,
            device: str | None) -> tuple[dict[str, dict[str, Any]], dict[str, GESDResult]]:
    """GESD of each model on the test split with the same call; ``(entries, results)``."""
    entries: dict[str, dict[str, Any]] = {}
    results: dict[str, GESDResult] = {}
    for name in MODELS:
        if name not in models:
            continue
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            r = gesd(models[name], prep.Z["test"], prep.s["test"], X_train=prep.Z["train"], random_state=random_state,
                     device=device, **settings)
        except InsufficientDataError as exc:
            entries[name] = {"value": None, "note": str(exc)}
            continue
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        results[name] = r
        entries[name] = {"value": _f(r.value), "p_value": _f(r.p_value), "noise_floor": _f(r.noise_floor),
                         "sampled": int(r.settings["sampled"]),
                         "group_sizes": {str(g.group): g.size for g in r.groups},
                         "cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}
    return entries, results


def paired_difference(a: GESDResult, b: GESDResult, *, n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any]:
    """``GESD(a) - GESD(b)`` on the same sampled rows, its paired 95% bootstrap interval, floor and verdict.

    Example
    -------
    >>> import numpy as np
    >>> from fairmon.explain.gesd import GESDResult
    >>> g = np.repeat(["F", "M"], 50); idx = np.arange(100)
    >>> def res(s):
    ...     v = abs(s[:50].mean() - s[50:].mean())
    ...     return GESDResult(v, 0.5, (), (), idx, g, s, noise_floor=0.01)
    >>> rng = np.random.default_rng(0); base = rng.uniform(0.8, 0.9, 100)
    >>> d = paired_difference(res(base), res(base + np.r_[np.zeros(50), np.full(50, 0.05)]))
    >>> d["verdict"], d["difference"] < -0.04
    ('lower GESD shown', True)
    """
    if not np.array_equal(a.instance_index, b.instance_index):
        raise ValueError("paired GESD difference needs the same sampled rows (same X, groups and random_state)")
    d = float(a.value - b.value)
    floor = float(max(a.noise_floor, b.noise_floor))
    gs = np.array([str(x) for x in a.instance_group.tolist()])
    # the groups in the GESD value (sufficient in both results; all sampled groups when none are listed)
    labels = sorted({str(g.group) for g in a.groups if g.sufficient} & {str(g.group) for g in b.groups if g.sufficient}
                    if a.groups and b.groups else set(gs.tolist()))
    members = [np.flatnonzero(gs == lab) for lab in labels]
    rng = np.random.default_rng([seed, 0x70616972])
    diffs = np.empty(n_boot)
    for k in range(n_boot):
        draws = [m[rng.integers(0, len(m), len(m))] for m in members]
        diffs[k] = (group_disparity([a.instance_stability[i].mean() for i in draws])
                    - group_disparity([b.instance_stability[i].mean() for i in draws]))
    lo, hi = (float(v) for v in np.quantile(diffs, [0.025, 0.975]))
    v = verdict(d, (lo, hi), floor)
    why = ("FEU's GESD higher beyond the floor" if v == "not shown" and d > floor else
           "difference beyond the floor, but the bootstrap interval contains 0" if v == "not shown" else "")
    return {"difference": d, "ci": [lo, hi], "floor": floor, "verdict": v, "why": why}


def verdict(d: float, ci: tuple[float, float], floor: float) -> str:
    """``lower GESD shown``, ``within noise`` or ``not shown`` (module docstring)."""
    if not (math.isfinite(d) and math.isfinite(floor)):
        return "not shown"
    if abs(d) <= floor:
        return "within noise"
    return "lower GESD shown" if d < -floor and ci[1] < 0 else "not shown"


def row_fields(entries: dict[str, dict[str, Any]], results: dict[str, GESDResult], settings: dict[str, Any],
               notes: dict[str, Any], seed: int) -> dict[str, Any]:
    """The per-run JSON row's ``final_gesd_*`` fields."""
    row: dict[str, Any] = {"final_gesd_settings": settings, "final_gesd_constant": 0.0,
                           "final_gesd_constant_note": CONSTANT_NOTE, **{f"final_gesd_{k}": v for k, v in notes.items()}}
    for name, e in entries.items():
        row[f"final_gesd_{name}"] = e.get("value")
        for k in ("p_value", "noise_floor", "sampled", "group_sizes", "cpu_s", "wall_s", "note"):
            if k in e:
                row[f"final_gesd_{name}_{k}"] = e[k]
    if "feu" in results:
        for other in OTHERS:
            if other in results:
                pd_ = paired_difference(results["feu"], results[other], seed=seed)
                row.update({f"final_gesd_diff_{other}_{k}": v for k, v in pd_.items()})
    return row


def seed_goal(row: dict[str, Any]) -> dict[str, Any]:
    """Per seed: the lower-DP mitigator within ±0.01 balanced accuracy of FEU, the GESD verdict against it, the goal."""
    if not row.get("recommended") or row.get("balanced_accuracy") is None:
        return {}
    ba = row["balanced_accuracy"]
    near = [b for b in MITIGATORS if row.get(f"{b}_balanced_accuracy") is not None
            and abs(row[f"{b}_balanced_accuracy"] - ba) <= EQUAL_BA + 1e-12]
    out: dict[str, Any] = {"goal_mitigator": None}
    if not near:
        out["goal_seed"] = "no mitigator at equal bal. acc."
        return out
    b = min(near, key=lambda m: row[f"{m}_dp"])
    out["goal_mitigator"] = b
    out["goal_dp_ok"] = bool(row["dp"] <= row[f"{b}_dp"])
    v = row.get(f"final_gesd_diff_{b}_verdict")
    out["goal_gesd_difference"] = row.get(f"final_gesd_diff_{b}_difference")
    out["goal_gesd_verdict"] = v or "no final GESD"
    # "lower GESD" can be shown only against a mitigator whose own GESD is above its noise floor: a model
    # cannot be shown below one that is itself indistinguishable from 0 (GESD >= 0)
    p = row.get(f"final_gesd_{b}_p_value")
    out["goal_gesd_testable"] = None if p is None else bool(p < DETECTABLE_P)
    out["goal_seed"] = ("holds" if out["goal_dp_ok"] and v == "lower GESD shown" else
                        "not met, lower GESD not testable" if out["goal_gesd_testable"] is False else "not met")
    return out


def detectable(rs: list[dict[str, Any]]) -> str:
    """Per model: on how many runs its final GESD is above its own noise (permutation p < 0.05).

    Against a model whose GESD is within noise of 0, no model can show a lower one, so this count bounds
    how often the goal's "lower GESD" is testable at all.

    >>> detectable([{"recommended": True, "final_gesd_feu_p_value": 0.01, "final_gesd_production_p_value": 0.3}])
    'feu 1 of 1, production 0 of 1'
    """
    parts = []
    for name in MODELS:
        src = [r for r in rs if r.get("recommended")] if name == "feu" else rs
        ps = [r[f"final_gesd_{name}_p_value"] for r in src if r.get(f"final_gesd_{name}_p_value") is not None]
        if ps:
            parts.append(f"{name} {sum(p < DETECTABLE_P for p in ps)} of {len(ps)}")
    return ", ".join(parts)


def summary_fields(rs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per dataset: mean final GESD and floor per model, mean CPU-s, verdict counts and the per-seed goal count."""
    s: dict[str, Any] = {}
    rec = [r for r in rs if r.get("recommended")]
    for name in MODELS:
        for suffix in ("", "_noise_floor", "_cpu_s"):
            src = rec if name == "feu" else rs
            vals = [r[f"final_gesd_{name}{suffix}"] for r in src if r.get(f"final_gesd_{name}{suffix}") is not None]
            if vals:
                s[f"final_gesd_{name}{suffix}_mean"] = float(np.mean(vals))
    for other in OTHERS:
        vs = [str(r[f"final_gesd_diff_{other}_verdict"]) for r in rec if r.get(f"final_gesd_diff_{other}_verdict")]
        if vs:
            s[f"final_gesd_vs_{other}"] = ", ".join(f"{vs.count(v)} {v}" for v in sorted(set(vs)))
    if any(r.get(f"final_gesd_{m}_p_value") is not None for r in rs for m in MODELS):
        s["final_gesd_detectable"] = detectable(rs)
    goals = [str(r["goal_seed"]) for r in rec if r.get("goal_seed")]
    if goals:
        s["goal_per_seed"] = ", ".join(f"{goals.count(v)} {v}" for v in sorted(set(goals)))
    return s


def _v(r: dict[str, Any], name: str) -> str:
    v, f = r.get(f"final_gesd_{name}"), r.get(f"final_gesd_{name}_noise_floor")
    if v is None:
        return "—"
    return f"{v:.3f} ± {f:.3f}" if f is not None else f"{v:.3f}"


def markdown(rs: list[dict[str, Any]]) -> list[str]:
    """The comparison markdown's final-GESD table of one dataset (one line per seed)."""
    with_final = [r for r in rs if any(r.get(f"final_gesd_{m}") is not None for m in OTHERS)]
    if not with_final:
        return ["", "Final GESD: not computed for these runs (before session 8, or `--no-final-gesd`)."]
    st = with_final[0].get("final_gesd_settings", {})
    ep = st.get("explainer_params", {})
    head = (f"Final GESD on test (value ± noise floor; m = {st.get('sample_size')}, N = {st.get('n_perturbations')}, "
            f"stratify {st.get('stratify')}, KernelSHAP {ep.get('kernelshap', {}).get('n_samples')} × "
            f"{ep.get('kernelshap', {}).get('background_size')}, LIME {ep.get('lime', {}).get('n_samples')}; same rows, "
            f"perturbations and random_state for every model; constant: 0 by definition). Δ = GESD(FEU) − GESD(the "
            f"lower-DP mitigator within ±{EQUAL_BA} bal. acc. of FEU on that seed), 95% paired bootstrap interval; "
            "'lower GESD shown' needs Δ < −floor and the interval below 0.")
    lines = ["", head, "",
             "| seed | FEU | production | ThresholdOptimizer | ExponentiatedGradient | CPU-s per model (FEU / prod. / TO / EG) "
             "| mitigator at equal bal. acc. | Δ GESD [95% CI] | lower GESD | DP ≤ mitigator's | goal |",
             "|---|" + "---|" * 10]
    for r in with_final:
        cpu = " / ".join("—" if r.get(f"final_gesd_{m}_cpu_s") is None else f"{r[f'final_gesd_{m}_cpu_s']:.1f}"
                         for m in MODELS)
        b = r.get("goal_mitigator")
        if b:
            lo, hi = r.get(f"final_gesd_diff_{b}_ci") or (math.nan, math.nan)
            d = r.get(f"final_gesd_diff_{b}_difference")
            delta = "—" if d is None else f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}] (floor {r[f'final_gesd_diff_{b}_floor']:.3f})"
            tail = f"{delta} | {r.get('goal_gesd_verdict')} | {'yes' if r.get('goal_dp_ok') else 'no'} | {r.get('goal_seed')}"
        elif r.get("recommended"):
            tail = f"— | — | — | {r.get('goal_seed', '—')}"
        else:
            tail = "— | — | — | no recommendation"
        lines.append(f"| {r['seed']} | {_v(r, 'feu')} | {_v(r, 'production')} | {_v(r, 'threshold_optimizer')} | "
                     f"{_v(r, 'exponentiated_gradient')} | {cpu} | {b or '—'} | {tail} |")
    rec = [r for r in with_final if r.get("recommended")]
    for other in OTHERS:
        vs = [str(r[f"final_gesd_diff_{other}_verdict"]) for r in rec if r.get(f"final_gesd_diff_{other}_verdict")]
        if vs:
            ds = [r[f"final_gesd_diff_{other}_difference"] for r in rec if r.get(f"final_gesd_diff_{other}_verdict")]
            lines.append(f"- GESD(FEU) − GESD({other}), all recommended seeds: mean {np.mean(ds):+.3f}; "
                         + ", ".join(f"{vs.count(v)} {v}" for v in sorted(set(vs))))
    lines.append(f"- final GESD above its own noise (p < {DETECTABLE_P}; below it no model can show a lower one): "
                 f"{detectable(with_final)}")
    return lines


def _f(v: Any) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)
