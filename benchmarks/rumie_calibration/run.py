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
    nice -n 10 python benchmarks/rumie_calibration/run.py --jobs 3 --checkpoint /tmp/calib.jsonl \
        --max-minutes 50                                                 # on a shared machine

Every window is independent (its decisions are seeded by ``(seed, window)`` and ``held_out_test`` by the
window index), so ``--jobs`` runs windows in parallel processes with the same numbers; null and planted
windows are interleaved. ``--checkpoint`` appends each finished window to a JSON-lines file and reuses
the windows already there (same settings) on a rerun; ``--max-minutes`` stops starting windows after
that long and writes the results of the windows finished (the settings then record
``stopped_early: true`` and the counts run).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import statistics
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

from benchmarks._meta import write_results  # noqa: E402
from fairmon.datasets import generate_stream  # noqa: E402
from fairmon.fairness.rumie import held_out_test  # noqa: E402


@lru_cache(maxsize=2)
def _stream(n_windows: int, rows: int, seed: int) -> Any:
    return generate_stream(
        n_windows=n_windows, rows_per_window=rows, drift_window=n_windows, train_windows=1,
        delta_base=0.0, random_state=seed,
    )


def run_window(task: tuple[str, int, int, int, int, int, float]) -> dict[str, Any]:
    """One window: ``(kind, window, n_windows, rows, iterations, seed, gap)`` -> its results row."""
    kind, index, n_windows, rows, iterations, seed, gap = task
    stream = _stream(n_windows, rows, seed)
    attrs = list(stream.feature_columns) + list(stream.sensitive_columns)
    w = stream.windows[index]
    rng = np.random.default_rng([seed, w.index, 0 if kind == "null" else 1])
    rate = np.where(w.membership, 0.6 - gap, 0.6) if kind == "planted" else np.full(rows, 0.6)
    fav = rng.random(rows) < rate
    t0 = time.perf_counter()
    res = held_out_test(w.frame[attrs], fav, iterations=iterations, random_state=w.index)
    dt = time.perf_counter() - t0
    return {
        "kind": kind,
        "window": w.index,
        "rows": rows,
        "honest_dscore": res["honest_dscore"],
        "p_value": res["p_value"],
        "test_fraction": res.get("test_fraction"),
        "note": res.get("reason", ""),
        "runtime_s": round(dt, 3),
    }


def _tasks(args: argparse.Namespace) -> list[tuple[str, int, int, int, int, int, float]]:
    """Null (seed) and planted (seed + 1) windows, interleaved in proportion."""
    kinds = (("null", args.null_windows, args.seed), ("planted", args.planted_windows, args.seed + 1))
    keyed = [((i + 0.5) / n, kind, i, n, seed) for kind, n, seed in kinds for i in range(n)]
    return [(kind, i, n, args.rows, args.iterations, seed, args.gap) for _, kind, i, n, seed in sorted(keyed)]


def _checkpoint_key(task: tuple[str, int, int, int, int, int, float]) -> str:
    return json.dumps(list(task))


def run_all(args: argparse.Namespace) -> tuple[list[dict[str, Any]], bool]:
    """Every window's row (from the checkpoint where present); True when stopped by ``--max-minutes``."""
    tasks = _tasks(args)
    done: dict[str, dict[str, Any]] = {}
    ckpt = Path(args.checkpoint) if args.checkpoint else None
    if ckpt is not None and ckpt.is_file():
        for line in ckpt.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["task"]] = entry["row"]
    todo = [t for t in tasks if _checkpoint_key(t) not in done]
    deadline = None if args.max_minutes is None else time.monotonic() + 60.0 * args.max_minutes
    stopped = False

    def record(task: tuple[str, int, int, int, int, int, float], row: dict[str, Any]) -> None:
        done[_checkpoint_key(task)] = row
        if ckpt is not None:
            with ckpt.open("a") as fh:
                fh.write(json.dumps({"task": _checkpoint_key(task), "row": row}) + "\n")
        print(f"{row['kind']} window {row['window']}: p={row['p_value']} honest={row['honest_dscore']} "
              f"{row['runtime_s']:.1f}s", flush=True)

    if args.jobs <= 1:
        for task in todo:
            if deadline is not None and time.monotonic() > deadline:
                stopped = True
                break
            record(task, run_window(task))
    elif todo:
        ctx = multiprocessing.get_context("spawn")  # torch in forked workers is not safe
        with ctx.Pool(args.jobs) as pool:
            pending = {task: pool.apply_async(run_window, (task,)) for task in todo}
            while pending:
                if deadline is not None and time.monotonic() > deadline:
                    stopped = True
                    pool.terminate()
                    break
                for task in [t for t, r in pending.items() if r.ready()]:
                    record(task, pending.pop(task).get())
                time.sleep(0.5)
    rows = [done[_checkpoint_key(t)] for t in tasks if _checkpoint_key(t) in done]
    return rows, stopped


def summarise(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    sel = [r for r in rows if r["kind"] == kind]
    ps = np.array([1.0 if r["p_value"] is None else r["p_value"] for r in sel])
    n = len(ps)
    if n == 0:
        return {"kind": kind, "windows": 0, "pass": None}
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
    ap.add_argument("--jobs", type=int, default=1, help="windows run in parallel processes (default 1)")
    ap.add_argument("--checkpoint", default=None, help="JSON-lines file of finished windows (appended, reused)")
    ap.add_argument("--max-minutes", type=float, default=None,
                    help="stop starting windows after this long and report the finished ones")
    args = ap.parse_args(argv)
    if args.smoke:
        args.null_windows, args.planted_windows, args.rows, args.iterations = 4, 2, 1000, 150
    t0 = time.perf_counter()
    rows, stopped = run_all(args)
    summary = [summarise(rows, "null"), summarise(rows, "planted")]
    import torch

    settings = {
        "smoke": args.smoke, "null_windows": args.null_windows, "planted_windows": args.planted_windows,
        "rows": args.rows, "iterations": args.iterations, "planted_dscore": args.gap, "seed": args.seed,
        "mine": "defaults (ie-dt, k=5, alpha=0.45, beta=0.55, lam=1, lr=0.1, restarts=4, split 0.5)",
        "torch_threads_during_mine": max(1, (__import__("os").cpu_count() or 2) // 2),
        "total_s": round(time.perf_counter() - t0, 1),
        "jobs": args.jobs,
        "stopped_early": stopped,
        "null_windows_run": sum(r["kind"] == "null" for r in rows),
        "planted_windows_run": sum(r["kind"] == "planted" for r in rows),
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
