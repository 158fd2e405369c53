"""The DAG factory draws each monitor's task graph from the step table through the spec's layout
(``steps``: one task per step; ``warm``: the heavy steps of a window in one task), no Airflow DB."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fairmon.pipeline.layout import task_row, task_rows
from fairmon.pipeline.table import HEAVY_STEPS, STEP_ORDER, STEPS
from fairmon_airflow import build_dag, build_dags
from fairmon_airflow.dagspec import DagSettings, load_dag_settings
from fairmon_airflow.failure import on_failure

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "monitors" / "demo.yaml"


@pytest.fixture(scope="module")
def settings() -> DagSettings:
    return load_dag_settings(DEMO)


LAYOUTS = ("steps", "warm")


def _dag(settings: DagSettings, layout: str) -> Any:
    return build_dag(replace(settings, layout=layout))


def test_the_default_layout_is_warm(settings: DagSettings) -> None:
    assert settings.layout == "warm"
    dag = build_dag(settings)
    assert "compute" in dag.task_ids and "rumie" not in dag.task_ids


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_task_per_layout_row_with_its_upstream_edges(settings: DagSettings, layout: str) -> None:
    """Edges only where data flows: the layout's upstream, resolve_window only before rows without one,
    the late-data sensor before the task pulling the data; each row in its task group (ids unprefixed)."""
    dag = _dag(settings, layout)
    rows = task_rows(layout)
    assert set(dag.task_ids) == {r.name for r in rows} | {"wait_for_data"}
    first = rows[0].name
    for row in rows:
        t = dag.get_task(row.name)
        want = set(row.upstream) or ({first} if row.name != first else set())
        want |= {"wait_for_data"} if "pull_data" in row.steps else set()
        assert set(t.upstream_task_ids) == want, row.name
        group = t.task_group.group_id if t.task_group is not None else None
        assert group == row.group, row.name
    assert dag.get_task("wait_for_data").upstream_task_ids == {first}
    assert [a.uri for a in dag.get_task("persist").outlets] == ["fairmon://demo/results"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_sensor_task_when_the_spec_awaits_no_late_data(settings: DagSettings, layout: str) -> None:
    """``data.max_lateness_s`` 0 (the default): the task pulling the data follows resolve_window."""
    assert settings.max_lateness_s > 0  # the demo spec waits an hour
    dag = build_dag(replace(settings, layout=layout, max_lateness_s=0))
    assert "wait_for_data" not in dag.task_ids
    rows = task_rows(layout)
    pull = next(r for r in rows if "pull_data" in r.steps)
    assert dag.get_task(pull.name).upstream_task_ids == (set(pull.upstream) or {rows[0].name})


def test_the_steps_layout_is_the_step_table() -> None:
    rows = task_rows("steps")
    assert [(r.name, r.steps, r.upstream, r.heavy, r.group) for r in rows] == [
        (s.name, (s.name,), s.upstream, s.heavy, s.group) for s in STEPS]


def test_the_warm_layout_keeps_validation_persist_drift_and_notify_apart() -> None:
    rows = {r.name: r for r in task_rows("warm")}
    assert rows["pull"].steps == ("pull_snapshot", "pull_data") and rows["pull"].group == "ingest"
    assert rows["pull"].upstream == () and rows["validate"].upstream == ("pull",)
    assert rows["compute"].steps == ("predict", "outcome", "rumie", "explain") and rows["compute"].heavy
    assert rows["diagnose_report"].steps == ("diagnose", "report")
    for alone in ("validate", "persist", "drift", "alert", "feu", "followup"):
        assert rows[alone].steps == (alone,)
    assert rows["persist"].upstream == ("compute",) and rows["compute"].upstream == ("validate",)
    assert rows["alert"].upstream == ("diagnose_report",) and rows["alert"].group == "notify"
    # every step runs exactly once, in the table's order
    assert [m for r in rows.values() for m in r.steps] == list(STEP_ORDER)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_heavy_rows_get_the_queue_and_the_longer_timeout(settings: DagSettings, layout: str) -> None:
    dag = _dag(settings, layout)
    for row in task_rows(layout):
        t = dag.get_task(row.name)
        assert row.heavy == any(m in HEAVY_STEPS for m in row.steps)
        assert t.queue == (settings.heavy_queue if row.heavy else "default"), t.task_id
        if row.heavy:
            assert t.pool == settings.heavy_pool
        # a task's budget is the sum of its steps' budgets
        want = sum(settings.heavy_timeout_s if m in HEAVY_STEPS else settings.light_timeout_s for m in row.steps)
        assert t.execution_timeout is not None and t.execution_timeout.total_seconds() == want
        callbacks = t.on_failure_callback
        assert t.retries == settings.retries
        assert on_failure in (callbacks if isinstance(callbacks, list) else [callbacks]), t.task_id
    assert dag.max_active_runs == 1 and type(dag.timetable).__name__ == "CronDataIntervalTimetable"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_task_receives_only_its_upstream_outputs(settings: DagSettings, layout: str) -> None:
    dag = _dag(settings, layout)
    first, *rest = task_rows(layout)
    for row in rest:
        args = getattr(dag.get_task(row.name), "op_args")  # noqa: B009 - a PythonOperator's, not BaseOperator's
        assert [a.operator.task_id for a in args] == (list(row.upstream) or [first.name]), row.name


def test_a_warm_task_runs_its_steps_through_run_steps(settings: DagSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task body hands a warm task's steps to ``fairmon.pipeline.run_steps`` in one call, and a
    single step to ``run_step`` (the Airflow context and connections faked)."""
    import fairmon.pipeline as pipeline
    import fairmon_airflow.tasks as tasks

    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(tasks, "get_current_context", lambda: {"params": {}})
    monkeypatch.setattr(tasks, "resolved_window", lambda ctx: {"start": "s", "end": "e", "attempt_id": "a"})
    monkeypatch.setattr(tasks, "notify_of", lambda ctx: True)
    monkeypatch.setattr(tasks, "try_number", lambda ctx: 2)
    monkeypatch.setattr(tasks, "feu_requested", lambda ctx: True)
    monkeypatch.setattr(tasks, "db_url", lambda: "postgresql://db")
    monkeypatch.setattr(tasks, "slack_token", lambda: None)
    monkeypatch.setattr(tasks, "source_url", lambda spec: "postgresql://source")
    monkeypatch.setattr(pipeline, "run_steps", lambda steps, spec, window, **kw: calls.append(("many", (steps, kw))) or {})
    monkeypatch.setattr(pipeline, "run_step", lambda step, spec, window, **kw: calls.append(("one", (step, kw))) or {})
    tasks.run_task(task_row("warm", "compute").steps, str(DEMO))
    tasks.run_task("persist", str(DEMO))
    (kind, (steps, kw)), (kind2, (step, kw2)) = calls
    assert kind == "many" and steps == ("predict", "outcome", "rumie", "explain")
    assert kw["source_url"] == "postgresql://source" and kw["attempt"] == 2 and kw["feu"] is False  # outcome reads SQL
    assert kind2 == "one" and step == "persist" and kw2["source_url"] is None


def test_pool_env_and_spec_and_run_timeout_below_the_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(DEMO.read_text() + "\n")
    s = load_dag_settings(spec)
    assert s.dagrun_timeout_s < 86_400  # daily windows, max_active_runs=1: never blocks the next run
    monkeypatch.setenv("FAIRMON_HEAVY_POOL", "fairmon_heavy")
    assert load_dag_settings(spec).heavy_pool == "fairmon_heavy"
    dag = build_dag(load_dag_settings(spec))
    assert dag.get_task("compute").pool == "fairmon_heavy" and dag.get_task("validate").pool == "default_pool"
    steps = _dag(load_dag_settings(spec), "steps")
    assert steps.get_task("rumie").pool == "fairmon_heavy" and steps.get_task("outcome").pool == "default_pool"


def test_build_dags_skips_a_broken_spec_and_a_duplicate_id(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(DEMO.read_text())
    (tmp_path / "b.yml").write_text(DEMO.read_text())  # same monitor name: same DAG id
    (tmp_path / "c.yaml").write_text("spec_version: 1\nidentity: {name: bad}\n")
    assert list(build_dags(tmp_path)) == ["fairmon_demo"]
