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

from fairmon._device import thread_settings
from fairmon._logs import quiet_third_party

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
    "jinja2",
    "fairmon.pipeline.warm",
    "fairmon.pipeline.steps",
    "fairmon_airflow.tasks",
    "fairmon_airflow.factory",
)


def preload(modules: tuple[str, ...] = PRELOAD) -> dict[str, float]:
    """Import ``modules`` (the ones not installed are skipped); returns the seconds each took.

    Examples
    --------
    >>> sorted(preload(("json", "not_a_module_xyz")))
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
    gc.freeze()  # keep the preloaded objects out of the forked children's GC passes (fewer copied pages)
    return took


#: seconds per preloaded module in this process (empty with FAIRMON_NO_PRELOAD=1)
PRELOADED: dict[str, float] = {} if os.environ.get(ENV_NO_PRELOAD) == "1" else preload()
log.info("fairmon preload: %d modules in %.1f s", len(PRELOADED), sum(PRELOADED.values()))
