"""RUMIE significance calibration: false-positive rate under the null, power under a planted group.

Windows are the synthetic stream's frames (``fairmon.datasets.generate_stream``: planted
attributes ``age``/``region``, decoys correlated with them, legitimate features and the declared
sensitive columns), mined over *all* of them (the largest search space, so the most optimism to
correct). The decisions are drawn here so the truth is known exactly:

- **null**: ``favorable ~ Bernoulli(0.6)`` independently of every attribute. A calibrated p-value has
  ``P(p < 0.05) <= 0.05``; acceptance: the observed rate is at most ``0.05 + 2 SE`` over >= 200 windows.
- **planted**: ``favorable ~ Bernoulli(0.6 - 0.15 * member)`` with ``member`` the stream's planted
  group (``age <= 30 OR region = north``), i.e. planted DScore 0.15; acceptance: ``p < 0.01`` in >= 90%
  of the 5,000-row windows.

Every window runs the production significance step with ``mine``'s defaults (IE-DT, k=5, 0.45..0.55,
2,500 iterations, restarts 4): :func:`fairmon.fairness.rumie.held_out_test` mines a random half and tests
the group on the other half - the same numbers ``mine(..., significance="split")`` reports, without also
mining the full window (which does not enter the p-value). ``runtime_s`` is that step alone; the
"mining + significance for one 5,000-row window" timing is in the ``rumie_paper`` results.

Usage::

    python benchmarks/rumie_calibration/run.py --smoke --out /tmp/x     # seconds (CI)
    nice python benchmarks/rumie_calibration/run.py                      # 200 null + 50 planted windows
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

from benchmarks._meta import write_results  # noqa: E402
from fairmon.datasets import generate_stream  # noqa: E402
from fairmon.fairness.rumie import held_out_test  # noqa: E402


def run_windows(
    kind: str, n_windows: int, rows: int, *, iterations: int, seed: int, gap: float
) -> list[dict[str, Any]]:
    stream = generate_stream(
        n_windows=n_windows, rows_per_window=rows, drift_window=n_windows, train_windows=1,
        delta_base=0.0, random_state=seed,
    )
    attrs = list(stream.feature_columns) + list(stream.sensitive_columns)
    out: list[dict[str, Any]] = []
    for w in stream.windows:
        rng = np.random.default_rng([seed, w.index, 0 if kind == "null" else 1])
        rate = np.where(w.membership, 0.6 - gap, 0.6) if kind == "planted" else np.full(rows, 0.6)
        fav = rng.random(rows) < rate
        t0 = time.perf_counter()
        res = held_out_test(w.frame[attrs], fav, iterations=iterations, random_state=w.index)
        dt = time.perf_counter() - t0
        out.append({
            "kind": kind,
            "window": w.index,
            "rows": rows,
            "honest_dscore": res["honest_dscore"],
            "p_value": res["p_value"],
            "test_fraction": res.get("test_fraction"),
            "note": res.get("reason", ""),
            "runtime_s": round(dt, 3),
        })
        print(f"{kind} window {w.index}: p={res['p_value']} honest={res['honest_dscore']} {dt:.1f}s", flush=True)
    return out


def summarise(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    sel = [r for r in rows if r["kind"] == kind]
    ps = np.array([1.0 if r["p_value"] is None else r["p_value"] for r in sel])
    n = len(ps)
    rate05 = float((ps < 0.05).mean())
    rate01 = float((ps < 0.01).mean())
    se = math.sqrt(0.05 * 0.95 / n)
    hon = [r["honest_dscore"] for r in sel if r["honest_dscore"] is not None]
    times = [r["runtime_s"] for r in sel]
    out = {
        "kind": kind,
        "windows": n,
        "rows": sel[0]["rows"] if sel else 0,
        "rate_p_lt_0.05": rate05,
        "rate_p_lt_0.01": rate01,
        "fpr_limit_0.05+2SE": 0.05 + 2 * se,
        "mean_honest_dscore": statistics.fmean(hon) if hon else None,
        "sd_honest_dscore": statistics.pstdev(hon) if hon else None,
        "median_runtime_s": statistics.median(times) if times else None,
        "max_runtime_s": max(times) if times else None,
    }
    if kind == "null":
        out["pass"] = rate05 <= 0.05 + 2 * se
    else:
        out["pass"] = rate01 >= 0.9
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="a few small windows (seconds)")
    ap.add_argument("--out", default=str(HERE / "results"), help="results folder")
    ap.add_argument("--null-windows", type=int, default=200)
    ap.add_argument("--planted-windows", type=int, default=50)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--iterations", type=int, default=2500)
    ap.add_argument("--gap", type=float, default=0.15, help="planted DScore")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.smoke:
        args.null_windows, args.planted_windows, args.rows, args.iterations = 4, 2, 1000, 150
    t0 = time.perf_counter()
    rows = run_windows("null", args.null_windows, args.rows, iterations=args.iterations, seed=args.seed,
                       gap=args.gap)
    rows += run_windows("planted", args.planted_windows, args.rows, iterations=args.iterations,
                        seed=args.seed + 1, gap=args.gap)
    summary = [summarise(rows, "null"), summarise(rows, "planted")]
    import torch

    settings = {
        "smoke": args.smoke, "null_windows": args.null_windows, "planted_windows": args.planted_windows,
        "rows": args.rows, "iterations": args.iterations, "planted_dscore": args.gap, "seed": args.seed,
        "mine": "defaults (ie-dt, k=5, alpha=0.45, beta=0.55, lam=1, lr=0.1, restarts=4, split 0.5)",
        "torch_threads_during_mine": max(1, (__import__("os").cpu_count() or 2) // 2),
        "total_s": round(time.perf_counter() - t0, 1),
        "torch": torch.__version__,
    }
    notes = (
        "Null: favorable independent of all attributes; planted: DScore 0.15 on the stream's planted group. "
        "p-value: one-sided pooled two-proportion z-test of the group mined on a random half, evaluated on "
        "the other half. Runtimes were measured on a shared 2-core machine while other jobs ran (see the "
        "load average)."
    )
    write_results(args.out, "rumie_calibration", summary, settings=settings, notes=notes)
    write_results(args.out, "rumie_calibration_windows", rows, settings=settings)
    for s in summary:
        print(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
