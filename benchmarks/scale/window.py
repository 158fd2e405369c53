"""End-to-end window benchmark (issue 21 reqs 4, 7): one demo-like window of N rows through every step.

Unlike ``benchmarks/scale/run.py`` (in-memory library calls), this runs the whole monitoring window
the way ``fairmon run`` does (:func:`fairmon.pipeline.run_window`: resolve, snapshot, pull from a
Parquet file source, validate, predict, outcome, RUMIE, explanations, persist into Postgres, drift,
diagnose, report, alert, FEU), in one child process per size, so the figures are the pipeline's.

Setup (in the parent, not measured): the demo stream's models (:func:`fairmon.datasets.generate_stream`
and :func:`~fairmon.datasets.deploy_models` at 5,000 rows per window, 3 windows, drift at window 2)
are registered in a scratch registry, the first two windows written as ``reference.csv``, and one
window of N rows drawn with the demo stream's generator and label model (the same columns, planted
group ``age <= 30 OR region = north``) written as ``<day>.parquet`` in row groups of 500k rows. The
window is day 1 of the stream (2026-01-02), served by the production version ``v1`` (pre-drift), the
demo's common case. The spec is ``monitors/demo.yaml`` with the demo settings
(:data:`fairmon.cli.demo.DEMO_SETTINGS`), its paths pointed at the scratch folder and ``data.files``
at the Parquet pattern. The store is a scratch Postgres database (``--db``, created and migrated).

Per size, the child records per step (the pipeline's ``on_step`` callback, so each figure is the
step including its run bookkeeping): CPU seconds (process time, all threads), wall seconds, and the
resident set after the step; then ``import_cpu_s`` (importing fairmon's pipeline before the first
step), ``total_cpu_s`` (sum of the steps: the issue's "end to end" baseline was the pipeline's step
timings), ``process_cpu_s`` (everything the child did, imports included), ``peak_rss_mb`` (the
child's own ``VmHWM``: the kernel's peak resident set of the child's process image, reset after
every step so ``<step>_peak_rss_mb`` is the step's own peak; ``ru_maxrss`` of an exec'd child also
counts the parent's pages at the fork and is recorded as ``ru_maxrss_mb`` only), the window status and RUMIE's rule / honest DScore / sample sizes.

Results: ``<name>.{md,csv,json}`` holds one row per window (the headline figures, ``peak_step`` the
step of the peak) and ``<name>_steps.{md,csv,json}`` one row per step (``cpu_s``, ``wall_s``,
``rss_mb`` after the step, ``peak_rss_mb`` during it); the functions return the flattened rows.

``--profile`` writes a cProfile dump (``<rows>.prof``) and its top functions (``<rows>.prof.txt``)
per size into the results folder; ``--tracemalloc`` records the peak of Python allocations per step.

Usage::

    python benchmarks/scale/window.py --smoke --out /tmp/x            # seconds (CI: tests/pipeline/test_scale_window_smoke.py)
    nice -n 10 python benchmarks/scale/window.py                       # 20k, 200k, 1M rows
    nice -n 10 python benchmarks/scale/window.py --sizes 10000000 --name window_10m
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # repo root: benchmarks._meta and fairmon

from benchmarks._meta import write_results  # noqa: E402

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/fairmon_window_bench"
DAY = "2026-01-02"  # window 1 of the stream: production version v1
CHUNK = 500_000  # rows per generated chunk and Parquet row group


# ------------------------------------------------------------------------------------ setup (parent)


def prepare(folder: Path, rows: int, *, seed: int, db_url: str) -> Path:
    """Registry, reference data, the N-row Parquet window and the spec; returns the spec path."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    import yaml

    from fairmon.cli.demo import DEMO_SETTINGS, _repo_demo_spec, _set_dotted
    from fairmon.datasets import deploy_models, generate_stream
    from fairmon.datasets._calibration import _labels
    from fairmon.datasets._stream import _window_rows
    from fairmon.datasets._stream_spec import LABEL_COLUMN, planted_membership
    from fairmon.store import open_store
    from fairmon.window import parse_date

    folder.mkdir(parents=True, exist_ok=True)
    registry = folder / "registry"
    stream_dir = folder / "stream"
    if not (registry.exists() and (stream_dir / "reference.csv").exists()):
        shutil.rmtree(registry, ignore_errors=True)
        stream = generate_stream(n_windows=3, rows_per_window=5000, drift_window=2, random_state=seed)
        deploy_models(stream, str(registry), name="demo")
        stream_dir.mkdir(parents=True, exist_ok=True)
        ref = stream.frame([0, 1]).drop(columns=["window"])
        ref.to_csv(stream_dir / "reference.csv", index=False, date_format="%Y-%m-%dT%H:%M:%S")
        (stream_dir / "delta_base.json").write_text(json.dumps({"delta_base": stream.delta_base}))
    delta = float(json.loads((stream_dir / "delta_base.json").read_text())["delta_base"])
    data_dir = folder / f"window-{rows}"
    target = data_dir / f"{DAY}.parquet"
    if not target.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        start = parse_date(DAY)
        writer = None
        tmp = target.with_suffix(".tmp")
        try:
            for k, lo in enumerate(range(0, rows, CHUNK)):
                n = min(CHUNK, rows - lo)
                frame, u = _window_rows(1_000 + k, n, start, seed)
                frame["applicant_id"] = np.arange(lo, lo + n, dtype=np.int64)
                frame[LABEL_COLUMN] = _labels(frame, planted_membership(frame), u, delta)
                table = pa.Table.from_pandas(pd.DataFrame(frame), preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(tmp, table.schema)
                writer.write_table(table)
        finally:
            if writer is not None:
                writer.close()
        tmp.rename(target)
    doc = yaml.safe_load(_repo_demo_spec().read_text())
    for key, value in DEMO_SETTINGS.items():
        _set_dotted(doc, key, value)
    doc["model"]["registry_uri"] = str(registry)
    doc["data"]["files"] = {"pattern": str(data_dir) + "/{start:%Y-%m-%d}.parquet", "format": "parquet"}
    doc["validation"]["reference_data"] = str(stream_dir / "reference.csv")
    doc["validation"]["suite_path"] = str(folder / "suite.json")
    doc["retraining"]["training_data"] = {"path": str(stream_dir / "reference.csv")}
    doc["execution"]["artifact_location"] = str(folder / "artifacts")
    doc["identity"]["name"] = "demo"
    spec = folder / f"demo-{rows}.yaml"
    spec.write_text("# generated by benchmarks/scale/window.py from monitors/demo.yaml\n"
                    + yaml.safe_dump(doc, sort_keys=False))
    _ensure_database(db_url)
    open_store(db_url, upgrade=True).engine.dispose()
    return spec


def _ensure_database(db_url: str) -> None:
    """Create the scratch Postgres database of ``db_url`` when it does not exist yet."""
    import sqlalchemy as sa

    url = sa.make_url(db_url)
    if not url.get_backend_name().startswith("postgresql") or not url.database:
        return
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            found = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": url.database}).first()
            if found is None:
                conn.execute(sa.text(f'CREATE DATABASE "{url.database}"'))
    finally:
        admin.dispose()


# ------------------------------------------------------------------------------------ one window (child)


def _rss_mb() -> float:
    """Current resident set of this process (MB)."""
    with open("/proc/self/statm") as fh:
        return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _status_mb(field: str) -> float:
    """A ``/proc/self/status`` memory figure (``VmHWM``: peak resident set of this process image) in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (``VmHWM``) of this process, so the next reading is one step's peak."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float:
    """Peak resident set of this process image: ``VmHWM`` (``ru_maxrss`` of a child started by ``exec``
    also counts the parent's resident set at the fork, so it is not used)."""
    return _status_mb("VmHWM")


def one_window(spec: str, db_url: str, *, use_tracemalloc: bool) -> dict[str, Any]:
    """Run the window of ``spec`` through :func:`fairmon.pipeline.run_window` and time every step."""
    c0, w0 = time.process_time(), time.perf_counter()
    if use_tracemalloc:
        import tracemalloc

        tracemalloc.start()
    from fairmon.pipeline import run_window

    out: dict[str, Any] = {"import_cpu_s": round(time.process_time() - c0, 3),
                           "import_rss_mb": _rss_mb(), "import_peak_rss_mb": _peak_rss_mb()}
    peaks = [out["import_peak_rss_mb"]]
    out["peak_per_step"] = _reset_peak()
    steps: dict[str, dict[str, Any]] = {}
    mark = [time.process_time(), time.perf_counter()]

    def on_step(step: str, result: dict[str, Any]) -> None:
        c, w = time.process_time(), time.perf_counter()
        row: dict[str, Any] = {"cpu_s": round(c - mark[0], 3), "wall_s": round(w - mark[1], 3),
                               "rss_mb": _rss_mb(), "peak_rss_mb": _peak_rss_mb()}
        peaks.append(row["peak_rss_mb"])
        _reset_peak()  # the next step's peak is its own (when the kernel allows the reset)
        if use_tracemalloc:
            import tracemalloc

            row["py_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
            tracemalloc.reset_peak()
        steps[step] = row
        if step == "rumie" and result.get("enabled"):
            out["honest_dscore"] = result.get("honest_dscore")
        if step == "feu":
            out["feu_status"] = result.get("status")
        mark[0], mark[1] = time.process_time(), time.perf_counter()

    o = run_window(spec, DAY, db_url=db_url, notify=False, on_step=on_step, take_over_monitor=True)
    out["status"] = o.status
    out["error"] = o.error
    out["rows"] = o.steps.get("pull_data", {}).get("rows")
    out["steps"] = steps
    out["total_cpu_s"] = round(sum(s["cpu_s"] for s in steps.values()), 3)
    out["total_wall_s"] = round(sum(s["wall_s"] for s in steps.values()), 3)
    out["process_cpu_s"] = round(time.process_time(), 3)
    out["process_wall_s"] = round(time.perf_counter() - w0, 3)
    out["peak_rss_mb"] = max(peaks)
    out["ru_maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out.update(_rumie_answer(spec))
    return out


def _rumie_answer(spec: str) -> dict[str, Any]:
    """The stored RUMIE rule of the window's latest attempt (from its artifact)."""
    from fairmon.config import load_spec
    from fairmon.pipeline.artifacts import ArtifactStore
    from fairmon.window import window_for

    s = load_spec(Path(spec))
    w = window_for(s, DAY)
    base = Path(s.resolve_path(s.execution.artifact_location)) / s.name / w.key
    attempts = sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime) if base.exists() else []
    if not attempts:
        return {}
    a = ArtifactStore(s.resolve_path(s.execution.artifact_location), s.name, w.key, attempts[-1].name)
    if not a.exists("rumie"):
        return {}
    ev = (a.get_json("rumie") or {}).get("evidence") or {}
    return {"rule": ev.get("rule"), "dscore": ev.get("dscore"), "n_mined": ev.get("n_mined"),
            "n_honest": ev.get("n_honest"), "group_size": ev.get("group_size")}


# ------------------------------------------------------------------------------------ driver


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """One results row: the per-step figures flattened (``<step>_cpu_s`` ...)."""
    flat = {k: v for k, v in row.items() if k != "steps"}
    for step, fig in row.get("steps", {}).items():
        for k, v in fig.items():
            flat[f"{step}_{k}"] = v
    return flat


SUMMARY = ("size", "run", "status", "rows", "total_cpu_s", "total_wall_s", "process_cpu_s", "process_wall_s",
           "peak_rss_mb", "peak_step", "import_cpu_s", "rule", "honest_dscore", "dscore", "n_mined", "n_honest",
           "group_size", "feu_status", "loadavg_after")


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    """The window's headline figures (the per-step ones go to the ``_steps`` file)."""
    steps = row.get("steps", {})
    peak_step = max(steps, key=lambda s: steps[s]["peak_rss_mb"]) if steps else None
    return {k: ({**row, "peak_step": peak_step}).get(k) for k in SUMMARY}


def _step_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"size": row["size"], "run": row["run"], "step": step, **fig} for step, fig in row.get("steps", {}).items()]


def _run_child(spec: Path, db_url: str, *, profile: Path | None, use_tracemalloc: bool, nice: int) -> dict[str, Any]:
    cmd = [sys.executable]
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
    cmd += [str(Path(__file__).resolve()), "--child", str(spec), "--db", db_url]
    if use_tracemalloc:
        cmd.append("--tracemalloc")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                         preexec_fn=(lambda: os.nice(nice)) if nice else None)
    if res.returncode != 0:
        raise RuntimeError(f"window benchmark on {spec} failed:\n{res.stderr[-4000:]}")
    row: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    if profile is not None:
        import pstats

        with open(f"{profile}.txt", "w") as fh:
            st = pstats.Stats(str(profile), stream=fh)
            st.sort_stats("cumulative").print_stats(60)
            st.sort_stats("tottime").print_stats(40)
    return row


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="one 3,000-row window (seconds)")
    ap.add_argument("--out", default=str(HERE / "results" / "window"), help="results folder")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000, 1_000_000])
    ap.add_argument("--db", default=os.environ.get("FAIRMON_BENCH_DB", DEFAULT_DB), help="scratch Postgres URL")
    ap.add_argument("--work", default=None, help="scratch folder for data, registry, artifacts (default: a temp dir)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size (the rows keep every run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default=None, help="results file name (default window / window_smoke)")
    ap.add_argument("--profile", action="store_true", help="cProfile each child (dump + top functions in --out)")
    ap.add_argument("--tracemalloc", action="store_true", help="peak Python allocations per step")
    ap.add_argument("--nice", type=int, default=0, help="niceness of the child processes")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # the child process: the spec path
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(one_window(args.child, args.db, use_tracemalloc=args.tracemalloc), default=str))
        return []
    sizes = [3_000] if args.smoke else args.sizes
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="fairmon-window-bench-"))
    rows: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    try:
        for n in sizes:
            c0, w0 = time.process_time(), time.perf_counter()
            spec = prepare(work, n, seed=args.seed, db_url=args.db)
            prep = {"prepare_cpu_s": round(time.process_time() - c0, 2), "prepare_wall_s": round(time.perf_counter() - w0, 2)}
            for r in range(args.repeat):
                profile = out / f"{n}.prof" if args.profile else None
                row = {"size": n, "run": r, **_run_child(spec, args.db, profile=profile,
                                                          use_tracemalloc=args.tracemalloc, nice=args.nice), **prep}
                row["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
                rows.append(_flat(row))
                summaries.append(_summary(row))
                steps.extend(_step_rows(row))
                print(json.dumps(summaries[-1]), flush=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    name = args.name or ("window_smoke" if args.smoke else "window")
    settings = {"sizes": sizes, "repeat": args.repeat, "seed": args.seed, "smoke": args.smoke, "day": DAY,
                "spec": "monitors/demo.yaml + fairmon.cli.demo.DEMO_SETTINGS, data.files Parquet",
                "db": args.db.rsplit("@", 1)[-1], "profile": args.profile, "tracemalloc": args.tracemalloc,
                "nice": args.nice}
    notes = ("One child process per window running fairmon.pipeline.run_window (what `fairmon run` does). "
             "<step>_cpu_s: process time between the pipeline's step callbacks (all threads); total_cpu_s: sum "
             "of the steps; process_cpu_s: the child's whole CPU time, imports included; peak_rss_mb: the "
             "child's peak resident set (VmHWM, per step with a reset between steps). Acceptance (issue 21): 1M rows <= 30 CPU-s end to end and <= 1.2 GB peak RSS; "
             "10M rows <= 10 minutes and <= 8 GB.")
    write_results(out, name, summaries, settings=settings, notes=notes)
    write_results(out, f"{name}_steps", steps, settings=settings,
                  notes=notes + " One row per step: cpu_s, wall_s, rss_mb (after the step), peak_rss_mb (during it).")
    return rows


if __name__ == "__main__":
    main()
