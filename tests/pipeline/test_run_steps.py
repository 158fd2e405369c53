"""Several steps of one window in one process (the warm layout, issue 21 req 5): the same stored
results as one process per step, the attempt semantics kept for every step inside the task.

Runs the warm layout's tasks (:func:`fairmon.pipeline.layout.task_rows`) as Airflow would, each
task with the small dict ``resolve_window`` returned, against a fresh Postgres database.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "pipeline") not in sys.path:
    sys.path.insert(0, str(_TESTS / "pipeline"))

from pipeline_demo_setup import SMALL, prepare_demo  # noqa: E402

from fairmon.errors import AttemptSupersededError, ConfigError  # noqa: E402
from fairmon.pipeline import run_step, run_steps  # noqa: E402
from fairmon.pipeline.layout import task_row, task_rows  # noqa: E402
from fairmon.store import open_store  # noqa: E402

pytestmark = pytest.mark.postgres

CHEAP: dict[str, Any] = {**SMALL, "rumie.iterations": 60, "retraining.enabled": False}
RESULTS = {
    "runs": "SELECT window_start, status, model_version, n_rows, error FROM runs",
    "metrics": "SELECT metric, attribute, group_key, value, ci_low, ci_high, n FROM metrics",
    "evidence": "SELECT method, dscore, honest_dscore, p_value, rules_text, group_size FROM evidence",
    "explanation_metrics": "SELECT family, metric, explainer, group_key, value, n FROM explanation_metrics",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("warm") / "demo"
    spec, manifest = prepare_demo(out, windows=3, rows=600, drift_window=2, overrides=CHEAP)
    return spec, manifest["windows"][0]["start"]


def _snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as c:
            return {t: sorted((tuple(round(v, 9) if isinstance(v, float) else v for v in r)
                               for r in c.execute(sa.text(q))), key=repr) for t, q in RESULTS.items()}
    finally:
        eng.dispose()


def _run_layout(layout: str, spec: Path, day: str, url: str) -> dict[str, Any]:
    first, *rest = task_rows(layout)
    window = run_step(first.steps[0], spec, {"logical_date": day}, db_url=url, notify=False)
    out = {}
    for row in rest:  # one call per task: a task's steps share one process and one context
        out[row.name] = (run_step(row.steps[0], spec, window, db_url=url, notify=False) if len(row.steps) == 1
                         else run_steps(row.steps, spec, window, db_url=url, notify=False))
    return out


def test_warm_layout_stores_what_one_task_per_step_stores(demo: tuple[Path, str], fresh_database_url: str,
                                                           pg_admin_url: str) -> None:
    spec, day = demo
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    warm = _run_layout("warm", spec, day, fresh_database_url)
    assert list(warm["compute"]["steps"]) == ["predict", "outcome", "rumie", "explain"]
    warm_rows = _snapshot(fresh_database_url)
    assert [r[1] for r in warm_rows["runs"]] == ["succeeded"] and warm_rows["evidence"]
    _run_layout("steps", spec, day, fresh_database_url)  # the same window again, one task per step
    assert _snapshot(fresh_database_url) == warm_rows


def test_a_superseded_attempt_stops_at_the_first_step_of_a_warm_task(demo: tuple[Path, str],
                                                                      fresh_database_url: str) -> None:
    spec, day = demo
    url = fresh_database_url
    open_store(url, upgrade=True).engine.dispose()
    old = run_step("resolve_window", spec, {"logical_date": day}, db_url=url, notify=False)
    for name in ("pull_snapshot", "pull_data", "validate"):
        run_step(name, spec, old, db_url=url, notify=False)
    new = run_step("resolve_window", spec, {"logical_date": day}, db_url=url, notify=False)  # takes over
    assert new["attempt_id"] != old["attempt_id"]
    with pytest.raises(AttemptSupersededError):
        run_steps(task_row("warm", "compute").steps, spec, old, db_url=url, notify=False)
    store = open_store(url)
    try:
        run = store.get_run("demo", *_bounds(new))
        assert run is not None and run.status == "running" and run.attempt_id == new["attempt_id"]
    finally:
        store.engine.dispose()


def test_a_failing_step_inside_a_warm_task_marks_the_run_failed_naming_it(demo: tuple[Path, str],
                                                                          fresh_database_url: str) -> None:
    spec, day = demo
    url = fresh_database_url
    open_store(url, upgrade=True).engine.dispose()
    window = run_step("resolve_window", spec, {"logical_date": day}, db_url=url, notify=False)
    # validate never ran: predict is the first step of the warm task and misses its input artifact
    run_step("pull_snapshot", spec, window, db_url=url, notify=False)
    with pytest.raises(Exception) as err:  # noqa: PT011 - the missing artifact's own error
        run_steps(["predict", "outcome"], spec, window, db_url=url, notify=False)
    store = open_store(url)
    try:
        run = store.get_run("demo", *_bounds(window))
        assert run is not None and run.status == "failed" and (run.error or "").startswith("predict: "), run
    finally:
        store.engine.dispose()
    assert type(err.value).__name__ == "MissingArtifactError"


def test_run_steps_refuses_what_is_not_a_task() -> None:
    for bad in ([], ["resolve_window", "pull_snapshot"], ["rumie", "predict"], ["predict", "predict"], ["nope"]):
        with pytest.raises(ConfigError):
            run_steps(bad, "monitors/demo.yaml", {})


def _bounds(window: dict[str, Any]) -> tuple[Any, Any]:
    from datetime import datetime

    return datetime.fromisoformat(window["start"]), datetime.fromisoformat(window["end"])
