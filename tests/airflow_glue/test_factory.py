"""The DAG factory draws each monitor's task graph from the step table (no Airflow DB)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairmon.pipeline.table import HEAVY_STEPS, STEP_ORDER, STEPS
from fairmon_airflow import build_dag, build_dags
from fairmon_airflow.dagspec import DagSettings, load_dag_settings
from fairmon_airflow.failure import on_failure

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "monitors" / "demo.yaml"


@pytest.fixture(scope="module")
def settings() -> DagSettings:
    return load_dag_settings(DEMO)


def test_one_task_per_table_row_with_its_upstream_edges(settings: DagSettings) -> None:
    dag = build_dag(settings)
    assert set(dag.task_ids) == set(STEP_ORDER)
    first = STEPS[0].name
    for row in STEPS:
        t = dag.get_task(row.name)
        want = set(row.upstream) | ({first} if row.name != first else set())
        assert set(t.upstream_task_ids) == want, row.name


def test_heavy_rows_get_the_queue_and_the_longer_timeout(settings: DagSettings) -> None:
    dag = build_dag(settings)
    for t in dag.tasks:
        heavy = t.task_id in HEAVY_STEPS
        assert t.queue == (settings.heavy_queue if heavy else "default"), t.task_id
        want = settings.heavy_timeout_s if heavy else settings.light_timeout_s
        assert t.execution_timeout is not None and t.execution_timeout.total_seconds() == want
        callbacks = t.on_failure_callback
        assert t.retries == settings.retries
        assert on_failure in (callbacks if isinstance(callbacks, list) else [callbacks]), t.task_id
    assert dag.max_active_runs == 1 and type(dag.timetable).__name__ == "CronDataIntervalTimetable"


def test_every_step_receives_the_resolved_window_first(settings: DagSettings) -> None:
    dag = build_dag(settings)
    for row in STEPS[1:]:
        args = getattr(dag.get_task(row.name), "op_args")  # noqa: B009 - a PythonOperator's, not BaseOperator's
        assert args[0].operator.task_id == STEPS[0].name, row.name
        assert [a.operator.task_id for a in args[1:]] == list(row.upstream), row.name


def test_build_dags_skips_a_broken_spec_and_a_duplicate_id(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(DEMO.read_text())
    (tmp_path / "b.yml").write_text(DEMO.read_text())  # same monitor name: same DAG id
    (tmp_path / "c.yaml").write_text("spec_version: 1\nidentity: {name: bad}\n")
    assert list(build_dags(tmp_path)) == ["fairmon_demo"]
