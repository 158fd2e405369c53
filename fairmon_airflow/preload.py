"""Preload fairmon's heavy modules in a Celery worker, so every task process it forks starts warm.

Airflow 3's Celery worker runs each task through the task SDK supervisor, which *forks* the task
process from the worker's pool process (``os.fork`` on Linux, no exec): whatever the worker imported
before forking is already in the task's memory (copy-on-write). Importing this module in the worker's
main process, before Celery forks its pool, makes torch, scikit-learn, Great Expectations, pandas,
SQLAlchemy and fairmon's steps imported once per worker instead of once per task. Turn it on with
Celery's ``imports`` setting::

    AIRFLOW__CELERY__EXTRA_CELERY_CONFIG='{"imports": ["fairmon_airflow.preload"]}'

(``docker/compose.yaml`` sets it for the workers; the scheduler and API server ignore it). Only
imports happen here: no thread pool, database connection or CUDA context is created before the fork
(torch's OpenMP settings are applied first, as a step would). Restart the workers after upgrading
fairmon, as with any preloaded code. Measured in ``benchmarks/fleet``.

Examples
--------
>>> "torch" in PRELOAD and "great_expectations" in PRELOAD
True
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from fairmon._device import thread_pools, thread_settings
from fairmon._logs import quiet_third_party
from fairmon.config import ENV_MONITORS_DIR

__all__ = ["PRELOAD", "preload", "ENV_NO_PRELOAD", "PRELOADED"]

log = logging.getLogger(__name__)

#: set to 1 to keep this module from importing anything (a worker that must stay small)
ENV_NO_PRELOAD = "FAIRMON_NO_PRELOAD"

#: what a window's steps import, heaviest first; each is imported once per worker
PRELOAD: tuple[str, ...] = (
    "torch",
    "great_expectations",
    "sklearn.linear_model",
    "sklearn.metrics",
    "scipy.stats",
    "shap",
    "lime.lime_tabular",
    "pandas",
    "pyarrow.parquet",
    "sqlalchemy",
    "psycopg2",
    "matplotlib",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",  # the report's charts (PNG through PIL)
    "PIL.Image",
    "jinja2",
    "fsspec",
    "fairmon.pipeline.warm",
    "fairmon.pipeline.steps",
    "fairmon_airflow.tasks",
    "fairmon_airflow.factory",
    # what every task imports on its first connection lookup (fairmon_db): 0.14 CPU-s per task otherwise
    "airflow.providers.postgres.hooks.postgres",
)


def _warm_up() -> dict[str, float]:
    """fairmon's first-use costs (:func:`fairmon.pipeline.warm.warm_up`), after the imports; every spec
    of ``FAIRMON_MONITORS_DIR`` parsed into :func:`fairmon.config.load_spec`'s cache (a task loads its
    spec two or three times, 0.02-0.04 CPU-s each otherwise); and one monitor's DAG built (the code
    paths every task's DAG-file parse takes: 0.07 CPU-s the first time in a process, 0.015 after)."""
    warm: Callable[[], dict[str, float]] = importlib.import_module("fairmon.pipeline.warm").warm_up
    took = {f"warm_up:{k}": v for k, v in warm().items()}
    t0 = time.perf_counter()
    thread_pools()  # the BLAS libraries found once, before the fork (every heavy step limits their threads)
    took["warm_up:thread_pools"] = round(time.perf_counter() - t0, 3)
    folder = os.environ.get(ENV_MONITORS_DIR)
    specs = sorted(Path(folder).glob("*.yaml")) if folder else []
    t0 = time.perf_counter()
    load_spec = importlib.import_module("fairmon.config").load_spec
    for path in specs:  # parsed once here, before the fork: every task's loads of its spec hit this
        try:
            load_spec(path)
        except Exception:  # noqa: BLE001, S112 - a broken spec is its own DAG file's import error
            continue
    took["warm_up:specs"] = round(time.perf_counter() - t0, 3)
    if specs:
        t0 = time.perf_counter()
        factory = importlib.import_module("fairmon_airflow.factory")
        dagspec = importlib.import_module("fairmon_airflow.dagspec")
        factory.build_dag(dagspec.load_dag_settings(specs[0]))
        took["warm_up:dag"] = round(time.perf_counter() - t0, 3)
    return took


def preload(modules: tuple[str, ...] = PRELOAD, *, warm: bool = True) -> dict[str, float]:
    """Import ``modules`` (the ones not installed are skipped), then (``warm``) pay fairmon's first-use
    costs; returns the seconds each part took.

    Examples
    --------
    >>> sorted(preload(("json", "not_a_module_xyz"), warm=False))
    ['json']
    """
    thread_settings()  # OpenMP settings before torch loads, as a step sets them
    quiet_third_party()  # Great Expectations' import-time INFO lines stay out of the worker log
    os.environ.setdefault("MPLBACKEND", "Agg")  # workers have no display
    took: dict[str, float] = {}
    for name in modules:
        t0 = time.perf_counter()
        try:
            importlib.import_module(name)
        except ImportError as exc:
            log.warning("fairmon preload: %s not imported: %s", name, exc)
            continue
        took[name] = round(time.perf_counter() - t0, 3)
    if warm:
        try:
            took.update(_warm_up())
        except Exception as exc:  # noqa: BLE001 - a worker must start even if a warm-up fails
            log.warning("fairmon preload: warm-up failed (tasks pay their first-use costs): %s", exc)
    gc.freeze()  # keep the preloaded objects out of the forked children's GC passes (fewer copied pages)
    return took


#: seconds per preloaded module in this process (empty with FAIRMON_NO_PRELOAD=1)
PRELOADED: dict[str, float] = {} if os.environ.get(ENV_NO_PRELOAD) == "1" else preload()
log.info("fairmon preload: %d modules in %.1f s", len(PRELOADED), sum(PRELOADED.values()))
