"""DAG integrity: every monitor spec becomes a DAG with the production policies, and parsing is light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
MONITORS = REPO / "monitors"
#: must never load while the DAG processor parses our DAG file
HEAVY = ["torch", "pandas", "numpy", "shap", "lime", "pymoo", "great_expectations", "sklearn", "matplotlib"]
HEAVY_TASKS = {"predict", "rumie", "explain", "diagnose", "feu"}

pytestmark = pytest.mark.airflow


def _airflow_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        FAIRMON_MONITORS_DIR=str(MONITORS),
        FAIRMON_STRICT_SPECS="1",
    )
    return env


_BAG_PROBE = r"""
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=__import__("os").environ["AIRFLOW__CORE__DAGS_FOLDER"])
out = {"errors": {k: str(v) for k, v in bag.import_errors.items()}, "dags": {}}
for dag_id, d in bag.dags.items():
    out["dags"][dag_id] = {
        "timetable": type(d.timetable).__name__,
        "max_active_runs": d.max_active_runs,
        "tags": sorted(d.tags),
        "doc_md": bool(d.doc_md),
        "catchup": d.catchup,
        "params": {k: d.params[k] for k in d.params},
        "dagrun_timeout": d.dagrun_timeout.total_seconds() if d.dagrun_timeout else None,
        "tasks": {t.task_id: {"queue": t.queue, "retries": t.retries,
                              "timeout": t.execution_timeout.total_seconds() if t.execution_timeout else None,
                              "on_failure": bool(t.on_failure_callback),
                              "upstream": sorted(t.upstream_task_ids)} for t in d.tasks},
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("dagbag")
    proc = subprocess.run(
        [sys.executable, "-c", _BAG_PROBE], env=_airflow_env(tmp), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_spec_imports_as_a_dag(bag: dict) -> None:
    from fairmon.config import load_spec

    assert bag["errors"] == {}
    expected = {f"fairmon_{load_spec(p).name}" for p in sorted(MONITORS.glob("*.yaml"))}
    assert expected and set(bag["dags"]) == expected


def _check_policies(dag_id: str, d: dict, spec: Any) -> None:
    from fairmon.pipeline.layout import task_of_step, task_rows

    layout = spec.execution.layout
    rows = {r.name: r for r in task_rows(layout)}
    owner = task_of_step(layout)
    assert d["timetable"] == "CronDataIntervalTimetable"  # real data intervals on Airflow 3
    assert d["max_active_runs"] == 1
    assert d["doc_md"] and "fairmon" in d["tags"] and f"monitor:{spec.name}" in d["tags"]
    assert d["dagrun_timeout"] and d["dagrun_timeout"] > 0
    assert set(d["tasks"]) == set(rows) | ({"wait_for_data"} if spec.data.max_lateness_s else set())
    assert d["dagrun_timeout"] < spec.schedule.interval_lengths[0].total_seconds()  # before the next run is due
    for task_id, t in d["tasks"].items():
        assert t["retries"] == spec.execution.retries
        assert t["timeout"] and t["timeout"] > 0
        assert t["on_failure"], task_id
        heavy = task_id in rows and bool(HEAVY_TASKS & set(rows[task_id].steps))
        want_queue = spec.execution.queue if heavy else "default"
        assert t["queue"] == want_queue, (dag_id, task_id)
    # FEU on demand: trigger with conf {"feu": true}; off by default
    assert d["params"]["feu"] is False and d["params"]["notify"] is True
    # persist waits for all three computations; the diagnosis (issue 19) follows the drift decision
    # and precedes the report, which exists before the alert linking to it; feu only after the alert
    up = {k: set(v["upstream"]) for k, v in d["tasks"].items()}
    assert {owner[s] for s in ("outcome", "rumie", "explain")} <= up["persist"]
    assert owner["drift"] in up[owner["diagnose"]] or owner["diagnose"] == owner["drift"]
    assert owner["diagnose"] in up[owner["report"]] or owner["diagnose"] == owner["report"]
    assert owner["report"] in up["alert"] and "alert" in up["feu"]


def test_dags_have_the_policies(bag: dict) -> None:
    from fairmon.config import load_spec

    specs = {f"fairmon_{s.name}": s for s in (load_spec(p) for p in MONITORS.glob("*.yaml"))}
    for dag_id, d in bag["dags"].items():
        _check_policies(dag_id, d, specs[dag_id])


def test_both_layouts_import_with_the_policies(tmp_path: Path) -> None:
    """The shipped specs use the default (warm); a copy with ``execution.layout: steps`` gets one task
    per step, with the same policies."""
    import yaml

    from fairmon.config import load_spec

    mon, dags = tmp_path / "monitors", tmp_path / "dags"
    mon.mkdir()
    for layout in ("steps", "warm"):
        doc = yaml.safe_load((MONITORS / "demo.yaml").read_text())
        doc["identity"]["name"] = f"demo_{layout}"
        doc["execution"]["layout"] = layout
        (mon / f"demo_{layout}.yaml").write_text(yaml.safe_dump(doc))
    gen = subprocess.run([sys.executable, "-m", "fairmon_airflow.dagfiles", str(mon), str(dags)],
                         env=_airflow_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stderr[-3000:]
    env = _airflow_env(tmp_path) | {"FAIRMON_MONITORS_DIR": str(mon), "AIRFLOW__CORE__DAGS_FOLDER": str(dags)}
    proc = subprocess.run([sys.executable, "-c", _BAG_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["errors"] == {} and sorted(out["dags"]) == ["fairmon_demo_steps", "fairmon_demo_warm"]
    for layout in ("steps", "warm"):
        d = out["dags"][f"fairmon_demo_{layout}"]
        _check_policies(f"fairmon_demo_{layout}", d, load_spec(mon / f"demo_{layout}.yaml"))
    assert "rumie" in out["dags"]["fairmon_demo_steps"]["tasks"]
    assert "rumie" not in out["dags"]["fairmon_demo_warm"]["tasks"]
    assert out["dags"]["fairmon_demo_warm"]["tasks"]["persist"]["upstream"] == ["compute"]


def test_gpu_queue_from_spec(bag: dict) -> None:
    queues = {d: t["compute"]["queue"] for d, t in ((k, v["tasks"]) for k, v in bag["dags"].items())}
    assert "gpu" in queues.values(), queues  # at least one shipped spec routes heavy steps to GPU workers


def test_parsing_a_dag_file_loads_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import runpy, sys, json\n"
        f"runpy.run_path({str(DAGS / 'fairmon_monitors.py')!r})\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], env=_airflow_env(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_broken_spec_is_its_own_import_error(tmp_path: Path) -> None:
    """One DAG file per spec: the broken spec is the import error of its own file, named with the
    spec's file and fields; the good monitor's DAG is still there (issue 20, req 6)."""
    mon, dags = tmp_path / "monitors", tmp_path / "dags"
    mon.mkdir()
    (mon / "good.yaml").write_text((MONITORS / "demo.yaml").read_text())
    (mon / "bad.yaml").write_text("spec_version: 1\nidentity: {name: bad}\n")
    gen = subprocess.run([sys.executable, "-m", "fairmon_airflow.dagfiles", str(mon), str(dags)],
                         env=_airflow_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stderr[-3000:]
    (dags / "fairmon_monitors.py").write_text((DAGS / "fairmon_monitors.py").read_text())
    env = _airflow_env(tmp_path) | {"FAIRMON_MONITORS_DIR": str(mon), "AIRFLOW__CORE__DAGS_FOLDER": str(dags)}
    proc = subprocess.run([sys.executable, "-c", _BAG_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert list(out["dags"]) == ["fairmon_demo"]
    assert list(out["errors"]) == [str(dags / "monitor_bad.py")]
    err = out["errors"][str(dags / "monitor_bad.py")]
    assert "ConfigError" in err and "bad.yaml" in err and "schedule: missing required field" in err


def test_shipped_dag_files_are_up_to_date(tmp_path: Path) -> None:
    from fairmon_airflow.dagfiles import write_dag_files

    fresh = {p.name: p.read_text() for p in write_dag_files(MONITORS, tmp_path)}
    assert {n: (DAGS / n).read_text() for n in fresh} == fresh
    assert sorted(p.name for p in DAGS.glob("monitor_*.py")) == sorted(fresh)


def test_a_spec_without_a_dag_file_is_still_built_and_a_broken_one_skipped(tmp_path: Path) -> None:
    mon = tmp_path / "monitors"
    mon.mkdir()
    (mon / "other.yaml").write_text((MONITORS / "demo.yaml").read_text())
    (mon / "worse.yaml").write_text("spec_version: 1\nidentity: {name: bad}\n")
    env = _airflow_env(tmp_path) | {"FAIRMON_MONITORS_DIR": str(mon), "FAIRMON_STRICT_SPECS": "0"}
    probe = f"import runpy; g = runpy.run_path({str(DAGS / 'fairmon_monitors.py')!r}); print(sorted(k for k in g if k.startswith('fairmon_')))"
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "['fairmon_demo']"
    assert "worse.yaml" in proc.stdout + proc.stderr


def test_the_repo_demo_spec_is_at_demo_size() -> None:
    """The DAG of monitors/demo.yaml computes what ``fairmon demo`` computes (issue 20 req 1: at full
    size a window took 31 min under the scheduler)."""
    from fairmon.cli.demo import DEMO_SETTINGS
    from fairmon.config import load_spec

    doc = load_spec(MONITORS / "demo.yaml").model_dump(by_alias=True)
    for key, want in DEMO_SETTINGS.items():
        node = doc
        for part in key.split("."):
            node = node[part]
        assert (list(node) if isinstance(want, list) else node) == want, key
