"""End to end with Airflow: ``dag.test()`` of the demo monitor against the machine's Postgres.

The earlier windows are run with the CLI pipeline (the same steps) to give the drift decision its
history; the DAG then runs the drift window's successor, where persistence (2 of 3) opens the drift
and the alert is queued. A second ``dag.test()`` of the same logical date must change nothing.

Airflow runs in a subprocess with its own ``AIRFLOW_HOME`` (SQLite metadata), so its configuration
never leaks into the other tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS / "pipeline", _TESTS / "alerts"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pipeline_demo_setup import airflow_env, prepare_demo  # noqa: E402

pytestmark = [pytest.mark.airflow, pytest.mark.postgres, pytest.mark.slow]

_PROBE = r"""
import json, sys, pendulum
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=__import__("os").environ["AIRFLOW__CORE__DAGS_FOLDER"])
assert not bag.import_errors, bag.import_errors
dag = bag.dags["fairmon_demo"]
states = []
for _ in range(int(sys.argv[2])):
    run = dag.test(logical_date=pendulum.parse(sys.argv[1]))
    states.append(str(run.state))
print("STATES " + json.dumps(states))
"""

SNAPSHOT_SQL = {
    "runs": "SELECT window_start, status, model_version, n_rows, error FROM runs ORDER BY window_start",
    "metrics": "SELECT window_start, metric, attribute, group_key, value, ci_low, ci_high, n FROM metrics "
    "ORDER BY 1, 2, 3, 4",
    "evidence": "SELECT window_start, method, dscore, honest_dscore, key_attributes, rules_text FROM evidence ORDER BY 1, 2",
    "explanations": "SELECT window_start, family, metric, explainer, group_key, value FROM explanation_metrics "
    "ORDER BY 1, 2, 3, 4, 5",
    "findings": "SELECT window_start, kind, metric, attribute, group_key, severity, status FROM findings ORDER BY 1, 2, 3, 4, 5",
    "alerts": "SELECT fingerprint, kind, window_start, state, attempts FROM alerts ORDER BY 1",
    "feu": "SELECT run_id, candidate_index, selected FROM feu_candidates ORDER BY 1, 2",
}


def _snapshot(url: str) -> dict[str, list[tuple]]:
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    try:
        with eng.connect() as c:
            return {k: [tuple(r) for r in c.execute(sa.text(q))] for k, q in SNAPSHOT_SQL.items()}
    finally:
        eng.dispose()


def _dag_test(env: dict[str, str], logical_date: str, times: int) -> list[str]:
    subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "db", "migrate"], env=env, check=True,
        capture_output=True, timeout=300,
    )
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, logical_date, str(times)], env=env, capture_output=True, text=True,
        timeout=600,
    )
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("STATES "))
    return json.loads(line[len("STATES "):])


def test_dag_test_demo_monitor_completes_and_is_idempotent(tmp_path: Path, fresh_database_url: str) -> None:
    from fairmon.pipeline import run_window
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=4, drift_window=2)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    # history: windows 0..2 through the same pipeline (CLI path)
    for w in manifest["windows"][:3]:
        o = run_window(spec, w["start"], db_url=fresh_database_url, notify=False)
        assert o.status == "succeeded", o.error
    env = airflow_env(tmp_path, spec.parent, fresh_database_url)
    # Airflow's manual run for logical date D covers the data interval [D - 1 day, D): window 3
    last = manifest["windows"][3]
    states = _dag_test(env, last["end"], 1)
    assert states == ["success"]
    first = _snapshot(fresh_database_url)
    w3 = [r for r in first["runs"] if r[0].isoformat().startswith(last["start"][:10])]
    assert len(w3) == 1 and w3[0][1] == "succeeded" and w3[0][2] == "v2"
    assert len(first["runs"]) == 4
    assert any(r[0] == w3[0][0] for r in first["metrics"])
    assert any(r[0] == w3[0][0] for r in first["evidence"])
    assert any(r[0] == w3[0][0] for r in first["explanations"])
    assert any(r[0] == w3[0][0] for r in first["findings"])
    assert first["alerts"], "the opened drift must queue an alert"
    # a second run of the same logical date changes nothing (rows, statuses, alerts)
    assert _dag_test(env, last["end"], 1) == ["success"]
    assert _snapshot(fresh_database_url) == first
