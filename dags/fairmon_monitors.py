"""One Airflow DAG per fairmon monitor spec (``FAIRMON_MONITORS_DIR``, default the repo's ``monitors/``).

Parse time stays cheap and side-effect free: only the standard library, ``pendulum``, ``airflow.sdk`` and
the light spec loader (``fairmon.pipeline.dagspec`` → ``fairmon.config``: pydantic + yaml) are imported
here. No database, network, Variable or Connection access happens at parse time; the tasks import the
pipeline and resolve the ``fairmon_db`` (Postgres) and ``fairmon_slack`` connections when they run,
falling back to ``FAIRMON_DATABASE_URL`` / ``FAIRMON_SLACK_TOKEN`` for local runs.

Task graph (each task calls one :mod:`fairmon.pipeline` step; XCom carries only small dicts)::

    resolve_window → pull_snapshot → pull_data → validate → predict ─┬─ outcome ─┐
                                                                     ├─ rumie ───┼→ persist → drift → report
                                                                     └─ explain ─┘        → alert → feu → followup

Windows: a scheduled run computes its data interval (``CronDataIntervalTimetable``). Airflow 3 gives a
manually triggered run the interval before the trigger time, so to (re)compute a chosen window trigger
with ``conf={"logical_date": "2026-01-03"}`` — the window starting at that date, exactly what
``fairmon run --logical-date 2026-01-03`` computes. FEU retraining candidates on demand: trigger with
``conf={"feu": true}`` (the ``feu`` param) and the feu task runs at that window even without drift and
with ``retraining.trigger: manual`` — what ``fairmon feu --window 2026-01-03`` does without Airflow.

Failure policy: a batch that fails validation (and any other non-transient ``FairmonError``) fails the
task at once without retry (``AirflowFailException``); transient errors (``StoreError`` and others with
``retryable=True``, plus unexpected exceptions) use the task's retries. Pipeline failures go to
``on_failure_callback`` (logged, and posted to Slack when a token is configured) — separate from the
fairness alerts the ``alert`` task sends.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import CronDataIntervalTimetable, Param, dag, get_current_context, task

from fairmon.pipeline.dagspec import DagSettings, load_dag_settings

log = logging.getLogger(__name__)

#: Airflow connection ids (override with env for a deployment that names them differently)
DB_CONN_ID = os.environ.get("FAIRMON_DB_CONN_ID", "fairmon_db")
SLACK_CONN_ID = os.environ.get("FAIRMON_SLACK_CONN_ID", "fairmon_slack")
HEAVY_STEPS = frozenset({"predict", "rumie", "explain", "feu"})


def _monitors_dir() -> Path:
    default = Path(__file__).resolve().parents[1] / "monitors"
    return Path(os.environ.get("FAIRMON_MONITORS_DIR", str(default)))


# --------------------------------------------------------------------------------------------- runtime
# Everything below runs inside task processes only (never at parse time).


def _db_url() -> str | None:
    """The store URL from the Airflow connection, else ``FAIRMON_DATABASE_URL`` (None → embedded)."""
    try:
        from airflow.providers.postgres.hooks.postgres import PostgresHook

        url = PostgresHook(postgres_conn_id=DB_CONN_ID).sqlalchemy_url
        return url.render_as_string(hide_password=False)
    except Exception as exc:  # noqa: BLE001 - connection not defined: local run
        log.info("connection %r not usable (%s); using FAIRMON_DATABASE_URL", DB_CONN_ID, type(exc).__name__)
        return os.environ.get("FAIRMON_DATABASE_URL")


def _slack_token() -> str | None:
    try:
        from airflow.sdk import BaseHook

        token = BaseHook.get_connection(SLACK_CONN_ID).password
        if token:
            return str(token)
    except Exception:  # noqa: BLE001 - connection not defined: local run
        pass
    return os.environ.get("FAIRMON_SLACK_TOKEN") or None


def _source_url(spec_path: str) -> str | None:
    """A SQL data source's URL from the Airflow connection the spec names (None: files, or env)."""
    from fairmon.config import load_spec

    spec = load_spec(spec_path)
    if spec.data.sql is None:
        return None
    try:
        from airflow.sdk import BaseHook

        conn = BaseHook.get_connection(spec.data.sql.connection)
    except Exception:  # noqa: BLE001 - not defined in Airflow: the pipeline reads data.sql.url_env
        return None
    if conn.conn_type in ("postgres", "postgresql"):
        from airflow.providers.postgres.hooks.postgres import PostgresHook

        return PostgresHook(postgres_conn_id=spec.data.sql.connection).sqlalchemy_url.render_as_string(
            hide_password=False
        )
    return str(conn.get_uri())


def _notify(context: Any) -> bool:
    """Airflow backfills store findings but notify only when the run's ``notify`` param says so."""
    params = context.get("params") or {}
    dag_run = context.get("dag_run")
    run_type = str(getattr(dag_run, "run_type", "") or "")
    if "backfill" in run_type.lower():
        return bool(params.get("notify_backfill", False))
    return bool(params.get("notify", True))


def _feu_requested(context: Any) -> bool:
    """The run's ``feu`` param (trigger conf ``{"feu": true}``): FEU candidates even without drift."""
    return bool((context.get("params") or {}).get("feu", False))


def _run_step(step: str, spec_path: str, window: dict | None) -> dict:
    from airflow.sdk.exceptions import AirflowFailException

    from fairmon.errors import FairmonError
    from fairmon.pipeline import run_step

    context = get_current_context()
    if window is None:  # the resolve_window task: the run's real data interval, never now()
        conf = getattr(context.get("dag_run"), "conf", None) or {}
        if conf.get("logical_date"):  # a chosen window, same convention as `fairmon run --logical-date`
            window = {"logical_date": str(conf["logical_date"])}
        else:
            window = {
                "data_interval_start": context["data_interval_start"].isoformat(),
                "data_interval_end": context["data_interval_end"].isoformat(),
            }
    try:
        return run_step(
            step,
            spec_path,
            window,
            db_url=_db_url(),
            slack_token=_slack_token(),
            notify=_notify(context),
            attempt=int(getattr(context.get("ti"), "try_number", 1) or 1),
            source_url=_source_url(spec_path) if step == "pull_data" else None,
            feu=step == "feu" and _feu_requested(context),
        )
    except FairmonError as exc:
        if exc.retryable:
            raise  # transient (store outage, Slack rate limit): let Airflow retry
        raise AirflowFailException(f"{type(exc).__name__}: {exc}") from exc


def _on_failure(context: Any) -> None:
    """Pipeline-error notification (not a fairness alert)."""
    from fairmon.pipeline.failures import notify_pipeline_failure

    ti = context.get("ti")
    dag_run = context.get("dag_run")
    notify_pipeline_failure(
        dag_id=str(getattr(ti, "dag_id", "?")),
        task_id=str(getattr(ti, "task_id", "?")),
        run_id=str(getattr(dag_run, "run_id", "?")),
        error=context.get("exception"),
        slack_token=_slack_token(),
    )


# --------------------------------------------------------------------------------------------- factory


def build_dag(s: DagSettings) -> Any:
    """Build the DAG of one monitor from its (light) settings."""
    spec_path = str(s.spec_path)

    def _task(step: str, timeout_s: int) -> Any:
        kwargs: dict[str, Any] = {
            "task_id": step,
            "execution_timeout": timedelta(seconds=timeout_s),
        }
        if step in HEAVY_STEPS:
            kwargs["queue"] = s.heavy_queue
        if step == "resolve_window":

            @task(**kwargs)
            def _first() -> dict:
                return _run_step(step, spec_path, None)

            return _first

        @task(**kwargs)
        def _step(window: dict, *upstream: Any) -> dict:
            return _run_step(step, spec_path, window)

        return _step

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
        params={
            "notify": Param(True, type="boolean", description="send Slack alerts for this run"),
            "notify_backfill": Param(
                s.notify_backfill, type="boolean", description="notify from backfill runs (spec: alerts.notify_backfill)"
            ),
            "feu": Param(
                False, type="boolean",
                description="FEU retraining candidates for this window even without drift (needs retraining.enabled)",
            ),
        },
        default_args={
            "owner": s.owner,
            "retries": s.retries,
            "retry_delay": timedelta(seconds=s.retry_delay_s),
            "retry_exponential_backoff": True,
            "on_failure_callback": _on_failure,
        },
    )
    def _monitor_dag() -> None:
        light, heavy = s.light_timeout_s, s.heavy_timeout_s
        w = _task("resolve_window", light)()
        snap = _task("pull_snapshot", light)(w)
        data = _task("pull_data", light)(w, snap)
        valid = _task("validate", light)(w, data)
        pred = _task("predict", heavy)(w, valid)
        outcome = _task("outcome", light)(w, pred)
        rumie = _task("rumie", heavy)(w, pred)
        expl = _task("explain", heavy)(w, pred)
        stored = _task("persist", light)(w, outcome, rumie, expl)
        drift = _task("drift", light)(w, stored)
        report = _task("report", light)(w, drift)  # before the alert that links to it
        alert = _task("alert", light)(w, report)
        feu = _task("feu", heavy)(w, alert)
        _task("followup", light)(w, feu)

    return _monitor_dag()


def build_dags(monitors_dir: Path) -> dict[str, Any]:
    """One DAG per ``*.yaml``/``*.yml`` spec in ``monitors_dir`` (sorted, so ids are stable).

    A broken spec must not take the other monitors down with it: it is logged (file, line and field
    path, from :class:`~fairmon.errors.ConfigError`) and skipped; ``FAIRMON_STRICT_SPECS=1`` turns it
    into an import error of this file instead (what CI's DAG integrity test uses).
    """
    from fairmon.errors import ConfigError

    strict = os.environ.get("FAIRMON_STRICT_SPECS", "0") == "1"
    dags: dict[str, Any] = {}
    for path in sorted([*monitors_dir.glob("*.yaml"), *monitors_dir.glob("*.yml")]):
        try:
            settings = load_dag_settings(path)
        except ConfigError as exc:
            if strict:
                raise
            log.error("fairmon: skipping monitor spec %s: %s", path, exc)
            continue
        if settings.dag_id in dags:
            msg = f"fairmon: {path}: DAG id {settings.dag_id!r} is already used by another spec"
            if strict:
                raise ConfigError(msg)
            log.error(msg)
            continue
        dags[settings.dag_id] = build_dag(settings)
    return dags


globals().update(build_dags(_monitors_dir()))
