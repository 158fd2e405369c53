"""The real Airflow scheduler (``airflow standalone``: scheduler, dag-processor, triggerer, api-server)
with LocalExecutor and a Postgres metadata database runs a triggered demo-monitor DAG run to success.

Slow (about a minute of start-up). The monitor spec gets an ``end_date`` so the scheduler creates no
runs of its own; the triggered run covers window 0 of the small demo stream.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "pipeline") not in sys.path:
    sys.path.insert(0, str(_TESTS / "pipeline"))

from pipeline_demo_setup import airflow_env, prepare_demo  # noqa: E402

pytestmark = [pytest.mark.airflow, pytest.mark.postgres, pytest.mark.slow]

STARTUP_TIMEOUT_S = 240
RUN_TIMEOUT_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def airflow_metadata_url(pg_admin_url: str):  # type: ignore[no-untyped-def]
    import sqlalchemy as sa

    name = f"fairmon_af_{uuid.uuid4().hex[:10]}"
    eng = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))
    yield sa.make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
    with eng.connect() as c:
        c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    eng.dispose()


def _scalar(engine: Any, sql: str) -> Any:
    import sqlalchemy as sa

    try:
        with engine.connect() as c:
            return c.execute(sa.text(sql)).scalar()
    except sa.exc.SQLAlchemyError:  # tables not created yet by the migration
        return None


def _airflow(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "airflow")
    return subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_scheduler_runs_a_triggered_demo_dag(
    tmp_path: Path, fresh_database_url: str, airflow_metadata_url: str
) -> None:
    import sqlalchemy as sa

    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2,
                                  overrides={"schedule.end_date": "2026-01-03", "execution.retry_delay_s": 5})
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    env = airflow_env(tmp_path, spec.parent, fresh_database_url)
    port = _free_port()
    env.update(
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=airflow_metadata_url,
        AIRFLOW__CORE__EXECUTOR="LocalExecutor",
        AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION="False",
        AIRFLOW__CORE__PARALLELISM="4",
        AIRFLOW__API__PORT=str(port),
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://localhost:{port}/execution/",
        AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC="2",
        AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL="5",
    )
    log = open(tmp_path / "standalone.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "airflow"), "standalone"], env=env, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        meta = sa.create_engine(airflow_metadata_url)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:  # wait until the dag-processor has serialised the DAG
            if _scalar(meta, "SELECT count(*) FROM serialized_dag WHERE dag_id = 'fairmon_demo'"):
                break
            assert proc.poll() is None, (tmp_path / "standalone.log").read_text()[-4000:]
            assert time.monotonic() < deadline, "DAG not parsed in time"
            time.sleep(2)
        w0 = manifest["windows"][0]
        conf = json.dumps({"logical_date": w0["start"]})  # the window to compute (a manual run's data
        trig = _airflow(env, "dags", "trigger", "fairmon_demo", "-c", conf, "-o", "json")  # interval is "now")
        assert trig.returncode == 0, trig.stdout + trig.stderr
        deadline = time.monotonic() + RUN_TIMEOUT_S
        state = None
        while time.monotonic() < deadline:
            state = _scalar(meta, "SELECT state FROM dag_run WHERE dag_id = 'fairmon_demo' ORDER BY id DESC LIMIT 1")
            if state in ("success", "failed"):
                break
            time.sleep(2)
        meta.dispose()
        tail = (tmp_path / "standalone.log").read_text()[-6000:]
        assert state == "success", f"run state {state}\n{tail}"
    finally:
        import psutil  # an Airflow dependency

        try:  # standalone's descendants, some in sessions of their own (api-server workers)
            children = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for child in children:  # nothing started here outlives the test
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        log.close()

    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        status = c.execute(sa.text("SELECT status FROM runs")).scalars().all()
        n_metrics = c.execute(sa.text("SELECT count(*) FROM metrics")).scalar_one()
    eng.dispose()
    assert status == ["succeeded"] and n_metrics > 0
