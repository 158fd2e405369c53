"""Airflow glue of fairmon: one DAG per monitor spec, built from the pipeline's step table.

``fairmon`` never imports Airflow; this package is the only place that does. Its rooms:
:mod:`~fairmon_airflow.dagspec` (what a DAG needs from a spec), :mod:`~fairmon_airflow.factory` (DAGs
and task graphs), :mod:`~fairmon_airflow.tasks` (the body of every task),
:mod:`~fairmon_airflow.connections` (store, Slack and SQL-source connections),
:mod:`~fairmon_airflow.context` (window, params and try number of a run),
:mod:`~fairmon_airflow.retry` (retry or fail fast) and :mod:`~fairmon_airflow.failure` (the failure
callback). Importing it is parse-time light: no database, network or heavy library.
"""

from __future__ import annotations

from fairmon_airflow.factory import build_dag, build_dags, monitors_dir

__all__ = ["build_dag", "build_dags", "monitors_dir"]
