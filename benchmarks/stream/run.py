"""Stream benchmark: how well the synthetic stream hits its DScore knob, and what it costs.

For each (rows per window, seed) it generates the stream, deploys the production and retrained models
(in a ``memory://`` registry) and records:

- ``gen_s`` / ``deploy_s``: wall time of :func:`generate_stream` and :func:`deploy_models`;
- ``fits``: logistic-regression fits the two calibrations needed;
- ``err_before`` / ``err_after``: pooled decision DScore minus its target (base / base + rise);
- ``max_window_err``: the largest per-window deviation from the target (sampling noise included).

The acceptance band is ±0.03 (issue 2, requirement 7).

Usage::

    python benchmarks/stream/run.py --smoke --out /tmp/x      # seconds (CI)
    nice python benchmarks/stream/run.py                       # full: 10 seeds x {1000, 2000, 5000} rows
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

from benchmarks._meta import write_results  # noqa: E402
from fairmon import datasets as S  # noqa: E402
from fairmon.datasets import _calibration, _deploy  # noqa: E402 - the model fits are counted there


def measure(
    rows: int, seed: int, *, n_windows: int, drift_window: int, base: float, rise: float
) -> dict[str, Any]:
    calls = {"n": 0}
    fit = _calibration._fit_model

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        return fit(*args, **kwargs)

    _calibration._fit_model = _deploy._fit_model = counted  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        stream = S.generate_stream(
            n_windows=n_windows,
            rows_per_window=rows,
            drift_window=drift_window,
            base_dscore=base,
            dscore_rise=rise,
            random_state=seed,
        )
        t1 = time.perf_counter()
        dep = S.deploy_models(stream, f"memory://bench-stream-{rows}-{seed}")
        t2 = time.perf_counter()
    finally:
        _calibration._fit_model = _deploy._fit_model = fit  # type: ignore[assignment]
    targets = [base if i < drift_window else base + rise for i in range(n_windows)]
    return {
        "rows_per_window": rows,
        "seed": seed,
        "gen_s": round(t1 - t0, 3),
        "deploy_s": round(t2 - t1, 3),
        "fits": calls["n"],
        "delta_base": round(stream.delta_base, 3),
        "delta_drift": round(dep.delta_drift, 3),
        "err_before": round(dep.dscore_before - base, 4),
        "err_after": round(dep.dscore_after - (base + rise), 4),
        "max_window_err": round(max(abs(d - t) for d, t in zip(dep.window_dscores, targets)), 4),
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="two seeds, 4 windows x 1000 rows (seconds)")
    p.add_argument("--out", default=str(HERE / "results"), help="results folder")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--base", type=float, default=0.05)
    p.add_argument("--rise", type=float, default=0.15)
    args = p.parse_args(argv)
    if args.smoke:
        sizes, seeds, n_windows, drift = [1000], range(2), 4, 2
    else:
        sizes, seeds, n_windows, drift = [1000, 2000, 5000], range(args.seeds), 10, 6
    rows = [
        measure(n, s, n_windows=n_windows, drift_window=drift, base=args.base, rise=args.rise)
        for n in sizes
        for s in seeds
    ]
    summary = []
    for n in sizes:
        rs = [r for r in rows if r["rows_per_window"] == n]
        summary.append(
            {
                "rows_per_window": n,
                "runs": len(rs),
                "median_total_s": round(statistics.median(r["gen_s"] + r["deploy_s"] for r in rs), 3),
                "max_abs_err_before": max(abs(r["err_before"]) for r in rs),
                "max_abs_err_after": max(abs(r["err_after"]) for r in rs),
                "max_window_err": max(r["max_window_err"] for r in rs),
                "median_fits": statistics.median(r["fits"] for r in rs),
            }
        )
    name = "stream_smoke" if args.smoke else "stream"
    settings = {
        "n_windows": n_windows,
        "drift_window": drift,
        "base": args.base,
        "rise": args.rise,
        "seeds": len(seeds),
    }
    notes = "Per-run rows are in the CSV/JSON; this table summarises them per window size. Band: ±0.03."
    write_results(args.out, name, summary, settings=settings, notes=notes)
    write_results(args.out, name + "_runs", rows, settings=settings)
    return rows


if __name__ == "__main__":
    main()
