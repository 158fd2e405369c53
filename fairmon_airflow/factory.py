"""One Airflow DAG per monitor spec, its task graph drawn from the pipeline's step table.

The spec's ``execution.layout`` turns the step table :data:`fairmon.pipeline.table.STEPS` into task
rows (:func:`fairmon.pipeline.layout.task_rows`): ``steps`` makes each step one task of the same id;
``warm`` pulls snapshot and data in one task ``pull``, runs predict, outcome, RUMIE and explain in
one task ``compute`` and diagnose with report in ``diagnose_report`` (one process each: the model
and torch load once). Each row becomes one task in
its task group (``ingest``, ``compute``: outcome / rumie / explain, ``notify``: alert / feu /
followup; group ids are not prefixed, so task ids stay the step names). Edges are drawn only where
data flows: the row's ``upstream`` tasks (their small XCom dicts are passed and ignored: the data
moves through the artifact location); a row without upstream follows ``resolve_window``, and every
task reads the resolved window from that task's XCom. The deferrable ``wait_for_data`` sensor
(:mod:`fairmon_airflow.sensor`) sits before the task that pulls the data; ``persist`` has the monitor's results
Asset (``fairmon://<monitor>/results``) as outlet. ``heavy`` rows go to the spec's queue and pool
with the longer timeout. The run times out before the next window is due, and a ``DeadlineAlert``
fires when ``execution.deadline_s`` passes with the run not done. A new step is one row in the
table, not an edit here.

Parse time stays cheap and side-effect free: the standard library, ``pendulum``, ``airflow.sdk``
and the light spec loader only; no database, network, Variable or Connection access.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, CronDataIntervalTimetable, Param, TaskGroup, dag, task
from airflow.sdk.definitions.callback import AsyncCallback
from airflow.sdk.definitions.deadline import DeadlineAlert, DeadlineReference

from fairmon.config import ENV_MONITORS_DIR, ENV_STRICT_SPECS
from fairmon.errors import ConfigError
from fairmon.pipeline.layout import TaskRow, task_rows
from fairmon.pipeline.table import step as step_row
from fairmon_airflow.dagspec import DagSettings, load_dag_settings, results_asset_uri
from fairmon_airflow.failure import on_deadline_missed, on_failure
from fairmon_airflow.sensor import SENSOR_TASK_ID, WaitForData
from fairmon_airflow.tasks import run_task

__all__ = ["build_dag", "build_dags", "monitors_dir", "ERR_DUPLICATE_ID"]

log = logging.getLogger(__name__)

ERR_DUPLICATE_ID = "fairmon: {path}: DAG id {dag_id!r} is already used by another spec"
_SPEC_GLOBS = ("*.yaml", "*.yml")


def monitors_dir(default: Path, env: Mapping[str, str] = os.environ) -> Path:
    """The specs folder: ``FAIRMON_MONITORS_DIR``, else ``default`` (the DAG file's repo ``monitors/``).

    Examples
    --------
    >>> monitors_dir(Path("monitors"), env={})
    PosixPath('monitors')
    >>> monitors_dir(Path("monitors"), env={"FAIRMON_MONITORS_DIR": "/opt/fairmon/monitors"})
    PosixPath('/opt/fairmon/monitors')
    """
    return Path(env.get(ENV_MONITORS_DIR, str(default)))


def _params(s: DagSettings) -> dict[str, Param]:
    return {
        "notify": Param(True, type="boolean", description="send Slack alerts for this run"),
        "notify_backfill": Param(
            s.notify_backfill, type="boolean", description="notify from backfill runs (spec: alerts.notify_backfill)"
        ),
        "feu": Param(
            False, type="boolean",
            description="FEU retraining candidates for this window even without drift (needs retraining.enabled)",
        ),
    }


_PERSIST = "persist"
_PULL_DATA = "pull_data"


def _timeout_s(s: DagSettings, row: TaskRow) -> int:
    """The task's budget: the sum of its steps' (heavy steps get the longer one)."""
    return sum(s.heavy_timeout_s if step_row(m).heavy else s.light_timeout_s for m in row.steps)


def _task_kwargs(s: DagSettings, row: TaskRow, groups: Mapping[str, TaskGroup]) -> dict[str, Any]:
    timeout_s = _timeout_s(s, row)
    kwargs: dict[str, Any] = {"task_id": row.name, "execution_timeout": timedelta(seconds=timeout_s)}
    if row.heavy:
        kwargs["queue"] = s.heavy_queue
        kwargs["pool"] = s.heavy_pool
    if row.group is not None:
        kwargs["task_group"] = groups[row.group]
    if row.name == _PERSIST:  # downstream DAGs can schedule on a monitor's stored results
        kwargs["outlets"] = [Asset(results_asset_uri(s.monitor))]
    return kwargs


def _step_task(s: DagSettings, row: TaskRow, groups: Mapping[str, TaskGroup]) -> Any:
    """A task that runs ``row``'s steps after its ``upstream`` tasks (their outputs are ignored)."""
    spec_path = str(s.spec_path)
    steps: str | tuple[str, ...] = row.steps[0] if row.steps == (row.name,) else row.steps

    def _step(*upstream: Any) -> dict[str, Any]:
        return run_task(steps, spec_path)

    return task(**_task_kwargs(s, row, groups))(_step)


def _draw_graph(s: DagSettings) -> None:
    """Instantiate the layout's tasks inside the current DAG, edges exactly from ``upstream``."""
    rows = task_rows(s.layout)
    first, *rest = rows
    groups: dict[str, TaskGroup] = {g: TaskGroup(group_id=g, prefix_group_id=False)
              for g in dict.fromkeys(r.group for r in rows) if g is not None}
    window = _step_task(s, first, groups)()
    outputs: dict[str, Any] = {first.name: window}
    for row in rest:
        upstream = [outputs[u] for u in row.upstream] or [window]
        outputs[row.name] = _step_task(s, row, groups)(*upstream)
        # late data: wait for the window's data first (deferrable); a spec that waits for none
        # (``data.max_lateness_s`` 0, the default) gets no sensor task: it would only return "ready"
        # at the cost of a task (~0.3 CPU-s of Airflow's per window, benchmarks/fleet)
        if _PULL_DATA in row.steps and s.max_lateness_s > 0:
            wait = WaitForData(task_id=SENSOR_TASK_ID, spec_path=str(s.spec_path), task_group=groups.get("ingest"),
                               execution_timeout=timedelta(seconds=s.light_timeout_s + s.max_lateness_s))
            window >> wait >> outputs[row.name]


def _deadline(s: DagSettings) -> DeadlineAlert | None:
    """The run's DeadlineAlert: ``execution.deadline_s`` after the run was queued (None: unset)."""
    if s.deadline_s is None:
        return None
    return DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT,
        interval=timedelta(seconds=s.deadline_s),
        callback=AsyncCallback(on_deadline_missed, kwargs={"dag_id": s.dag_id, "deadline_s": s.deadline_s}),
        name=f"{s.dag_id}_window_deadline",
    )


def build_dag(s: DagSettings) -> DAG:
    """Build the DAG of one monitor from its (light) settings."""

    @dag(
        dag_id=s.dag_id,
        description=s.description,
        doc_md=s.doc_md,
        schedule=CronDataIntervalTimetable(s.cron, timezone=s.timezone),
        start_date=pendulum.instance(s.start_date),
        end_date=pendulum.instance(s.end_date) if s.end_date is not None else None,
        catchup=s.catchup,
        max_active_runs=1,
        dagrun_timeout=timedelta(seconds=s.dagrun_timeout_s),
        tags=list(s.tags),
        params=_params(s),
        deadline=_deadline(s),
        default_args={
            "owner": s.owner,
            "retries": s.retries,
            "retry_delay": timedelta(seconds=s.retry_delay_s),
            "retry_exponential_backoff": True,
            "on_failure_callback": on_failure,
        },
    )
    def _monitor_dag() -> None:
        _draw_graph(s)

    built: DAG = _monitor_dag()
    return built


def build_dags(folder: Path, *, skip: Collection[str] = ()) -> dict[str, DAG]:
    """One DAG per ``*.yaml``/``*.yml`` spec in ``folder`` (sorted, so ids are stable).

    ``skip``: spec stems built elsewhere (those with a DAG file of their own,
    :mod:`fairmon_airflow.dagfiles`, where a broken spec is its own import error).

    A broken spec must not take the other monitors down with it: it is logged (file, line and field
    path, from :class:`~fairmon.errors.ConfigError`) and skipped; ``FAIRMON_STRICT_SPECS=1`` turns it
    into an import error of the DAG file instead (what CI's DAG integrity test uses).

    Examples
    --------
    >>> dags = build_dags(Path(__file__).resolve().parents[1] / "monitors")  # the repo's specs
    >>> demo = dags["fairmon_demo"]
    >>> sorted(demo.get_task("persist").upstream_task_ids)  # warm layout: one task computes the window
    ['compute']
    >>> sorted(demo.get_task("pull").upstream_task_ids)  # snapshot and data: one task, after the sensor
    ['resolve_window', 'wait_for_data']
    >>> demo.get_task("compute").execution_timeout > demo.get_task("validate").execution_timeout
    True
    >>> from dataclasses import replace
    >>> demo_spec = Path(__file__).resolve().parents[1] / "monitors" / "demo.yaml"
    >>> steps = build_dag(replace(load_dag_settings(demo_spec), layout="steps"))
    >>> sorted(steps.get_task("persist").upstream_task_ids)  # one task per step: the table's upstream
    ['explain', 'outcome', 'rumie']
    """
    strict = os.environ.get(ENV_STRICT_SPECS, "0") == "1"
    dags: dict[str, DAG] = {}
    for path in sorted(p for pattern in _SPEC_GLOBS for p in folder.glob(pattern)):
        if path.stem in skip:
            continue
        try:
            settings = load_dag_settings(path)
        except ConfigError as exc:
            if strict:
                raise
            log.error("fairmon: skipping monitor spec %s: %s", path, exc)
            continue
        if settings.dag_id in dags:
            msg = ERR_DUPLICATE_ID.format(path=path, dag_id=settings.dag_id)
            if strict:
                raise ConfigError(msg)
            log.error(msg)
            continue
        dags[settings.dag_id] = build_dag(settings)
    return dags
