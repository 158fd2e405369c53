"""GESD's noise floor against its cost at a few sizes: how ``final_gesd.py``'s default size was chosen.

For one dataset and seed (the benchmark's split and subsample), the production stand-in and both
fairlearn mitigators (the models of the final comparison that need no search) are explained at each
size ``m/N`` with the final comparison's explainers; printed per model: value, noise floor, CPU-s.

    nice -n 10 python benchmarks/feu_paper/floor_size.py --dataset adult --rows 6000 --sizes 100/10 200/10 400/5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="adult")
    p.add_argument("--rows", type=int, default=6000, help="stratified subsample (0 = all), as run.py")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--sizes", nargs="+", default=["100/10", "200/10"], help="m/N pairs")
    p.add_argument("--models", default="production,threshold_optimizer,exponentiated_gradient")
    p.add_argument("--ks-samples", type=int, default=128)
    p.add_argument("--ks-background", type=int, default=20)
    p.add_argument("--lime-samples", type=int, default=1000)
    p.add_argument("--no-stratify", action="store_true")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from sklearn.model_selection import train_test_split

    from benchmarks.feu_paper import final_gesd as fg
    from fairmon.datasets import load_adult, load_gesd
    from fairmon.feu._data import _prepare
    from fairmon.feu.settings import FEUSettings

    ds = load_adult() if args.dataset == "adult" else load_gesd(args.dataset)
    frame, sensitive = ds.frame, "sex" if args.dataset == "adult" else ds.sensitive[0]
    if args.rows and len(frame) > args.rows:
        frame, _ = train_test_split(frame, train_size=args.rows, random_state=0, stratify=frame[ds.label])
        frame = frame.reset_index(drop=True)
    st = FEUSettings()
    prep = _prepare(frame, ds.features, sensitive, ds.label, ds.favorable, st.split, args.seed)
    models, _ = fg.explained_models(prep, st, None, args.seed, "cpu")  # production and both mitigators
    out = []
    for size in args.sizes:
        m, n = (int(v) for v in size.split("/"))
        settings = {"explainer": "shap+lime", "sample_size": m, "n_perturbations": n, "stratify": not args.no_stratify,
                    "min_group_size": 10, "explainer_params": {
                        "kernelshap": {"n_samples": args.ks_samples, "background_size": args.ks_background},
                        "lime": {"n_samples": args.lime_samples}}}
        for name in args.models.split(","):
            entries, _ = fg.compute(prep, {name: models[name]}, settings, random_state=args.seed, device="cpu")
            e = entries[name]
            row = {"dataset": args.dataset, "seed": args.seed, "m": m, "N": n, "model": name,
                   "ks": f"{args.ks_samples}x{args.ks_background}", "lime": args.lime_samples,
                   **{k: e.get(k) for k in ("sampled", "group_sizes", "value", "noise_floor", "p_value", "cpu_s", "wall_s")},
                   "loadavg": [round(v, 2) for v in os.getloadavg()]}
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


if __name__ == "__main__":
    main()
