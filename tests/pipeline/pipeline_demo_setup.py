"""Shared setup of the Airflow end-to-end tests: a small demo monitor with its data, registry and DB.

Small on purpose (1,000-row windows, few RUMIE iterations, tiny explanation samples, FEU 4x2) so a
whole DAG run takes seconds; the settings are spec fields, exactly what a user would change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"

#: spec overrides for fast tests (on top of the demo's own settings)
SMALL: dict[str, Any] = {
    "outcome.bootstrap": 50,
    "rumie.iterations": 150,
    "explanations.explainers": ["random", "lime"],
    "explanations.background_size": 20,
    "explanations.lime_samples": 100,
    "explanations.kernelshap_samples": 64,
    "explanations.gesd.explainer": "shap+lime",
    "explanations.gesd.sample_size": 20,
    "explanations.gesd.n_perturbations": 3,
    "explanations.gesd.min_group_size": 5,
    "explanations.openxai.sample_size": 20,
    "explanations.openxai.n_perturbations": 5,
    "explanations.openxai.metrics": ["PGI", "PGU"],
    "explanations.attribution_gap.sample_size": 50,
    "explanations.attribution_gap.bootstrap": 100,
    "retraining.population": 4,
    "retraining.generations": 2,
    "retraining.bounds.epochs": [2, 4],
    "retraining.time_budget_s": 60,
    "validation.min_rows": 100,
}


def prepare_demo(out: Path, *, windows: int = 4, rows: int = 1000, drift_window: int = 2,
                 overrides: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """Stream + registry + partitions + effective spec under ``out``; returns (spec path, manifest)."""
    from fairmon.cli.demo import prepare, write_demo_spec

    manifest = prepare(out, windows=windows, rows=rows, drift_window=drift_window, seed=0)
    spec = write_demo_spec(out, {**SMALL, **(overrides or {})})
    return spec, manifest


def demo_copy(template: Path, manifest: dict[str, Any], out: Path, overrides: dict[str, Any], db_url: str,
              corrupt: Any = None) -> tuple[Path, dict[str, Any]]:
    """A copy of a prepared demo (:func:`prepare_demo`) at ``out`` with the spec ``overrides``, its first
    window's partition passed through ``corrupt`` (a DataFrame -> DataFrame function) and ``db_url``
    migrated; returns (spec path, first window)."""
    import shutil

    from fairmon.cli.demo import write_demo_spec
    from fairmon.datasets import read_partition
    from fairmon.store import open_store

    shutil.copytree(template, out)
    spec = write_demo_spec(out, overrides)
    w = manifest["windows"][0]
    part = out / "stream" / f"{w['start'][:10]}.csv"
    if corrupt is not None:
        corrupt(read_partition(part)).to_csv(part, index=False, date_format="%Y-%m-%dT%H:%M:%S")
    open_store(db_url, upgrade=True).engine.dispose()
    return spec, w


def airflow_env(tmp: Path, monitors: Path, db_url: str) -> dict[str, str]:
    """Environment for an isolated Airflow (own AIRFLOW_HOME, SQLite metadata) using our DAG folder."""
    import sqlalchemy as sa

    url = sa.make_url(db_url)
    conn_uri = f"postgresql://{url.username or 'postgres'}@{url.host}:{url.port or 5432}/{url.database}"
    env = dict(os.environ)
    env.update(
        AIRFLOW_HOME=str(tmp / "airflow"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        AIRFLOW__CORE__UNIT_TEST_MODE="False",
        FAIRMON_MONITORS_DIR=str(monitors),
        FAIRMON_STRICT_SPECS="1",
        AIRFLOW_CONN_FAIRMON_DB=conn_uri,
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    env.pop("FAIRMON_DATABASE_URL", None)
    env.pop("FAIRMON_SLACK_TOKEN", None)
    return env
