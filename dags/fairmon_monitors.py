"""Airflow DAGs of the fairmon monitor specs (``FAIRMON_MONITORS_DIR``, default the repo's ``monitors/``)
that have no DAG file of their own.

Each shipped spec has its own DAG file, ``dags/monitor_<name>.py`` (``python -m fairmon_airflow.dagfiles``
writes them), so a broken spec is an import error of that file alone; this file builds the specs
without one (a broken one is logged and skipped). The DAGs, their task graph, connections, retry policy
and failure callback live in the :mod:`fairmon_airflow` package. Parsing stays light: ``airflow.sdk``,
``pendulum`` and the spec loader, no database or network.

Windows: a scheduled run computes its data interval; trigger with ``conf={"logical_date": "2026-01-03"}``
to (re)compute a chosen window, and with ``conf={"feu": true}`` for FEU retraining candidates on demand.
"""

from __future__ import annotations

from pathlib import Path

from fairmon_airflow import build_dags, monitors_dir
from fairmon_airflow.dagfiles import dedicated_stems

_HERE = Path(__file__).resolve()
globals().update(build_dags(monitors_dir(default=_HERE.parents[1] / "monitors"), skip=dedicated_stems(_HERE.parent)))
