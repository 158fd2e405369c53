"""IE's early stop against the full run (issue 21 req 1): where it stops and whether the answer moves.

On the planted problems of ``benchmarks/rumie_paper/planted.py`` (four shapes x two flip rates) and
two planted frames of the RUMIE tests, RUMIE (IE-DT, k 5, 2,500 iterations at most, split-sample
honest DScore) runs once per ``--tols`` value of ``rumie.early_stop.tol`` (patience 300, a check
every 50 iterations); 0 runs every iteration and is the reference. Per problem and tolerance:
``iterations_run`` (of the mining on all rows), CPU seconds, whether the rule is the reference's
(``same_rule``), the in-sample and honest DScore and the Jaccard overlap with the planted group.
The default ``tol`` (0.002) is the largest tested here that left every answer unchanged.

Usage::

    python benchmarks/scale/early_stop.py --smoke --out /tmp/x     # seconds (tests/fairness/test_scale_bench_smoke.py)
    nice -n 10 python benchmarks/scale/early_stop.py                # ~3 CPU-minutes
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # repo root: benchmarks._meta and fairmon
sys.path.insert(0, str(REPO / "benchmarks" / "rumie_paper"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from planted import FLIP_RATES, SHAPES, planted_shape  # noqa: E402

from benchmarks._meta import write_results  # noqa: E402


def planted_frame(n: int, gap: float, random_state: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """``age <= 30 OR colour = red`` disfavoured by ``gap`` (as ``tests/fairness/_rumie_data.py``)."""
    rng = np.random.default_rng(random_state)
    age = rng.integers(18, 70, n)
    priors = rng.integers(0, 10, n)
    colour = rng.choice(["red", "green", "blue"], n)
    noise = rng.normal(size=n).round(3)
    member = (age <= 30) | (colour == "red")
    fav = rng.random(n) < np.where(member, 0.7 - gap, 0.7)
    return pd.DataFrame({"age": age, "priors_count": priors, "colour": colour, "noise": noise}), fav, member


def _jaccard(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return round(float((a & b).sum() / max(1, (a | b).sum())), 4)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    from fairmon.fairness.rumie import mine

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="one problem, 300 rows, 200 iterations")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--rows", type=int, default=5_000)
    ap.add_argument("--iterations", type=int, default=2500)
    ap.add_argument("--tols", type=float, nargs="+", default=[0.0, 0.001, 0.002, 0.005])
    args = ap.parse_args(argv)
    n, iterations = (300, 200) if args.smoke else (args.rows, args.iterations)
    problems = [(f"{s}/{f}", planted_shape(s, n, flip=f, random_state=0)) for s in SHAPES for f in FLIP_RATES]
    problems += [("frame/0.2", planted_frame(n, 0.2, 4)), ("frame/0.4", planted_frame(n, 0.4, 0))]
    if args.smoke:
        problems = problems[-1:]
    rows: list[dict[str, Any]] = []
    for name, (X, fav, member) in problems:
        ref: str | None = None
        for tol in args.tols:
            c0 = time.process_time()
            ev = mine(X, fav, k=5, iterations=iterations, significance="split", random_state=0, num_threads=1,
                      early_stop={"tol": tol, "patience": 300, "check_every": 50})
            ref = ev.rule if ref is None else ref
            rows.append({"problem": name, "rows": n, "tol": tol, "iterations_run": ev.search.get("iterations_run"),
                         "stopped_early": ev.search.get("stopped_early"), "cpu_s": round(time.process_time() - c0, 2),
                         "same_rule": ev.rule == ref, "rule": ev.rule, "dscore": ev.dscore,
                         "honest_dscore": ev.honest_dscore, "jaccard_planted": _jaccard(ev.mask, member)})
            print(rows[-1], flush=True)
    settings = {"rows": n, "iterations": iterations, "tols": args.tols, "patience": 300, "check_every": 50,
                "smoke": args.smoke, "method": "ie-dt", "k": 5, "torch_threads": 1}
    write_results(args.out, "early_stop_smoke" if args.smoke else "early_stop", rows, settings=settings,
                  notes="tol 0 runs every iteration (the reference rule per problem); CPU seconds are process time.")
    return rows


if __name__ == "__main__":
    main()
