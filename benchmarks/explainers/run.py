"""Explainer benchmark: batched LIME / KernelSHAP (torch) vs the lime / shap library loops.

Setting (issue 4): an Adult-size MLP (fairmon's 64-32 ReLU network on the encoded Adult schema,
~100 columns; real Adult from ``FAIRMON_DATA_DIR`` when available, an Adult-like synthetic frame
otherwise), 500 explained rows, torch limited to 2 threads, **equal sample counts and the same
background** on both sides (LIME: 5000 samples, training data = background rows; KernelSHAP:
``nsamples="auto"`` = 2·M + 2048 coalitions, background of ``--bg-shap`` rows).

The library loops explain one row at a time, so they are timed on a subset of rows
(``--lib-rows``) and extrapolated linearly per row to the full row count — stated in the results.
Per-row agreement (mean Spearman, mean |diff| / mean |attribution|) on the subset is recorded too.

Usage::

    python benchmarks/explainers/run.py --smoke --out /tmp/x     # seconds (CI)
    nice python benchmarks/explainers/run.py                      # full run, results/ beside this file
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

# OpenMP threads that spin while waiting burn the other jobs' cores on a shared machine (and theirs
# burn ours): a 2-thread torch run at load ~3-6 took 5-9x more CPU than with passive waiting. Set
# before torch is imported; applies to both sides (the library loops call the same torch model).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks._meta import write_results  # noqa: E402


def adult_like(n: int, seed: int, *, synthetic: bool = False) -> tuple[pd.DataFrame, str]:
    """Real Adult features if the dataset is available, else a synthetic frame of the same layout."""
    try:
        if synthetic:
            raise LookupError("synthetic requested")
        from fairmon.datasets import load_adult

        ds = load_adult()
        sample = ds.frame.sample(n=min(n, len(ds.frame)), random_state=seed)
        df = sample[ds.features].reset_index(drop=True)
        for c in ds.categorical:
            df[c] = df[c].fillna("<NA>").astype(str)
        df["_y"] = (sample[ds.label] == ds.favorable).to_numpy().astype(int)
        return df, "adult"
    except Exception:  # noqa: BLE001 - datasets absent: synthetic stand-in with Adult's encoded width
        rng = np.random.default_rng(seed)
        cols: dict[str, Any] = {f"num{i}": rng.normal(size=n) * (i + 1) for i in range(6)}
        for name, k in [("workclass", 9), ("education", 16), ("marital", 7), ("occupation", 15),
                        ("relationship", 6), ("race", 5), ("sex", 2), ("country", 42)]:
            p = rng.dirichlet(np.ones(k) * 0.5)
            cols[name] = rng.choice([f"{name}{j}" for j in range(k)], size=n, p=p)
        df = pd.DataFrame(cols)
        logit = df["num0"] * 0.8 - df["num1"] * 0.3 + (df["sex"] == "sex0") * 0.7 - 0.2
        df["_y"] = (logit + rng.logistic(size=n) > 0).astype(int)
        return df, "adult-like synthetic"


def train_mlp(df: pd.DataFrame, *, epochs: int, seed: int) -> Any:
    import torch

    from fairmon.registry import Model, build_mlp
    from fairmon.schema import FeatureSchema

    X = df.drop(columns="_y")
    schema = FeatureSchema.fit(X)
    Z = torch.as_tensor(schema.transform(X), dtype=torch.float32)
    y = torch.as_tensor(np.array(df["_y"], dtype=np.float32))
    torch.manual_seed(seed)
    net = build_mlp(schema.n_encoded, (64, 32))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        perm = torch.randperm(len(Z))
        for i in range(0, len(Z), 256):
            idx = perm[i : i + 256]
            opt.zero_grad()
            loss_fn(net(Z[idx]), y[idx]).backward()
            opt.step()
    return Model(net, schema, framework="torch", device="cpu")


def agreement(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from scipy.stats import spearmanr

    rho = float(np.nanmean([spearmanr(x, y).statistic for x, y in zip(a, b)]))
    return rho, float(np.abs(a - b).mean() / np.abs(b).mean())


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (seconds), for CI")
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--lib-rows", type=int, default=25, help="rows the library loops are timed on")
    ap.add_argument("--lime-samples", type=int, default=5000)
    ap.add_argument("--shap-samples", default="auto")
    ap.add_argument("--bg-lime", type=int, default=1000, help="LIME training-data rows")
    ap.add_argument("--bg-shap", type=int, default=20, help="KernelSHAP background rows")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="device of the batched side (cpu, cuda); the libraries run on CPU")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="lime,kernelshap", help="comma-separated subset of lime,kernelshap")
    ap.add_argument("--tag", default="", help="suffix of the results file name (e.g. a variant)")
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    if args.smoke:
        args.rows, args.lib_rows, args.lime_samples, args.shap_samples = 6, 2, 300, 200
        args.bg_lime, args.bg_shap = 200, 5
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    from fairmon.explain import explain

    n_data = max(args.bg_lime + args.rows, 3000 if not args.smoke else 400)
    df, source = adult_like(n_data, args.seed, synthetic=args.smoke)
    model = train_mlp(df, epochs=1 if args.smoke else 3, seed=args.seed)
    Zall = model.schema.transform(df.drop(columns="_y"))
    rows_Z = Zall[: args.rows]
    bg_lime = Zall[args.rows : args.rows + args.bg_lime]
    bg_shap = bg_lime[: args.bg_shap]
    shap_ns: Any = args.shap_samples if args.shap_samples == "auto" else int(args.shap_samples)
    settings = {
        "data": source, "encoded_width": int(Zall.shape[1]), "rows": args.rows, "lib_rows": args.lib_rows,
        "lime_samples": args.lime_samples, "shap_samples": shap_ns, "bg_lime": args.bg_lime,
        "bg_shap": args.bg_shap, "torch_threads": args.threads, "target": "predicted", "device": args.device,
        "smoke": args.smoke, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
    }
    results = []
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    for method, bg, kw in [("lime", bg_lime, {"n_samples": args.lime_samples}),
                           ("kernelshap", bg_shap, {"n_samples": shap_ns})]:
        if method not in chosen:
            continue
        sub = rows_Z[: args.lib_rows]
        explain(model, sub[:1], method=f"{method}-lib", background=bg, device="cpu", **kw)  # warm-up: imports
        explain(model, sub[:2], method=method, background=bg, device=args.device, **kw)  # warm-up: CUDA context
        t0, c0 = time.perf_counter(), time.process_time()
        ours = explain(model, rows_Z, method=method, background=bg, device=args.device, **kw)  # type: ignore[arg-type]
        t_ours, c_ours = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        lib = explain(model, sub, method=f"{method}-lib", background=bg, device="cpu", **kw)  # type: ignore[arg-type]
        t_lib_sub, c_lib_sub = time.perf_counter() - t0, time.process_time() - c0
        t_lib = t_lib_sub / len(sub) * args.rows
        c_lib = c_lib_sub / len(sub) * args.rows
        rho, rel = agreement(ours[: len(sub)], lib)
        results.append({
            "method": method,
            "batched_s": round(t_ours, 3),
            "library_s_subset": round(t_lib_sub, 3),
            "library_rows_timed": len(sub),
            "library_s_extrapolated": round(t_lib, 2),
            "speedup": round(t_lib / t_ours, 1),
            "batched_cpu_s": round(c_ours, 3),
            "library_cpu_s_extrapolated": round(c_lib, 2),
            "speedup_cpu": round(c_lib / c_ours, 1),
            "batched_ms_per_row": round(1000 * t_ours / args.rows, 2),
            "library_ms_per_row": round(1000 * t_lib_sub / len(sub), 1),
            "spearman_subset": round(rho, 3),
            "rel_mad_subset": round(rel, 3),
        })
        print(results[-1], flush=True)
    name = ("explainers_smoke" if args.smoke else "explainers") + (f"_{args.tag}" if args.tag else "")
    notes = (
        "Batched = fairmon.explain 'lime'/'kernelshap' on all rows in one call; library = 'lime-lib'/"
        "'kernelshap-lib' (lime 0.2 / shap KernelExplainer, one row at a time) timed on the first "
        f"{args.lib_rows} rows and extrapolated linearly per row to {args.rows} rows. Equal sample counts "
        "and backgrounds on both sides. The machine is shared with other jobs while this runs: see the "
        "load average; both sides are measured under the same load, but absolute times are inflated, so "
        "process CPU time (all threads) is recorded next to wall time. "
        "Agreement columns compare the two estimators on the timed subset (independent random streams)."
    )
    write_results(args.out, name, results, settings=settings, notes=notes)
    return results


if __name__ == "__main__":
    main()
