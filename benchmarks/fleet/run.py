"""Fleet benchmark: N synthetic demo monitors on Airflow's CeleryExecutor (issue 21 req 6).

A real deployment on this machine: Redis (127.0.0.1:6379, a database index of its own) as the Celery
broker, Postgres (127.0.0.1:5432, scratch databases created and dropped here) as Airflow's metadata
database and Celery result backend and as fairmon's store; ``airflow scheduler``, ``airflow
dag-processor``, ``airflow api-server`` and one ``airflow celery worker --concurrency 2``. Each phase
writes N monitor specs (the demo spec, ``--rows`` rows per window, catch-up over ``W`` daily windows)
and their DAG files, starts a fresh worker (with or without the heavy-import preload,
``fairmon_airflow.preload``), lets the scheduler run every window, and records:

- the CPU seconds of the worker's process tree (worker, pool processes, forked task processes; the
  robust figure on a shared machine) per window, and the capacity ``7200 / CPU-s per window``;
- wall throughput at the recorded load, window latency (queued -> done; p50 / p95; every window of
  the fleet is due at once, as at midnight), per-task overhead (worker CPU per window minus one
  window in an already-warm process, divided by the tasks per window);
- queue waits of light and heavy tasks (starvation), the control plane's CPU, the load.

    python benchmarks/fleet/run.py                      # the default phases (about 20-25 minutes)
    python benchmarks/fleet/run.py --phases warm+preload:2x2 --tag small   # a small trial
    python benchmarks/fleet/run.py --smoke              # no Airflow: specs, summary and capacity
                                                        # arithmetic on the recorded small run (CI)
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(HERE))

from _meta import git_commit, machine_info, write_results  # noqa: E402
from model import capacity_rows, fleet_spec_docs, summarize, write_specs  # noqa: E402

BIN = Path(sys.executable).parent
PG = "postgresql://postgres@127.0.0.1:5432"
REDIS_DB = 11  # a Redis database index of this benchmark's own (flushed at start and end)
RECORDED_SMALL = HERE / "results" / "recorded_small.json"
DEFAULT_PHASES = "warm+preload@defaults:50x1,steps:4x2,warm+preload:10x2,warm:4x2"
#: settings over the demo spec: FEU off (it runs only on drift; its cost is not a window's)
FLEET_OVERRIDES: dict[str, Any] = {"retraining.enabled": False}


#: explanation settings of a phase (``@name`` in its text): the demo spec's own, or the spec defaults
EXPLANATIONS: dict[str, dict[str, Any]] = {
    "demo": {},
    "defaults": {"explanations": None},  # the demo's explanation overrides dropped: the spec defaults
}


@dataclass(frozen=True)
class Phase:
    layout: str
    preload: bool
    monitors: int
    windows: int
    explanations: str = "demo"

    @property
    def label(self) -> str:
        return f"{self.layout}{'+preload' if self.preload else ''}@{self.explanations}"

    @classmethod
    def parse(cls, text: str) -> Phase:
        """``warm+preload@defaults:50x2`` -> layout warm, preload on, spec-default explanations,
        50 monitors x 2 windows (``@demo``, the demo spec's explanation settings, when not given)."""
        head, _, size = text.partition(":")
        head, _, expl = head.partition("@")
        layout, _, extra = head.partition("+")
        n, _, w = size.partition("x")
        expl = expl or "demo"
        if (layout not in ("steps", "warm") or extra not in ("", "preload") or not n.isdigit() or not w.isdigit()
                or int(w) < 1 or expl not in EXPLANATIONS):
            raise SystemExit(f"bad phase {text!r}: want e.g. warm+preload@defaults:50x1 or steps:4x2")
        return cls(layout, extra == "preload", int(n), int(w), expl)


# ---------------------------------------------------------------- processes and measurements


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its descendants, including reaped children (psutil)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _worker_breakdown(pid: int) -> dict[str, float]:
    """The worker tree's CPU split: the Celery main process, its pool processes (each the task SDK
    supervisor of its tasks) and the task processes they forked and reaped."""
    import psutil

    out = {"main_s": 0.0, "pool_s": 0.0, "tasks_reaped_s": 0.0, "live_other_s": 0.0}
    try:
        root = psutil.Process(pid)
        t = root.cpu_times()
        out["main_s"] = t.user + t.system
        for child in root.children():
            ct = child.cpu_times()
            out["pool_s"] += ct.user + ct.system
            out["tasks_reaped_s"] += ct.children_user + ct.children_system
            for g in child.children(recursive=True):
                gt = g.cpu_times()
                out["live_other_s"] += gt.user + gt.system + gt.children_user + gt.children_system
    except psutil.NoSuchProcess:
        pass
    return out


def _busy_cpu_s() -> float:
    import psutil

    t = psutil.cpu_times()
    return float(t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0))


class Service:
    """An Airflow command in its own process group, logging to a file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logs: Path) -> None:
        self.name = name
        self.log_path = logs / f"{name}.log"
        self._log = self.log_path.open("a")
        # at niceness 10 (not 20 when the benchmark itself runs under nice -n 10)
        self.proc = subprocess.Popen(["nice", "-n", str(max(0, 10 - os.nice(0))), str(BIN / "airflow"), *args], env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def cpu_s(self) -> float:
        return _tree_cpu_s(self.proc.pid)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, n: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-n:]

    def stop(self, timeout: float = 60) -> None:
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _databases(tag: str) -> Iterator[tuple[str, str]]:
    import sqlalchemy as sa

    names = (f"fleet_af_{tag}", f"fleet_store_{tag}")
    admin = sa.create_engine(f"{PG}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        for n in names:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)'))
            c.execute(sa.text(f'CREATE DATABASE "{n}"'))
    try:
        yield f"{PG}/{names[0]}", f"{PG}/{names[1]}"
    finally:
        with admin.connect() as c:
            for n in names:
                c.execute(sa.text(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)'))
        admin.dispose()


def _redis_flush() -> None:
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "-n", str(REDIS_DB), "FLUSHDB"], check=True,
                   capture_output=True, timeout=30)


def _airflow_env(work: Path, meta_url: str, store_url: str, monitors: Path, dags: Path, port: int) -> dict[str, str]:
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("AIRFLOW")]:
        del env[k]
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PATH=str(BIN) + os.pathsep + env.get("PATH", ""),
        AIRFLOW_HOME=str(work / "airflow"),
        AIRFLOW__CORE__EXECUTOR="CeleryExecutor",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=meta_url.replace("postgresql://", "postgresql+psycopg2://"),
        AIRFLOW__CELERY__BROKER_URL=f"redis://127.0.0.1:6379/{REDIS_DB}",
        AIRFLOW__CELERY__RESULT_BACKEND="db+" + meta_url,
        AIRFLOW__CELERY__WORKER_CONCURRENCY="2",
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__DAGS_FOLDER=str(dags),
        AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION="False",
        AIRFLOW__CORE__PARALLELISM="64",
        AIRFLOW__API__PORT=str(port),
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://localhost:{port}/execution/",
        AIRFLOW__API_AUTH__JWT_SECRET=secrets.token_hex(16),
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL="5",
        # the specs do not change during a phase: do not re-parse 50 files every 30 s on 2 shared cores
        AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="600",
        AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC="5",
        FAIRMON_MONITORS_DIR=str(monitors),
        FAIRMON_STRICT_SPECS="1",
        AIRFLOW_CONN_FAIRMON_DB=store_url,
    )
    for k in ("FAIRMON_DATABASE_URL", "FAIRMON_SLACK_TOKEN", "FAIRMON_NO_PRELOAD"):
        env.pop(k, None)
    return env


def _rows(url: str, sql: str, **params: Any) -> list[dict[str, Any]]:
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    try:
        with eng.connect() as c:
            return [dict(r._mapping) for r in c.execute(sa.text(sql), params)]
    except sa.exc.SQLAlchemyError:
        return []
    finally:
        eng.dispose()


def _wait(cond: Callable[[], bool], timeout: float, what: str, services: list[Service], poll: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        for s in services:
            if not s.alive():
                raise RuntimeError(f"{s.name} exited while waiting for {what}:\n{s.tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(poll)


def _settle(service: Service, quiet_s: float = 3.0, timeout: float = 120) -> None:
    """Wait until ``service`` uses (almost) no CPU for ``quiet_s`` (start-up and preload done)."""
    deadline = time.monotonic() + timeout
    last = service.cpu_s()
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = service.cpu_s()
        if now - last < 0.1 * quiet_s:
            return
        last = now


# ---------------------------------------------------------------- the warm floor (one process)

_FLOOR = r"""
import json, sys, time, resource
from fairmon._logs import quiet_third_party
from fairmon.pipeline import run_window
quiet_third_party()
spec, url, days = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = []
for i, d in enumerate(days):
    c0, t0 = time.process_time(), time.perf_counter()
    o = run_window(spec, d, db_url=url, notify=False)
    out.append({"day": d, "status": o.status, "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0})
print("FLOOR " + json.dumps(out))
"""


def warm_floor(spec: Path, store_url: str, days: list[str], env: dict[str, str]) -> dict[str, Any]:
    """CPU seconds of one window's steps in one process that already ran a window (imports and
    first-use costs paid): the floor any layout approaches."""
    proc = subprocess.run(["nice", "-n", str(max(0, 10 - os.nice(0))), sys.executable, "-c", _FLOOR, str(spec),
                           store_url, json.dumps(days)],
                          env=env, capture_output=True, text=True, timeout=900)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("FLOOR ")), None)
    if line is None:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-4000:])
    runs = json.loads(line[len("FLOOR "):])
    warm = [r["cpu_s"] for r in runs[1:] if r["status"] in ("succeeded", "labels_pending")]
    return {"first_window_cpu_s": round(runs[0]["cpu_s"], 2),
            "warm_cpu_s": round(sum(warm) / len(warm), 2) if warm else None, "runs": runs}


# ---------------------------------------------------------------- one phase


def run_phase(phase: Phase, idx: int, *, base: dict[str, Any], first_day: date, work: Path, env: dict[str, str],
              meta_url: str, services: list[Service], timeout_s: float, floor_cpu_s: float | None) -> dict[str, Any]:
    from fairmon.pipeline.layout import task_row, task_rows
    from fairmon_airflow.dagfiles import write_dag_files

    monitors, dags = Path(env["FAIRMON_MONITORS_DIR"]), Path(env["AIRFLOW__CORE__DAGS_FOLDER"])
    prefix = f"p{idx}{phase.layout[0]}"
    for old in monitors.glob("*.yaml"):
        old.unlink()
    doc = copy.deepcopy(base)
    for k, v in EXPLANATIONS[phase.explanations].items():
        _set_dotted(doc, k, v)
    # the phase's windows end today (catch-up creates exactly them): window k's partition is a copy
    # of the stream's window k (same rows and model version as the floor's windows)
    today = datetime.now(UTC).date()
    start = today - timedelta(days=phase.windows)
    stream = Path(str(doc["data"]["files"]["pattern"])).parent
    for k in range(phase.windows):
        shutil.copyfile(stream / f"{(first_day + timedelta(days=k)).isoformat()}.csv",
                        stream / f"{(start + timedelta(days=k)).isoformat()}.csv")
    docs = fleet_spec_docs(doc, n=phase.monitors, prefix=prefix, first_day=start, windows=phase.windows,
                           layout=phase.layout, out=work, open_ended=True)
    write_specs(docs, monitors)
    wenv = dict(env)
    if phase.preload:
        wenv["AIRFLOW__CELERY__EXTRA_CELERY_CONFIG"] = json.dumps({"imports": ["fairmon_airflow.preload"]})
    worker = Service(f"worker_{idx}_{phase.label}", ["celery", "worker", "--concurrency", "2", "--queues", "default",
                                                     "--skip-serve-logs", "--without-gossip", "--without-mingle"],
                     wenv, work / "logs")
    try:
        _wait(lambda: "ready." in worker.log_path.read_text(errors="replace"), 300, "celery worker ready",
              [worker, *services])
        _settle(worker)
        worker_cpu0, control0, busy0 = worker.cpu_s(), sum(s.cpu_s() for s in services), _busy_cpu_s()
        split0 = _worker_breakdown(worker.proc.pid)
        control_split0 = {s.name: s.cpu_s() for s in services}
        t0 = time.monotonic()
        write_dag_files(monitors, dags, prune=True)  # the DAG processor picks them up; catch-up runs follow
        total = phase.monitors * phase.windows
        loads: list[float] = []
        partial = False
        runs_sql = "SELECT count(*) AS n FROM dag_run WHERE dag_id LIKE :p AND state IN ('success', 'failed')"
        deadline = t0 + timeout_s
        while True:
            finished = _rows(meta_url, runs_sql, p=f"fairmon_{prefix}%")
            loads.append(os.getloadavg()[0])
            if finished and int(finished[0]["n"]) >= total:
                break
            if time.monotonic() > deadline:
                partial = True
                break
            if not worker.alive():
                raise RuntimeError(f"worker exited:\n{worker.tail()}")
            time.sleep(5)
        wall = time.monotonic() - t0
        worker_cpu = worker.cpu_s() - worker_cpu0
        split1 = _worker_breakdown(worker.proc.pid)
        worker_split = {k: round(split1[k] - split0[k], 1) for k in split1}
        control_split = {s.name: round(s.cpu_s() - control_split0[s.name], 1) for s in services}
        control = sum(s.cpu_s() for s in services) - control0
        busy = _busy_cpu_s() - busy0
    finally:
        worker.stop()
    if partial:  # stop the rest of the phase: pause its DAGs so the next phase starts clean
        for name in docs:
            subprocess.run([str(BIN / "airflow"), "dags", "pause", f"fairmon_{Path(name).stem}"], env=env,
                           capture_output=True, timeout=120)
    dag_runs = _rows(meta_url, "SELECT dag_id, state, queued_at, start_date, end_date FROM dag_run "
                               "WHERE dag_id LIKE :p ORDER BY queued_at", p=f"fairmon_{prefix}%")
    tis = _rows(meta_url, "SELECT dag_id, task_id, state, queued_dttm, start_date, end_date, try_number FROM "
                          "task_instance WHERE dag_id LIKE :p", p=f"fairmon_{prefix}%")
    cpu_lines = task_cpu_lines(work / "airflow" / "logs", f"fairmon_{prefix}")
    for t in tis:
        t["heavy"] = t["task_id"] != "wait_for_data" and task_row(phase.layout, t["task_id"]).heavy
    for r in [*dag_runs, *tis]:
        for k, v in list(r.items()):
            if hasattr(v, "isoformat"):
                r[k] = v.isoformat()
    recorded = {
        "phase": phase.label, "layout": phase.layout, "preload": phase.preload, "explanations": phase.explanations,
        "monitors": phase.monitors,
        "windows_per_monitor": phase.windows, "dag_runs": dag_runs, "task_instances": tis,
        "worker_cpu_s": worker_cpu, "control_cpu_s": control, "worker_cpu_split_s": worker_split,
        "control_cpu_split_s": control_split, "machine_busy_cpu_s": busy, "wall_s": wall,
        "warm_floor_cpu_s": floor_cpu_s, "tasks_per_window": len(task_rows(phase.layout)) + 1,  # + the sensor
        "task_cpu_lines": cpu_lines, "partial": partial, "load_mean": sum(loads) / len(loads), "load_max": max(loads),
        "failed_tasks": sorted({(t["task_id"]) for t in tis if t["state"] == "failed"}),
        "retried_tasks": sum(1 for t in tis if (t["try_number"] or 1) > 1),
    }
    return recorded


_CPU_RE = re.compile(r"fairmon task cpu: ([0-9.]+) s before the steps, ([0-9.]+) s in ([a-z_,]+)")


def task_cpu_lines(logs: Path, dag_prefix: str) -> list[dict[str, Any]]:
    """The task processes' own CPU lines (``fairmon_airflow.tasks.CPU_LINE``) from the task logs."""
    out = []
    for path in sorted(logs.glob(f"dag_id={dag_prefix}*/**/*.log")):
        task = next((p.split("=", 1)[1] for p in path.parts if p.startswith("task_id=")), "?")
        for m in _CPU_RE.finditer(path.read_text(errors="replace")):
            out.append({"task_id": task, "before_s": float(m.group(1)), "steps_s": float(m.group(2))})
    return out


def _row(recorded: dict[str, Any]) -> dict[str, Any]:
    s = summarize(recorded)
    waits = s.pop("task_wall_median_s")
    return {
        "phase": recorded["phase"], "monitors": recorded["monitors"], "windows_per_monitor": recorded["windows_per_monitor"],
        **s, "partial": recorded["partial"], "load_mean": round(recorded["load_mean"], 2),
        "load_max": round(recorded["load_max"], 2),
        "other_cpu_s": round(recorded["machine_busy_cpu_s"] - recorded["worker_cpu_s"] - recorded["control_cpu_s"], 1),
        "failed_tasks": ",".join(recorded["failed_tasks"]) or "none", "retried_tasks": recorded["retried_tasks"],
        "task_wall_median_s": json.dumps(waits),
        "worker_cpu_split_s": json.dumps(recorded.get("worker_cpu_split_s", {})),
        "control_cpu_split_s": json.dumps(recorded.get("control_cpu_split_s", {})),
    }


# ---------------------------------------------------------------- CPU-s per window by setting

#: settings of the capacity model, over the demo spec (each measured in one warm process)
SETTINGS: dict[str, dict[str, Any]] = {
    "demo explanations": {},
    "spec-default explanations": {"explanations": None},  # the demo's explanation overrides dropped
    "explanations off": {"explanations.enabled": False, "explanations.attribution_gap.enabled": False},
}


def _set_dotted(doc: dict[str, Any], key: str, value: Any) -> None:
    *head, last = key.split(".")
    for k in head:
        doc = doc.setdefault(k, {})
    if value is None:
        doc.pop(last, None)
    else:
        doc[last] = value


def run_settings(rows_list: list[int], out: Path, tag: str) -> int:
    """CPU seconds of a window's steps in one warm process (imports and first-use costs paid) by
    setting and rows: the part of the capacity model that does not depend on the layout."""
    import yaml

    from fairmon.cli.demo import prepare, write_demo_spec
    from fairmon.store import open_store

    work = Path(tempfile.mkdtemp(prefix="fleet_settings_"))
    results: list[dict[str, Any]] = []
    load0 = os.getloadavg()
    with _databases(f"s{os.getpid()}") as (_meta_url, store_url):
        open_store(store_url, upgrade=True).engine.dispose()
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for rows in rows_list:
            demo = work / f"demo_{rows}"
            manifest = prepare(demo, windows=5, rows=rows, drift_window=4, seed=0)
            base = yaml.safe_load(write_demo_spec(demo, FLEET_OVERRIDES).read_text())
            first_day = date.fromisoformat(manifest["windows"][0]["start"][:10])
            days = [w["start"][:10] for w in manifest["windows"][:3]]
            for i, (name, overrides) in enumerate(SETTINGS.items()):
                doc = copy.deepcopy(base)
                for k, v in overrides.items():
                    _set_dotted(doc, k, v)
                spec = write_specs(fleet_spec_docs(doc, n=1, prefix=f"s{rows}x{i}", first_day=first_day, windows=2,
                                                   layout="warm", out=work), work / "specs")[0]
                f = warm_floor(spec, store_url, days, env)
                results.append({"setting": name, "rows": rows, "warm_cpu_s_per_window": f["warm_cpu_s"],
                                "first_window_cpu_s": f["first_window_cpu_s"],
                                "statuses": ",".join(r["status"] for r in f["runs"])})
                print(json.dumps(results[-1]), flush=True)
    write_results(out, tag, results, settings={"settings": SETTINGS, "rows": rows_list, "load_at_start": load0,
                                               "overrides": FLEET_OVERRIDES},
                  notes="One window's steps in one process that already ran a window (mean of 2 windows).")
    shutil.rmtree(work, ignore_errors=True)
    return 0


# ---------------------------------------------------------------- entry points


def smoke(out: Path) -> list[dict[str, Any]]:
    """No Airflow: the fleet's spec generation loads as specs, and the summary and capacity arithmetic
    run on the recorded small run (a real run of this script at small N, kept in results/)."""
    import yaml

    from fairmon.config import load_spec
    from fairmon_airflow.dagspec import load_dag_settings

    base = yaml.safe_load((REPO / "monitors" / "demo.yaml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        docs = fleet_spec_docs(base, n=3, prefix="sm", first_day=date(2026, 1, 1), windows=2, layout="warm",
                               out=Path(tmp))
        paths = write_specs(docs, Path(tmp) / "monitors")
        specs = [load_spec(p) for p in paths]
        assert [s.name for s in specs] == ["sm000", "sm001", "sm002"]
        assert all(s.execution.layout == "warm" and s.schedule.catchup for s in specs)
        assert load_dag_settings(paths[0]).layout == "warm"
    recorded = json.loads(RECORDED_SMALL.read_text())
    rows = [_row(r) for r in recorded["phases"]]
    cap = capacity_rows({r["phase"]: r["cpu_s_per_window"] for r in rows if r["cpu_s_per_window"]})
    write_results(out, "smoke", rows + cap, settings={"smoke": True, "recorded": str(RECORDED_SMALL.name)},
                  notes="Smoke: the summary of the recorded small run, recomputed; not a new measurement.")
    return rows + cap


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phases", default=DEFAULT_PHASES, help=f"comma-separated phases (default {DEFAULT_PHASES})")
    ap.add_argument("--rows", type=int, default=2000, help="rows per window (the demo's size: 2,000)")
    ap.add_argument("--budget-s", type=float, default=1500, help="wall budget for all phases (default 25 min)")
    ap.add_argument("--tag", default="fleet", help="results file name")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--record", type=Path, help="also write the raw recorded phases (JSON) here")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--no-floor", action="store_true", help="skip the one-process floor (trials)")
    ap.add_argument("--from-record", type=Path, help="no run: rebuild the results files from a --record file")
    ap.add_argument("--settings", type=str, default=None,
                    help="only the in-process CPU-s per window by setting, at these rows (e.g. 2000,20000)")
    args = ap.parse_args(argv)
    if args.settings:
        return run_settings([int(x) for x in args.settings.split(",")], args.out, args.tag)
    if args.from_record:
        return from_record(args.from_record, args.out, args.tag)
    if args.smoke:  # never into results/: the smoke recomputes, it does not measure
        out = args.out if args.out != HERE / "results" else Path(tempfile.mkdtemp(prefix="fleet_smoke_"))
        rows = smoke(out)
        print(json.dumps(rows[:2], default=str)[:2000])
        return 0
    phases = [Phase.parse(p) for p in args.phases.split(",")]
    return run_fleet(phases, rows=args.rows, budget_s=args.budget_s, tag=args.tag, out=args.out, record=args.record,
                     floor=not args.no_floor)


def _capacity(rows_out: list[dict[str, Any]], rows: int, floor_cpu_s: float | None) -> list[dict[str, Any]]:
    return capacity_rows({f"{r['phase']} ({rows} rows)": r["cpu_s_per_window"] for r in rows_out
                          if r["cpu_s_per_window"]}
                         | ({f"one warm process, demo explanations, floor ({rows} rows)": floor_cpu_s}
                            if floor_cpu_s else {}))


def from_record(record: Path, out: Path, tag: str) -> int:
    """The results files of a recorded run, summarized again (no measurement)."""
    data = json.loads(record.read_text())
    rows_out = [_row(r) for r in data["phases"]]
    settings = data["settings"]
    cap = _capacity(rows_out, int(settings["rows_per_window"]), settings["warm_floor"]["warm_cpu_s"])
    write_results(out, tag, rows_out + cap, settings={**settings, "summarized_from": record.name},
                  notes=f"Summarized from the recorded run {record.name}; the measurement's commit, load and "
                        "machine are in its settings and rows.")
    return 0


def run_fleet(phases: list[Phase], *, rows: int, budget_s: float, tag: str, out: Path, record: Path | None,
              floor: bool = True) -> int:
    import yaml

    from fairmon.cli.demo import prepare, write_demo_spec
    from fairmon.store import open_store

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="fleet_"))
    (work / "logs").mkdir()
    max_w = max(p.windows for p in phases)
    manifest = prepare(work / "demo", windows=max_w + 2, rows=rows, drift_window=max_w + 1, seed=0)
    base_spec = write_demo_spec(work / "demo", FLEET_OVERRIDES)
    base = yaml.safe_load(base_spec.read_text())
    first_day = date.fromisoformat(manifest["windows"][0]["start"][:10])
    load0 = os.getloadavg()
    tag_db = f"{os.getpid()}"
    recorded_phases: list[dict[str, Any]] = []
    notes: list[str] = []
    _redis_flush()
    with _databases(tag_db) as (meta_url, store_url):
        open_store(store_url, upgrade=True).engine.dispose()
        monitors, dags = work / "monitors", work / "dags"
        monitors.mkdir()
        dags.mkdir()
        port = _free_port()
        env = _airflow_env(work, meta_url, store_url, monitors, dags, port)
        floor_days = [w["start"][:10] for w in manifest["windows"][:3]]
        floor_doc = fleet_spec_docs(base, n=1, prefix="floor", first_day=first_day, windows=2, layout="warm",
                                    out=work)
        floor_path = write_specs(floor_doc, work / "floor")[0]
        floor_res: dict[str, Any] = (warm_floor(floor_path, store_url, floor_days, env) if floor
                                     else {"warm_cpu_s": None, "first_window_cpu_s": None, "runs": []})
        print(f"warm floor: {floor_res['warm_cpu_s']} CPU-s per window (first {floor_res['first_window_cpu_s']})",
              flush=True)
        mig = subprocess.run([str(BIN / "airflow"), "db", "migrate"], env=env, capture_output=True, text=True,
                             timeout=600)
        if mig.returncode != 0:
            raise RuntimeError(mig.stdout[-2000:] + mig.stderr[-4000:])
        services = [Service("scheduler", ["scheduler"], env, work / "logs"),
                    Service("dag-processor", ["dag-processor"], env, work / "logs"),
                    Service("api-server", ["api-server", "--port", str(port), "--workers", "1"], env, work / "logs")]
        try:
            _wait(lambda: bool(_rows(meta_url, "SELECT 1 FROM job WHERE job_type = 'SchedulerJob'")), 300,
                  "scheduler up", services)
            for idx, phase in enumerate(phases):
                left = budget_s - (time.monotonic() - started)
                if left < 120:
                    notes.append(f"phase {phase.label} {phase.monitors}x{phase.windows} not run: budget spent")
                    continue
                print(f"phase {idx}: {phase} ({left:.0f} s of budget left)", flush=True)
                rec = run_phase(phase, idx, base=base, first_day=first_day, work=work, env=env, meta_url=meta_url,
                                services=services, timeout_s=left - 60, floor_cpu_s=floor_res["warm_cpu_s"])
                recorded_phases.append(rec)
                print(json.dumps(_row(rec), default=str), flush=True)
        finally:
            for s in reversed(services):
                s.stop()
            _redis_flush()
    rows_out = [_row(r) for r in recorded_phases]
    cap = _capacity(rows_out, rows, floor_res["warm_cpu_s"])
    settings = {"measured_commit": git_commit(), "phases": [p.__dict__ for p in phases], "rows_per_window": rows, "overrides": FLEET_OVERRIDES,
                "worker": "airflow celery worker --concurrency 2 (nice 10)", "broker": f"redis db {REDIS_DB}",
                "metadata_and_result_backend": "postgres (scratch db)", "load_at_start": load0,
                "warm_floor": floor_res, "machine_at_start": machine_info(), "wall_s": round(time.monotonic() - started, 1)}
    write_results(out, tag, rows_out + cap, settings=settings, notes="\n".join(notes))
    if record is not None:
        record.write_text(json.dumps({"phases": recorded_phases, "settings": settings}, indent=1, default=str) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
