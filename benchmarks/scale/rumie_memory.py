"""RUMIE's CPU and peak memory on one big window, the same inputs under two source trees (issue 21 req 4).

The window is the one ``benchmarks/scale/window.py`` writes (the demo stream's generator, planted group
``age <= 30 OR region = north``, a Parquet file; its ``prepare`` makes it). Per tree, a child process
with that tree first on ``PYTHONPATH`` reads RUMIE's columns (text as categoricals, as ``pull_data``
holds them) and the label as the decision, then runs :func:`fairmon.fairness.rumie.mine` with the demo
spec's RUMIE settings (``max_rows`` sampling, split significance). Recorded: CPU and wall seconds of
``mine``, the resident set before it and the peak during it (``VmHWM``, reset just before), and its
answer (rule, DScore, honest DScore, p-value, group sizes, a digest of the group mask), so two trees
can be compared number for number.

Usage::

    git worktree add --detach /tmp/base <old commit>
    nice -n 10 python benchmarks/scale/rumie_memory.py --rows 10000000 --work /tmp/w --trees /tmp/base .
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]  # put on sys.path by the parent only: a child imports fairmon from its tree


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def child(spec_path: str, data_path: str) -> dict[str, Any]:
    """Run RUMIE on the window in this process (the tree on ``PYTHONPATH``)."""
    import numpy as np
    import pandas as pd

    import fairmon
    from fairmon.config import load_spec
    from fairmon.fairness.rumie import mine

    spec = load_spec(Path(spec_path))
    r = spec.rumie
    cols = list(dict.fromkeys(spec.rumie_attributes))
    frame = pd.read_parquet(data_path, columns=[*cols, str(spec.columns.label)])
    fav = frame.pop(str(spec.columns.label)).to_numpy().astype(int)
    for c in frame.columns:
        if pd.api.types.is_string_dtype(frame[c].dtype):
            frame[c] = frame[c].astype("category")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # VmHWM from here: mine's own peak
    before = _hwm_mb()
    c0, w0 = time.process_time(), time.perf_counter()
    ev = mine(frame, fav, k=r.k, alpha=r.alpha, beta=r.beta, lam=r.lam, method=r.method, iterations=r.iterations,
              lr=r.lr, random_state=r.random_state, significance="split",
              split_fraction=1.0 - r.significance.honest_fraction, rule_search=r.rule_search, max_rows=r.max_rows,
              early_stop=r.early_stop)
    mask = np.asarray(ev.mask, dtype=bool)
    return {"tree": str(Path(fairmon.__file__).parents[1]), "rows": len(frame),
            "cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2),
            "rss_before_mb": before, "peak_rss_mb": _hwm_mb(), "rule": ev.rule, "dscore": ev.dscore,
            "honest_dscore": ev.honest_dscore, "p_value": ev.p_value, "group_size": ev.group_size,
            "honest_group_size": ev.honest_group_size, "n_mined": ev.n_mined, "n_honest": ev.n_honest,
            "mask_sha1": hashlib.sha1(np.packbits(mask).tobytes()).hexdigest()[:16]}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--work", help="scratch folder (window.py's layout; data reused when there); required")
    ap.add_argument("--trees", nargs="+", default=[str(REPO)], help="source trees to compare, in order")
    ap.add_argument("--db", default=os.environ.get("FAIRMON_BENCH_DB",
                                                   "postgresql://postgres@127.0.0.1:5432/fairmon_window_bench"))
    ap.add_argument("--out", default=str(HERE / "results" / "window"))
    ap.add_argument("--name", default=None)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child), default=str))
        return []
    if not args.work:
        ap.error("--work is required")
    sys.path[:0] = [str(REPO), str(HERE)]
    from window import DAY, prepare

    from benchmarks._meta import write_results

    spec = prepare(Path(args.work), args.rows, seed=0, db_url=args.db)
    data = Path(args.work) / f"window-{args.rows}" / f"{DAY}.parquet"
    rows: list[dict[str, Any]] = []
    for tree in args.trees:
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        res = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(spec), str(data)],
                             capture_output=True, text=True, env=env, check=False, cwd=str(Path(tree).resolve()))
        if res.returncode != 0:
            raise RuntimeError(f"RUMIE child on {tree} failed:\n{res.stderr[-3000:]}")
        rows.append({**json.loads(res.stdout.strip().splitlines()[-1]),
                     "loadavg_after": [round(x, 2) for x in os.getloadavg()]})
        print(json.dumps(rows[-1]), flush=True)
    write_results(Path(args.out), args.name or f"rumie_memory_{args.rows}", rows,
                  settings={"rows": args.rows, "trees": args.trees, "day": DAY},
                  notes="RUMIE (fairmon.fairness.rumie.mine, the demo spec's settings) on the same window under "
                        "each tree: cpu_s/wall_s of mine, rss_before_mb and peak_rss_mb (VmHWM reset before mine).")
    return rows


if __name__ == "__main__":
    main()
