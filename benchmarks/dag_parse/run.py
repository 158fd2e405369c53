"""DAG parse time: how long the DAG processor spends on the DAG files in ``dags/`` (one per spec,
``monitor_<name>.py``, and the catch-all ``fairmon_monitors.py``; summed).

Each measurement is a fresh interpreter (what a DAG-processor subprocess pays): the time to import
airflow.sdk + the light spec loader, and the time to build every monitor's DAG from the specs folder.
It also records which heavy modules were loaded (must be none). Results go to ``results/``.

    python benchmarks/dag_parse/run.py            # 10 repeats, the repo's monitors/
    python benchmarks/dag_parse/run.py --smoke    # 2 repeats (seconds; CI)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from _meta import write_results  # noqa: E402

HEAVY = ["torch", "pandas", "numpy", "shap", "lime", "pymoo", "great_expectations", "sklearn", "matplotlib"]

_PROBE = r"""
import json, runpy, sys, time
t0 = time.perf_counter()
import airflow.sdk  # noqa: F401
t1 = time.perf_counter()
from pathlib import Path
g = {}
for f in sorted(Path(sys.argv[1]).glob("*.py")):
    g.update(runpy.run_path(str(f)))
t2 = time.perf_counter()
heavy = sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)
dags = sorted(k for k in g if k.startswith("fairmon_") and type(g[k]).__name__ == "DAG")
print(json.dumps({"import_airflow_sdk_s": t1 - t0, "build_dags_s": t2 - t1, "heavy": heavy, "dags": dags}))
"""


def measure(monitors: Path, repeats: int) -> list[dict[str, Any]]:
    env = dict(os.environ)
    env.update(FAIRMON_MONITORS_DIR=str(monitors), AIRFLOW__CORE__LOAD_EXAMPLES="False")
    env.setdefault("AIRFLOW_HOME", str(HERE / "scratch" / "airflow"))
    rows = []
    for i in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, str(REPO / "dags"), json.dumps(HEAVY)],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip().splitlines()[-1]
        r = json.loads(out)
        rows.append({"repeat": i, "n_dags": len(r["dags"]), "import_airflow_sdk_s": round(r["import_airflow_sdk_s"], 4),
                     "build_dags_s": round(r["build_dags_s"], 4), "heavy_modules": ",".join(r["heavy"]) or "none"})
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="2 repeats (CI)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--monitors", default=str(REPO / "monitors"))
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    repeats = 2 if args.smoke else args.repeats
    rows = measure(Path(args.monitors), repeats)
    builds = [r["build_dags_s"] for r in rows]
    summary = {
        "repeat": "median", "n_dags": rows[0]["n_dags"],
        "import_airflow_sdk_s": round(statistics.median(r["import_airflow_sdk_s"] for r in rows), 4),
        "build_dags_s": round(statistics.median(builds), 4),
        "heavy_modules": rows[0]["heavy_modules"],
    }
    name = "dag_parse_smoke" if args.smoke else "dag_parse"
    write_results(
        args.out, name, [*rows, summary],
        settings={"repeats": repeats, "monitors": args.monitors},
        notes="Fresh interpreter per repeat. build_dags_s = parsing the monitor specs and building one DAG "
        "per spec (the part fairmon controls); import_airflow_sdk_s = Airflow's own import cost. Timings "
        "on a shared machine are inflated by other load (see loadavg).",
    )
    print(json.dumps(summary))
    return [*rows, summary]


if __name__ == "__main__":
    main()
