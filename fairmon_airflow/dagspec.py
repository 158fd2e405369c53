"""What a DAG file needs from a monitor spec, and nothing heavier (imported at DAG parse time).

Only :mod:`fairmon.config` (pydantic + yaml), the step table and the standard library load here, so the
scheduler's DAG processor parses one DAG per spec in milliseconds and never touches a database or the
network.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from fairmon.config import ENV_HEAVY_POOL, ENV_HEAVY_QUEUE, MonitorSpec, load_spec
from fairmon.pipeline.table import HEAVY_STEPS, STEPS

__all__ = ["DagSettings", "dag_settings", "load_dag_settings", "results_asset_uri", "DAG_ID_PREFIX", "DEFAULT_POOL"]

DAG_ID_PREFIX = "fairmon_"
#: Airflow's own pool, for heavy tasks of a spec without ``execution.pool`` (and no env override)
DEFAULT_POOL = "default_pool"


@dataclass(frozen=True)
class DagSettings:
    """Airflow-facing settings of one monitor (plain values; no Airflow types)."""

    spec_path: Path
    monitor: str
    dag_id: str
    description: str
    doc_md: str
    cron: str
    timezone: str
    start_date: dt.datetime
    end_date: dt.datetime | None
    catchup: bool
    tags: tuple[str, ...]
    owner: str
    heavy_queue: str
    retries: int
    retry_delay_s: int
    light_timeout_s: int
    heavy_timeout_s: int
    dagrun_timeout_s: int
    notify_backfill: bool = False
    heavy_pool: str = DEFAULT_POOL
    deadline_s: int | None = None
    max_lateness_s: int = 0
    #: ``execution.layout``: ``warm`` (the heavy steps of a window in one task) or ``steps``
    layout: str = "warm"


def results_asset_uri(monitor: str) -> str:
    """The URI of the Asset a monitor's stored results are (the persist task's outlet).

    Examples
    --------
    >>> results_asset_uri("demo")
    'fairmon://demo/results'
    """
    return f"fairmon://{monitor}/results"


def dag_settings(spec: MonitorSpec, spec_path: Path) -> DagSettings:
    """Derive the DAG settings of ``spec`` (loaded from ``spec_path``).

    Examples
    --------
    >>> demo = Path(__file__).resolve().parents[1] / "monitors" / "demo.yaml"  # the repo's demo spec
    >>> s = dag_settings(load_spec(demo), demo)
    >>> s.dag_id, s.heavy_timeout_s == 4 * s.light_timeout_s, s.heavy_pool, s.layout
    ('fairmon_demo', True, 'default_pool', 'warm')
    >>> s.dagrun_timeout_s < 86_400  # a daily window's run times out before the next one is due
    True
    """
    tz = ZoneInfo(spec.schedule.timezone)
    start = dt.datetime.combine(spec.schedule.start_date, dt.time(0, 0), tzinfo=tz)
    end = (
        dt.datetime.combine(spec.schedule.end_date, dt.time(0, 0), tzinfo=tz)
        if spec.schedule.end_date is not None
        else None
    )
    ex = spec.execution
    light = int(ex.task_timeout_s)
    heavy = ex.heavy_timeout_s
    description = spec.identity.description or f"fairmon monitor {spec.name}"
    doc = "\n".join(
        [
            f"### fairmon monitor `{spec.name}`",
            "",
            description,
            "",
            f"- spec: `{spec_path}` (fingerprint `{spec.fingerprint[:12]}`)",
            f"- model: `{spec.model.registry_uri}` version `{spec.model.version}`",
            f"- data: {spec.data.kind} source, window `{spec.schedule.window_label}` on cron `{spec.schedule.cron}` "
            f"({spec.schedule.timezone})",
            f"- protected attributes: {', '.join(spec.columns.sensitive)}",
            f"- heavy steps (predict, RUMIE, explanations, FEU) run on queue `{ex.queue}`, pool "
            f"`{ex.pool or DEFAULT_POOL}`; layout `{ex.layout}` (`warm`: predict, outcome, RUMIE and "
            "explain in one task `compute`)",
            (f"- late data: waits up to {spec.data.max_lateness_s} s for the window's data, then skips it"
             if spec.data.max_lateness_s else "- late data: none awaited (`data.max_lateness_s` 0: no sensor task)"),
            f"- results: Asset `{results_asset_uri(spec.name)}` (persist task's outlet)",
            f"- alerts: Slack `{spec.alerts.slack_channel or '$FAIRMON_SLACK_CHANNEL'}`, "
            f"min severity `{spec.alerts.min_severity}`",
            "",
            "Each task calls one `fairmon.pipeline` step; data moves through the artifact location "
            f"(`{ex.artifact_location}`), never through XCom. Re-running a window replaces its rows and "
            "never sends an alert twice.",
        ]
    )
    tags = tuple(dict.fromkeys(("fairmon", f"monitor:{spec.name}", *spec.identity.tags)))
    return DagSettings(
        spec_path=spec_path.resolve(),
        monitor=spec.name,
        dag_id=f"{DAG_ID_PREFIX}{spec.name}".replace("-", "_"),
        description=description[:200],
        doc_md=doc,
        cron=spec.schedule.cron,
        timezone=spec.schedule.timezone,
        start_date=start,
        end_date=end,
        catchup=spec.schedule.catchup,
        tags=tags,
        owner=spec.identity.owner or "fairmon",
        heavy_queue=os.environ.get(ENV_HEAVY_QUEUE) or ex.queue,
        retries=int(ex.retries),
        retry_delay_s=int(ex.retry_delay_s),
        light_timeout_s=light,
        heavy_timeout_s=heavy,
        dagrun_timeout_s=min(light * len(STEPS) + heavy * len(HEAVY_STEPS), spec.schedule.run_timeout_s),
        notify_backfill=bool(spec.alerts.notify_backfill),
        heavy_pool=os.environ.get(ENV_HEAVY_POOL) or ex.pool or DEFAULT_POOL,
        deadline_s=ex.deadline_s,
        max_lateness_s=int(spec.data.max_lateness_s),
        layout=ex.layout,
    )


def load_dag_settings(path: str | os.PathLike[str]) -> DagSettings:
    """Load a spec file and derive its :class:`DagSettings` (ConfigError names file and field)."""
    p = Path(path)
    return dag_settings(load_spec(p), p)
