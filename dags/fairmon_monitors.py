"""One Airflow DAG per fairmon monitor spec (``FAIRMON_MONITORS_DIR``, default the repo's ``monitors/``).

The DAGs, their task graph (one task per row of ``fairmon/pipeline/table.py``), connections, retry
policy and failure callback live in the :mod:`fairmon_airflow` package; this file only asks it for the
DAGs. Parsing stays light: ``airflow.sdk``, ``pendulum`` and the spec loader, no database or network.

Windows: a scheduled run computes its data interval; trigger with ``conf={"logical_date": "2026-01-03"}``
to (re)compute a chosen window, and with ``conf={"feu": true}`` for FEU retraining candidates on demand.
Non-transient fairmon errors fail a task at once; transient ones use the task's retries. (The words
"airflow" and "dag" in this file are what the DAG processor's safe mode looks for.)
"""

from __future__ import annotations

from pathlib import Path

from fairmon_airflow import build_dags, monitors_dir

globals().update(build_dags(monitors_dir(default=Path(__file__).resolve().parents[1] / "monitors")))
