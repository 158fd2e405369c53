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
    """Edges only where data flows: the table's upstream, resolve_window only before rows without one,
    the late-data sensor before pull_data; each row in its task group (ids unprefixed)."""
    dag = build_dag(settings)
    assert set(dag.task_ids) == set(STEP_ORDER) | {"wait_for_data"}
    first = STEPS[0].name
    for row in STEPS:
        t = dag.get_task(row.name)
        want = set(row.upstream) or ({first} if row.name != first else set())
        want |= {"wait_for_data"} if row.name == "pull_data" else set()
        assert set(t.upstream_task_ids) == want, row.name
        group = t.task_group.group_id if t.task_group is not None else None
        assert group == row.group, row.name
    assert dag.get_task("wait_for_data").upstream_task_ids == {first}
    assert [a.uri for a in dag.get_task("persist").outlets] == ["fairmon://demo/results"]


def test_heavy_rows_get_the_queue_and_the_longer_timeout(settings: DagSettings) -> None:
    dag = build_dag(settings)
    for t in (dag.get_task(r.name) for r in STEPS):
        heavy = t.task_id in HEAVY_STEPS
        assert t.queue == (settings.heavy_queue if heavy else "default"), t.task_id
        if heavy:
            assert t.pool == settings.heavy_pool
        want = settings.heavy_timeout_s if heavy else settings.light_timeout_s
        assert t.execution_timeout is not None and t.execution_timeout.total_seconds() == want
        callbacks = t.on_failure_callback
        assert t.retries == settings.retries
        assert on_failure in (callbacks if isinstance(callbacks, list) else [callbacks]), t.task_id
    assert dag.max_active_runs == 1 and type(dag.timetable).__name__ == "CronDataIntervalTimetable"


def test_a_step_receives_only_its_upstream_outputs(settings: DagSettings) -> None:
    dag = build_dag(settings)
    for row in STEPS[1:]:
        args = getattr(dag.get_task(row.name), "op_args")  # noqa: B009 - a PythonOperator's, not BaseOperator's
        assert [a.operator.task_id for a in args] == (list(row.upstream) or [STEPS[0].name]), row.name


def test_pool_env_and_spec_and_run_timeout_below_the_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(DEMO.read_text() + "\n")
    s = load_dag_settings(spec)
    assert s.dagrun_timeout_s < 86_400  # daily windows, max_active_runs=1: never blocks the next run
    monkeypatch.setenv("FAIRMON_HEAVY_POOL", "fairmon_heavy")
    assert load_dag_settings(spec).heavy_pool == "fairmon_heavy"
    dag = build_dag(load_dag_settings(spec))
    assert dag.get_task("rumie").pool == "fairmon_heavy" and dag.get_task("outcome").pool == "default_pool"


def test_build_dags_skips_a_broken_spec_and_a_duplicate_id(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(DEMO.read_text())
    (tmp_path / "b.yml").write_text(DEMO.read_text())  # same monitor name: same DAG id
    (tmp_path / "c.yaml").write_text("spec_version: 1\nidentity: {name: bad}\n")
    assert list(build_dags(tmp_path)) == ["fairmon_demo"]
