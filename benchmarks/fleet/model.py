"""The fleet benchmark's pure parts: monitor specs for a fleet, the summary of a recorded run, capacity.

No Airflow, no database: ``run.py`` records a run (DAG runs and task instances from the metadata
database, CPU samples of the worker's process tree, the load) and calls :func:`summarize`; the smoke
test calls the same functions on a small recorded run (``results/recorded_small.json``).
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from fairmon.pipeline.layout import task_rows

#: one worker in this benchmark: ``airflow celery worker --concurrency 2`` on 2 cores
WORKER_CORES = 2
SECONDS_PER_HOUR = 3600


def fleet_spec_docs(base: Mapping[str, Any], *, n: int, prefix: str, first_day: date, windows: int,
                    layout: str, out: Path, open_ended: bool = False) -> dict[str, dict[str, Any]]:
    """``n`` monitor specs from the demo spec ``base``: names ``<prefix>NNN``, ``windows`` daily windows
    from ``first_day`` (catch-up, so the scheduler creates them), the given ``execution.layout``, a
    validation suite and artifact folder of their own, the model pinned to version 1 (the stream's
    model before its retraining, whatever the window's date). ``open_ended``: no ``end_date`` (for
    windows ending today: the scheduler creates the ``windows`` runs that have ended by now). Returns
    ``{file name: spec document}``.

    Examples
    --------
    >>> base = {"identity": {"name": "demo"}, "model": {}, "schedule": {}, "validation": {}, "execution": {}}
    >>> docs = fleet_spec_docs(base, n=2, prefix="fw", first_day=date(2026, 1, 1), windows=3,
    ...                        layout="warm", out=Path("/tmp/f"))
    >>> sorted(docs), docs["fw001.yaml"]["schedule"]["end_date"], docs["fw001.yaml"]["execution"]["layout"]
    (['fw000.yaml', 'fw001.yaml'], '2026-01-03', 'warm')
    """
    docs = {}
    for i in range(n):
        d = copy.deepcopy(dict(base))
        name = f"{prefix}{i:03d}"
        d["identity"] = {**d["identity"], "name": name, "tags": ["fleet-benchmark"]}
        d["model"] = {**d["model"], "version": "1"}
        # daily windows [first_day + k, first_day + k + 1) for k < windows: the last run's logical
        # date (interval start) is first_day + windows - 1
        sched = {**d["schedule"], "start_date": first_day.isoformat(), "catchup": True}
        sched.pop("end_date", None)
        if not open_ended:
            sched["end_date"] = (first_day + timedelta(days=windows - 1)).isoformat()
        d["schedule"] = sched
        d["validation"] = {**d["validation"], "suite_path": str(out / "suites" / f"{name}.json")}
        d["execution"] = {**d["execution"], "layout": layout, "artifact_location": str(out / "artifacts"),
                          "retry_delay_s": 10, "deadline_s": None}
        docs[f"{name}.yaml"] = d
    return docs


def write_specs(docs: Mapping[str, Mapping[str, Any]], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fname, doc in docs.items():
        p = folder / fname
        p.write_text(yaml.safe_dump(dict(doc), sort_keys=False))
        paths.append(p)
    return paths


def _q(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (nearest rank; None for no values)."""
    if not values:
        return None
    s = sorted(values)
    return float(s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))])


def _secs(a: str | datetime | None, b: str | datetime | None) -> float | None:
    if a is None or b is None:
        return None
    ta = a if isinstance(a, datetime) else datetime.fromisoformat(a)
    tb = b if isinstance(b, datetime) else datetime.fromisoformat(b)
    return (tb - ta).total_seconds()


def summarize(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of one recorded phase.

    ``recorded`` holds ``dag_runs`` (``dag_id, state, queued_at, start_date, end_date``),
    ``task_instances`` (``dag_id, task_id, state, queued_dttm, start_date, end_date, heavy``),
    ``worker_cpu_s`` (CPU seconds of the worker's process tree during the phase),
    ``control_cpu_s`` (scheduler, API server, DAG processor, triggerer), ``wall_s``, ``warm_floor_cpu_s``
    (one window's steps in one already-warm process, the same spec; None if not measured) and
    ``tasks_per_window``.

    Examples
    --------
    >>> rec = {"dag_runs": [{"dag_id": "a", "state": "success", "queued_at": "2026-01-01T00:00:00",
    ...                      "start_date": "2026-01-01T00:00:01", "end_date": "2026-01-01T00:01:00"}],
    ...        "task_instances": [], "worker_cpu_s": 12.0, "control_cpu_s": 3.0, "wall_s": 60.0,
    ...        "warm_floor_cpu_s": 6.0, "tasks_per_window": 12}
    >>> s = summarize(rec)
    >>> s["cpu_s_per_window"], s["capacity_windows_per_hour"], s["overhead_cpu_s_per_task"]
    (12.0, 600.0, 0.5)
    """
    runs = list(recorded["dag_runs"])
    done = [r for r in runs if r["state"] == "success"]
    n = len(done)
    lat = [x for x in (_secs(r["queued_at"], r["end_date"]) for r in done) if x is not None]
    service = [x for x in (_secs(r["start_date"], r["end_date"]) for r in done) if x is not None]
    starts = [r["queued_at"] for r in done if r["queued_at"]]
    ends = [r["end_date"] for r in done if r["end_date"]]
    span = _secs(min(starts), max(ends)) if starts and ends else None
    cpu = float(recorded["worker_cpu_s"])
    per_window = cpu / n if n else None
    tis = [t for t in recorded["task_instances"] if t["state"] == "success"]
    stored = _stored_latency(recorded)
    waits: dict[str, list[float]] = {"light": [], "heavy": []}
    durations: dict[str, list[float]] = {}
    for t in tis:
        w = _secs(t["queued_dttm"], t["start_date"])
        if w is not None:
            waits["heavy" if t["heavy"] else "light"].append(w)
        d = _secs(t["start_date"], t["end_date"])
        if d is not None:
            durations.setdefault(t["task_id"], []).append(d)
    # a time-boxed phase (``partial``): windows still running at the cut-off did part of their work.
    # CPU-s per complete window = the logged CPU of one task of each kind (mean over all windows) plus
    # the worker CPU no task logged (runner exit, supervisor, Celery), per task done, times tasks per window
    lines_all = recorded.get("task_cpu_lines") or []
    estimated = False
    unlogged_kinds: list[str] = []
    if recorded.get("partial") and lines_all:
        by_task: dict[str, list[float]] = {}
        for x in lines_all:
            by_task.setdefault(x["task_id"], []).append(x["before_s"] + x["steps_s"])
        # every task kind must have run at least once, or the estimate leaves its work out
        unlogged_kinds = [r.name for r in task_rows(str(recorded.get("layout", "warm"))) if r.name not in by_task]
        logged_window = sum(statistics.mean(v) for v in by_task.values())
        n_tasks_done = len(tis)
        unlogged_per_task = (cpu - sum(sum(v) for v in by_task.values())) / n_tasks_done if n_tasks_done else 0.0
        per_window = logged_window + unlogged_per_task * int(recorded["tasks_per_window"])
        n = cpu / per_window  # window-equivalents of work done
        estimated = True
        if unlogged_kinds:  # not estimable: no window reached these tasks before the cut-off
            per_window = None
    floor = recorded.get("warm_floor_cpu_s")
    k = int(recorded["tasks_per_window"])
    lines = recorded.get("task_cpu_lines") or []
    in_steps = sum(x["steps_s"] for x in lines) / n if lines and n else None
    before = sum(x["before_s"] for x in lines) / len(lines) if lines else None
    overhead = (per_window - float(floor)) / k if per_window is not None and floor is not None else None
    if estimated:
        span = float(recorded["wall_s"])
    return {
        "windows_succeeded": len(done),
        "cpu_from": (f"not estimable (time-boxed; no task ran: {', '.join(unlogged_kinds)})" if unlogged_kinds
                     else "task CPU lines (time-boxed phase)" if estimated else "windows succeeded"),
        "windows_total": len(runs),
        "worker_cpu_s": round(cpu, 1),
        "cpu_s_per_window": None if per_window is None else round(per_window, 2),
        "capacity_windows_per_hour": None if per_window is None else round(WORKER_CORES * SECONDS_PER_HOUR / per_window, 1),
        "wall_windows_per_hour": None if not span else round(n / span * SECONDS_PER_HOUR, 1),
        "window_equivalents": round(n, 1),
        "span_s": None if span is None else round(span, 1),
        "control_cpu_s_per_window": None if not n else round(float(recorded["control_cpu_s"]) / n, 2),
        "stored_latency_p50_s": _q(stored, 0.5),
        "stored_latency_p95_s": _q(stored, 0.95),
        "latency_p50_s": _q(lat, 0.5),
        "latency_p95_s": _q(lat, 0.95),
        "service_p50_s": _q(service, 0.5),
        "service_p95_s": _q(service, 0.95),
        "tasks_per_window": k,
        "warm_floor_cpu_s": floor,
        "overhead_cpu_s_per_task": None if overhead is None else round(overhead, 2),
        # from the task processes' own CPU lines: the steps' CPU per window, and per task the CPU of
        # the task runner before the steps (since the fork) and the rest (worker CPU minus both)
        "in_steps_cpu_s_per_window": None if in_steps is None else round(in_steps, 2),
        "runner_start_cpu_s_per_task": None if before is None else round(before, 3),
        "not_in_steps_cpu_s_per_task": (None if in_steps is None or per_window is None
                                        else round((per_window - in_steps) / k, 3)),
        "queue_wait_light_p50_s": _q(waits["light"], 0.5),
        "queue_wait_light_p95_s": _q(waits["light"], 0.95),
        "queue_wait_heavy_p50_s": _q(waits["heavy"], 0.5),
        "queue_wait_heavy_p95_s": _q(waits["heavy"], 0.95),
        "task_wall_median_s": {t: round(statistics.median(v), 2) for t, v in sorted(durations.items())},
    }


def _stored_latency(recorded: Mapping[str, Any]) -> list[float]:
    """Queued -> results stored (the ``persist`` task done) per window, for phases with one window per
    monitor (task rows carry the DAG id, not the run)."""
    runs = list(recorded["dag_runs"])
    queued = {r["dag_id"]: r["queued_at"] for r in runs}
    if len(queued) != len(runs):
        return []
    out = []
    for t in recorded["task_instances"]:
        if t["task_id"] == "persist" and t["state"] == "success":
            x = _secs(queued.get(t["dag_id"]), t["end_date"])
            if x is not None:
                out.append(x)
    return out


def workers_needed(cpu_s_per_window: float, *, monitors: int = 500, windows_per_day: float = 1.0,
                   hours: float = 24.0, utilization: float = 0.7, cores: int = WORKER_CORES) -> int:
    """2-core workers for ``monitors`` monitors with ``windows_per_day`` windows each, all computed
    within ``hours`` of the day at ``utilization`` of the workers' CPU.

    Examples
    --------
    >>> workers_needed(10.0)  # 500 daily windows x 10 CPU-s over a day at 70 %: well under one worker
    1
    >>> workers_needed(12.0, hours=1.0)  # all 500 within the hour after midnight: 6,000 CPU-s > 5,040
    2
    """
    need_cpu_s = monitors * windows_per_day * cpu_s_per_window
    have_cpu_s = cores * hours * SECONDS_PER_HOUR * utilization
    return max(1, math.ceil(need_cpu_s / have_cpu_s))


def capacity_rows(settings: Mapping[str, float], *, monitors: int = 500) -> list[dict[str, Any]]:
    """One row per setting (name -> CPU-s per window): capacity per 2-core worker and the workers for
    ``monitors`` daily monitors done within 24 h, 4 h and 1 h at 70 % utilization.

    Examples
    --------
    >>> capacity_rows({"x": 9.0})[0]["windows_per_hour_per_worker"]
    800.0
    """
    rows = []
    for name, cpu in settings.items():
        rows.append({
            "setting": name,
            "cpu_s_per_window": round(cpu, 2),
            "windows_per_hour_per_worker": round(WORKER_CORES * SECONDS_PER_HOUR / cpu, 1),
            f"workers_{monitors}_in_24h": workers_needed(cpu, monitors=monitors, hours=24),
            f"workers_{monitors}_in_4h": workers_needed(cpu, monitors=monitors, hours=4),
            f"workers_{monitors}_in_1h": workers_needed(cpu, monitors=monitors, hours=1),
        })
    return rows
