"""The Celery worker preload (issue 21 req 5): heavy modules imported once in the worker are in every
task process it forks (Airflow 3's supervisor forks on Linux), and Celery's ``imports`` setting,
given through Airflow's ``[celery] extra_celery_config``, names the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[2]

_FORK_PROBE = r"""
import json, os, sys, time
import fairmon_airflow.preload as p
r, w = os.pipe()
pid = os.fork()
if pid == 0:  # what the task SDK supervisor does for each task
    t0 = time.perf_counter()
    import fairmon.pipeline.warm, great_expectations, torch  # noqa: F401
    out = {"mods": sorted(m for m in ("torch", "great_expectations", "sklearn", "fairmon.pipeline.steps")
                          if m in sys.modules), "import_s": time.perf_counter() - t0,
           "threads": torch.get_num_threads() > 0}
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 10000).decode())
print(json.dumps(sorted(p.PRELOADED)))
"""


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def test_a_forked_task_process_starts_with_the_heavy_modules_loaded() -> None:
    proc = subprocess.run([sys.executable, "-c", _FORK_PROBE], env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    child, preloaded = (json.loads(x) for x in proc.stdout.strip().splitlines()[-2:])
    assert child["mods"] == ["fairmon.pipeline.steps", "great_expectations", "sklearn", "torch"]
    assert child["import_s"] < 0.05  # already imported: a dictionary look-up, not seconds of imports
    assert child["threads"]
    assert {"torch", "great_expectations", "fairmon.pipeline.warm"} <= set(preloaded)


def test_no_preload_imports_nothing_heavy() -> None:
    probe = ("import sys, fairmon_airflow.preload as p; "
             "print(p.PRELOADED, 'torch' in sys.modules, 'great_expectations' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(FAIRMON_NO_PRELOAD="1"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-3:] == ["{}", "False", "False"]


def test_the_celery_app_imports_the_preload_module(tmp_path: Path) -> None:
    pytest.importorskip("airflow.providers.celery")
    probe = ("from airflow.providers.celery.executors.celery_executor_utils import app; "
             "print(list(app.conf.imports))")
    env = _env(AIRFLOW_HOME=str(tmp_path / "airflow"), AIRFLOW__CORE__EXECUTOR="CeleryExecutor",
               AIRFLOW__CELERY__EXTRA_CELERY_CONFIG=json.dumps({"imports": ["fairmon_airflow.preload"]}))
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "['fairmon_airflow.preload']"
