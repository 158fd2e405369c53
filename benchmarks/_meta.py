"""Shared benchmark helpers: machine description, git commit, results files (markdown + CSV + JSON).

Every results file records the commit, the settings and the machine (cores, threads, load average), so
numbers can be compared across runs and machines.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["machine_info", "git_commit", "write_results"]

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def machine_info() -> dict[str, Any]:
    """Cores, platform, Python, thread settings and the 1/5/15-min load average."""
    info: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    for var in _THREAD_VARS:
        if os.environ.get(var):
            info[var] = os.environ[var]
    if "torch" in sys.modules:  # only report torch when the benchmark uses it
        torch = sys.modules["torch"]
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        info["cuda"] = bool(torch.cuda.is_available())
        if info["cuda"]:
            info["gpu"] = torch.cuda.get_device_name(0)
    return info


def git_commit() -> str:
    """``HEAD`` commit of the repository (``+dirty`` when tracked files other than benchmark results
    have changes), or ``unknown``."""
    root = Path(__file__).resolve().parents[1]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            # results files written by other benchmark runs are not code: they do not make a run dirty
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/*/results/**"],
            cwd=root, capture_output=True, text=True,
        ).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def write_results(
    out_dir: str | Path,
    name: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    settings: Mapping[str, Any],
    notes: str = "",
) -> dict[str, Path]:
    """Write ``<name>.md``, ``<name>.csv`` and ``<name>.json`` into ``out_dir``; returns their paths.

    The JSON holds everything (commit, settings, machine, rows); the markdown is for reading.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "name": name,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "settings": dict(settings),
        "machine": machine_info(),
    }
    paths = {"json": out / f"{name}.json", "csv": out / f"{name}.csv", "md": out / f"{name}.md"}
    paths["json"].write_text(
        json.dumps({**meta, "rows": [dict(r) for r in rows]}, indent=1, default=str) + "\n"
    )
    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with paths["csv"].open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    md = [f"# {name}", "", f"- commit: `{meta['commit']}`", f"- created: {meta['created_at']}"]
    md += [
        f"- machine: {json.dumps(meta['machine'])}",
        f"- settings: {json.dumps(meta['settings'], default=str)}",
        "",
    ]
    if notes:
        md += [notes.strip(), ""]
    if rows:
        md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        md += ["| " + " | ".join(_cell(r.get(c, "")) for c in cols) + " |" for r in rows]
    paths["md"].write_text("\n".join(md) + "\n")
    return paths
