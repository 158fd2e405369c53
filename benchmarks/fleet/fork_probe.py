"""Fork probe: the warm layout's tasks of a window, each in a process forked from a preloaded parent.

What the Celery worker does for every task (Airflow 3's task SDK supervisor forks the task process
from the pool process, which Celery forked after importing ``fairmon_airflow.preload``), without
Airflow: the parent imports ``fairmon_airflow.preload`` (imports and warm-up), then for each window
forks one child per task of the ``warm`` layout (``resolve_window`` through ``followup``), each
running :func:`fairmon.pipeline.run_steps` (``run_step`` for ``resolve_window``) against a scratch
Postgres store; the CPU of each child (user + system, every thread) comes from ``wait4``. The
difference to the fleet's task CPU lines is Airflow's own per-task work (runner, supervisor, logs).
Used to compare two code versions in the same hour on a shared machine (``PYTHONPATH`` picks the
checkout); ``--profile TASK`` writes a cProfile of that task's child.

    python benchmarks/fleet/fork_probe.py --windows 2                 # CPU-s per task, per window
    python benchmarks/fleet/fork_probe.py --windows 1 --profile diagnose_report --profile-out /tmp/dr.prof
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from model import fleet_spec_docs, write_specs  # noqa: E402
from run import FLEET_OVERRIDES, _databases, _set_dotted  # noqa: E402


def in_child(fn: Callable[[], Any], profile_out: str | None = None) -> tuple[Any, float]:
    """``fn()`` in a forked child; returns its JSON result and the child's CPU seconds."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the task process
        os.close(r)
        code = 0
        try:
            if profile_out:
                import cProfile

                prof = cProfile.Profile()
                out = prof.runcall(fn)
                prof.dump_stats(profile_out)
            else:
                out = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out, code = {"error": repr(exc)}, 1
        os.write(w, json.dumps(out, default=str).encode())
        os.close(w)
        os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, _status, ru = os.wait4(pid, 0)
    return json.loads(data), ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--windows", type=int, default=2)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--explanations", choices=("defaults", "demo"), default="defaults")
    ap.add_argument("--profile", default=None, help="a task name: cProfile its child")
    ap.add_argument("--profile-out", default="/tmp/fork_probe.prof")
    args = ap.parse_args(argv)

    import yaml

    from fairmon.cli.demo import prepare, write_demo_spec
    from fairmon.store import open_store

    work = Path(tempfile.mkdtemp(prefix="fork_probe_"))
    nw = args.windows
    manifest = prepare(work / "demo", windows=nw + 2, rows=args.rows, drift_window=nw + 1, seed=0)
    base = yaml.safe_load(write_demo_spec(work / "demo", FLEET_OVERRIDES).read_text())
    if args.explanations == "defaults":
        _set_dotted(base, "explanations", None)
    first = date.fromisoformat(manifest["windows"][0]["start"][:10])
    specs = write_specs(fleet_spec_docs(base, n=1, prefix="fk", first_day=first, windows=nw, layout="warm",
                                        out=work), work / "specs")
    os.environ["FAIRMON_MONITORS_DIR"] = str(work / "specs")  # the preload builds one monitor's DAG
    spec = str(specs[0])
    import time

    c0 = time.process_time()
    import fairmon_airflow.preload  # noqa: F401  (the worker's preload: imports and warm-up)

    print(json.dumps({"preload_cpu_s": round(time.process_time() - c0, 2)}), flush=True)
    from fairmon.pipeline import run_step, run_steps
    from fairmon.pipeline.layout import task_rows

    with _databases(f"fork{os.getpid()}") as (_meta, url):
        open_store(url, upgrade=True).engine.dispose()
        for w in manifest["windows"][:nw]:
            day = w["start"][:10]
            per: dict[str, float] = {}
            win, cpu = in_child(lambda d=day: run_step("resolve_window", spec, {"logical_date": d}, db_url=url,
                                                       notify=False))
            per["resolve_window"] = round(cpu, 3)
            for row in task_rows("warm")[1:]:
                res, cpu = in_child(lambda r=row, x=win: run_steps(r.steps, spec, x, db_url=url, notify=False),
                                    args.profile_out if args.profile == row.name else None)
                if "error" in res:
                    raise SystemExit(f"{row.name}: {res['error']}")
                per[row.name] = round(cpu, 3)
            print(json.dumps({"window": day, "cpu_s": round(sum(per.values()), 2), "tasks": per,
                              "loadavg": os.getloadavg()}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
