"""GESD speed: fairmon's batched SHAP+LIME vs the libraries and vs a reference-style loop.

Setting (issue 5): the GESD German data (``load_gesd("german")``; 70/30 stratified split, schema
fitted on train, as the reference code), fairmon's 64-32 MLP trained for 20 epochs, GESD with
m = 100 sampled test rows and N = 10 perturbations (1,100 explained rows), torch limited to 2 threads.

Rows of the results table:

* ``fairmon batched shap+lime`` — :func:`fairmon.explain.gesd.gesd` with its defaults (batched
  KernelSHAP 128 coalitions x 20 background rows + batched LIME 1000 samples), all 1,100 rows in one
  call per explainer. Timed end to end.
* ``libraries, equal sample counts`` — the same estimators through shap's ``KernelExplainer`` and
  lime's ``LimeTabularExplainer`` (``kernelshap-lib`` / ``lime-lib`` of ``fairmon.explain``) at the
  same sample counts and background. They explain one row at a time, so they are timed on
  ``--lib-rows`` of the 1,100 rows and extrapolated linearly per row (stated in the row).
* ``reference-style loop`` — the GESD reference code's loop: per instance and per perturbation one
  ``shap.DeepExplainer`` call (100 background rows) and one ``LimeTabularExplainer.explain_instance``
  (5000 samples, ``top_labels=1``) on the network's probability. Timed on ``--ref-instances`` of the
  100 instances (each with its 10 perturbations) and extrapolated linearly per instance unless
  ``--ref-instances 100``.

The acceptance target is ``reference-style loop / fairmon batched >= 20``.

Usage::

    python benchmarks/gesd_speed/run.py --smoke --out /tmp/x      # seconds (CI)
    nice python benchmarks/gesd_speed/run.py                       # full run -> results/
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

import numpy as np  # noqa: E402

from benchmarks._meta import write_results  # noqa: E402


def _setup(seed: int) -> dict[str, Any]:
    from sklearn.model_selection import train_test_split

    from fairmon.datasets import load_gesd
    from fairmon.feu import train_mlp
    from fairmon.registry.model import Model
    from fairmon.schema import FeatureSchema

    ds = load_gesd("german")
    X, y = ds.frame[ds.features], ds.frame[ds.label].to_numpy()
    s = ds.frame[ds.sensitive[0]].astype(str).to_numpy()
    tr, te = train_test_split(np.arange(len(X)), test_size=0.3, random_state=42, stratify=y)
    schema = FeatureSchema.fit(X.iloc[tr].reset_index(drop=True))
    Ztr, Zte = schema.transform(X.iloc[tr].reset_index(drop=True)), schema.transform(X.iloc[te].reset_index(drop=True))
    net = train_mlp(Ztr, y[tr], lr=1e-3, epochs=20, seed=seed, device="cpu")
    return {"model": Model(net, schema, framework="torch", device="cpu"), "net": net, "Ztr": Ztr, "Zte": Zte,
            "s_te": s[te], "d": schema.n_encoded}


def _rows_like_gesd(Zte: np.ndarray, m: int, n_pert: int, seed: int) -> np.ndarray:
    """The m * (N + 1) rows one GESD evaluation explains (same sampling and perturbation scheme)."""
    from fairmon.explain.gesd import perturb

    rng = np.random.default_rng(seed)
    idx = rng.choice(len(Zte), size=min(m, len(Zte)), replace=False)
    P = perturb(Zte[idx], n_perturbations=n_pert, sigma=0.1, mask_prob=0.2, baseline=0.0, rng=rng)
    return np.concatenate([Zte[idx], P.reshape(-1, Zte.shape[1])])


def reference_loop(net: Any, Zte: np.ndarray, s_te: np.ndarray, Ztr: np.ndarray, *, instances: int, m: int,
                   n_pert: int, seed: int) -> tuple[float, np.ndarray]:
    """Reference-style GESD loop on ``instances`` of the ``m`` sampled rows; returns (seconds, S(x))."""
    import shap
    import torch
    from lime.lime_tabular import LimeTabularExplainer

    rng = np.random.default_rng(seed)
    d = Zte.shape[1]
    prob_net = torch.nn.Sequential(net.net, torch.nn.Sigmoid()).eval()  # P(class 1), shape (n, 1)
    bg = torch.as_tensor(Ztr[rng.choice(len(Ztr), size=min(100, len(Ztr)), replace=False)], dtype=torch.float32)
    deep = shap.DeepExplainer(prob_net, bg)
    lime_explainer = LimeTabularExplainer(Ztr, mode="classification", class_names=["class0", "class1"],
                                          random_state=seed)

    def predict_fn(A: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            p1 = prob_net(torch.as_tensor(A, dtype=torch.float32)).numpy().reshape(-1)
        return np.column_stack([1 - p1, p1])

    def aggregated(x: np.ndarray) -> np.ndarray:
        sv = np.asarray(deep.shap_values(torch.as_tensor(x[None], dtype=torch.float32), check_additivity=False))
        exp = lime_explainer.explain_instance(x, predict_fn, num_features=d, top_labels=1)
        label = next(iter(exp.as_map()))
        lv = np.zeros(d)
        for j, w in exp.as_map()[label]:
            lv[j] = w
        return (sv.reshape(-1)[:d] + lv) / 2.0

    sample = Zte[rng.choice(len(Zte), size=min(m, len(Zte)), replace=False)][:instances]
    t0 = time.perf_counter()
    scores = []
    for x in sample:
        e0 = aggregated(x)
        vals = []
        for _ in range(n_pert):
            xp = x + rng.normal(0.0, 0.1, size=d)
            xp[rng.random(d) < 0.2] = 0.0
            vals.append(1.0 / (1.0 + np.abs(e0 - aggregated(xp)).sum()))
        scores.append(np.mean(vals))
    return time.perf_counter() - t0, np.asarray(scores)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny run for CI (seconds)")
    p.add_argument("--m", type=int, default=100)
    p.add_argument("--n-perturbations", type=int, default=10)
    p.add_argument("--lib-rows", type=int, default=44, help="rows timed through the libraries (extrapolated)")
    p.add_argument("--ref-instances", type=int, default=10, help="instances timed in the reference loop")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu", help="device of fairmon's batched GESD (cpu, cuda); the library and reference loops run on CPU")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3, help="timed runs of the batched GESD (median reported)")
    p.add_argument("--out", default=str(HERE / "results"))
    args = p.parse_args(argv)
    if args.smoke:
        args.m, args.n_perturbations, args.lib_rows, args.ref_instances, args.repeats = 8, 1, 2, 1, 1
    import torch

    torch.set_num_threads(args.threads)
    from fairmon.explain import explain
    from fairmon.explain.gesd import DEFAULT_EXPLAINER_PARAMS, gesd

    env = _setup(args.seed)
    m, N = args.m, args.n_perturbations
    n_rows = m * (N + 1)
    rows: list[dict[str, Any]] = []

    if args.device != "cpu":  # warm-up: CUDA context and kernels, not part of the timing
        gesd(env["model"], env["Zte"], env["s_te"], X_train=env["Ztr"], sample_size=8, n_perturbations=1,
             min_group_size=2, random_state=args.seed, device=args.device)
    times = []
    for _ in range(args.repeats):  # the machine is shared: the median of a few runs, all recorded
        t0 = time.perf_counter()
        res = gesd(env["model"], env["Zte"], env["s_te"], X_train=env["Ztr"], sample_size=m, n_perturbations=N,
                   min_group_size=5, random_state=args.seed, device=args.device)
        times.append(time.perf_counter() - t0)
    t_batched = float(np.median(times))
    rows.append({"variant": "fairmon batched shap+lime (default settings)", "explained_rows": n_rows,
                 "seconds": round(t_batched, 2), "measured_rows": n_rows, "gesd": round(res.value, 5),
                 "p_value": round(res.p_value, 4), "runs_s": " ".join(f"{t:.2f}" for t in times)})

    # the same estimators through the libraries, equal sample counts and background
    Zrows = _rows_like_gesd(env["Zte"], m, N, args.seed)[: args.lib_rows]
    rng = np.random.default_rng(args.seed)
    bg = env["Ztr"][np.sort(rng.choice(len(env["Ztr"]), size=100, replace=False))]
    ks = DEFAULT_EXPLAINER_PARAMS["kernelshap"]
    lime_n = DEFAULT_EXPLAINER_PARAMS["lime"]["n_samples"]
    t_lib = 0.0
    for method, kw, background in (
        ("kernelshap-lib", {"n_samples": ks["n_samples"]}, bg[: ks["background_size"]]),
        ("lime-lib", {"n_samples": lime_n}, env["Ztr"]),
    ):
        t0 = time.perf_counter()
        explain(env["model"], Zrows, method=method, target="positive", background=background, random_state=0,
                device="cpu", **kw)
        t_lib += time.perf_counter() - t0
    lib_full = t_lib / len(Zrows) * n_rows
    rows.append({"variant": "libraries (shap KernelExplainer + lime), equal sample counts", "explained_rows": n_rows,
                 "seconds": round(lib_full, 2), "measured_rows": len(Zrows), "extrapolated": len(Zrows) < n_rows,
                 "speedup_of_batched": round(lib_full / t_batched, 1)})

    env["model"].to("cpu")  # the batched run may have moved the shared module to the GPU; the loop is CPU
    t_ref, scores = reference_loop(env["net"], env["Zte"], env["s_te"], env["Ztr"], instances=args.ref_instances,
                                   m=m, n_pert=N, seed=args.seed)
    ref_full = t_ref / args.ref_instances * m
    rows.append({"variant": "reference-style loop (DeepExplainer + lime per instance, LIME 5000)",
                 "explained_rows": n_rows, "seconds": round(ref_full, 2),
                 "measured_rows": args.ref_instances * (N + 1), "extrapolated": args.ref_instances < m,
                 "speedup_of_batched": round(ref_full / t_batched, 1),
                 "target_met(>=20x)": bool(ref_full / t_batched >= 20)})
    name = ("gesd_speed_smoke" if args.smoke else "gesd_speed") + (f"_{args.device}" if args.device != "cpu" else "")
    settings = {**{k: v for k, v in vars(args).items() if k != "out"}, "kernelshap": ks, "lime_samples": lime_n,
                "model": "MLP 64-32, 20 epochs, German (load_gesd), 70/30 split"}
    notes = ("Seconds for one GESD evaluation (m x (N+1) explained rows); the batched row is the median of "
             "--repeats runs (runs_s lists them). Library and reference rows are "
             "timed on the stated number of rows and extrapolated linearly per row/instance. The machine "
             "is shared with other jobs (see loadavg), so all timings are inflated.")
    write_results(args.out, name, rows, settings=settings, notes=notes)
    return rows


if __name__ == "__main__":
    main()
