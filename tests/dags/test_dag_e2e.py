"""End to end with Airflow: ``dag.test()`` of the demo monitor against the machine's Postgres.

The DAG runs the stream's drift window (the retrained model's first); the test monitor alerts as soon
as RUMIE's honest DScore is significantly above 0.05, so runs, metrics, evidence, explanation rows,
findings and an alert row must all be present. A second ``dag.test()`` of the same logical date must
change nothing.

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

#: Airflow 3.3.2's dag.test() cannot run a DAG with a DeadlineAlert (its run creation reads the
#: deadline_alert row with an unserialised id: "'dict' object has no attribute 'hex'"); the real
#: scheduler runs it (tests/dags/test_scheduler.py), so the in-process runs here go without one
NO_DEADLINE = {"execution.deadline_s": None}

_PROBE = r"""
import json, sys, pendulum
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=__import__("os").environ["AIRFLOW__CORE__DAGS_FOLDER"])
assert not bag.import_errors, bag.import_errors
dag = bag.dags["fairmon_demo"]
conf = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
states = []
for _ in range(int(sys.argv[2])):
    run = dag.test(logical_date=pendulum.parse(sys.argv[1]), run_conf=conf)
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


def _round(v: object) -> object:
    return float(f"{v:.9g}") if isinstance(v, float) else v


def _snapshot(url: str) -> dict[str, list[tuple]]:
    """The window's stored results; floats to 9 significant digits (BLAS summation order may differ
    between processes in the last bits)."""
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    try:
        with eng.connect() as c:
            return {k: [tuple(_round(v) for v in r) for r in c.execute(sa.text(q))] for k, q in SNAPSHOT_SQL.items()}
    finally:
        eng.dispose()


def _migrate(env: dict[str, str]) -> None:
    subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "db", "migrate"], env=env, check=True,
        capture_output=True, timeout=300,
    )


def _dag_test(env: dict[str, str], logical_date: str, conf: dict | None = None) -> str:
    args = [sys.executable, "-c", _PROBE, logical_date, "1", *([json.dumps(conf)] if conf is not None else [])]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("STATES "))
    return str(json.loads(line[len("STATES "):])[0])


def test_dag_test_demo_monitor_completes_and_is_idempotent(tmp_path: Path, fresh_database_url: str) -> None:
    from fairmon.store import open_store

    # the monitor alerts as soon as RUMIE's honest DScore is significantly above 0.05 (no persistence),
    # so the drift window of the stream (the retrained model's first) opens a finding and queues an alert
    spec, manifest = prepare_demo(
        tmp_path / "demo", windows=3, drift_window=2,
        overrides={"drift.rumie.honest_dscore_threshold": 0.05, "drift.persistence": {"m": 1, "n": 1},
                   "retraining.enabled": False, **NO_DEADLINE},
    )
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    env = airflow_env(tmp_path, spec.parent, fresh_database_url)
    _migrate(env)
    # Airflow's manual run for logical date D covers the data interval [D - 1 day, D): window 2
    w = manifest["windows"][2]
    assert _dag_test(env, w["end"]) == "success"
    first = _snapshot(fresh_database_url)
    assert [(r[1], r[2]) for r in first["runs"]] == [("succeeded", "v2")]
    assert first["metrics"] and first["evidence"] and first["explanations"]
    assert any(f[1] == "rumie_dscore" and f[6] == "open" for f in first["findings"]), first["findings"]
    assert [a[1] for a in first["alerts"]] == ["fairness"] * len(first["alerts"]) and first["alerts"]
    # a second run of the same logical date changes nothing (rows, statuses, alerts)
    assert _dag_test(env, w["end"]) == "success"
    second = _snapshot(fresh_database_url)
    for table in SNAPSHOT_SQL:
        diff = [(a, b) for a, b in zip(first[table], second[table]) if a != b]
        assert len(first[table]) == len(second[table]) and not diff, (table, diff[:5])


def test_dag_conf_feu_runs_feu_without_drift(tmp_path: Path, fresh_database_url: str) -> None:
    """Triggered with conf ``{"feu": true}``, the feu task runs at a window without drift although the
    monitor's trigger is manual; the same window without the flag skips it."""
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2,
                                  overrides={"retraining.trigger": "manual", **NO_DEADLINE})
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    env = airflow_env(tmp_path, spec.parent, fresh_database_url)
    _migrate(env)
    w = manifest["windows"][0]  # before the retrained model: no drift
    assert _dag_test(env, w["end"]) == "success"
    plain = _snapshot(fresh_database_url)
    assert [r[1] for r in plain["runs"]] == ["succeeded"] and plain["feu"] == []
    assert _dag_test(env, w["end"], {"feu": True}) == "success"
    asked = _snapshot(fresh_database_url)
    assert not [f for f in asked["findings"] if f[6] == "open"]  # still no drift at this window
    # at most one recommended candidate: none when nothing beats production by more than noise (issue 16)
    assert asked["feu"] and sum(1 for r in asked["feu"] if r[2]) <= 1
    feu_alerts = [a for a in asked["alerts"] if a not in plain["alerts"]]
    assert len(feu_alerts) == 1 and feu_alerts[0][3] == "pending"  # the follow-up, queued (no Slack token)
