"""The deployment compose file: schema-valid (docker-compose config) and the GPU worker set up right."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker" / "docker-compose.yml"
SECRETS = {
    "POSTGRES_PASSWORD": "pw",
    "AIRFLOW_DB_PASSWORD": "apw",
    "FAIRMON_DB_PASSWORD": "fpw",
    "AIRFLOW_FERNET_KEY": "k",
    "AIRFLOW_JWT_SECRET": "j",
    "AIRFLOW_ADMIN_PASSWORD": "ap",
    "GRAFANA_ADMIN_PASSWORD": "gp",
    "GRAFANA_DB_PASSWORD": "gdp",
}


def _doc() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_services_present() -> None:
    services = _doc()["services"]
    for name in ("postgres", "redis", "airflow-apiserver", "airflow-scheduler", "airflow-dag-processor",
                 "airflow-triggerer", "worker-cpu", "worker-gpu", "reports", "grafana"):
        assert name in services, name


def test_every_long_running_service_has_a_healthcheck_and_workers_shut_down_warm() -> None:
    services = _doc()["services"]
    for name, svc in services.items():
        if name != "airflow-init":  # the one-shot migration job
            assert "test" in svc.get("healthcheck", {}), name
    for worker in ("worker-cpu", "worker-gpu"):
        assert services[worker]["environment"]["DUMB_INIT_SETSID"] == "0"
    common = _doc()["x-airflow-common"]
    assert "airflow-logs:/opt/airflow/logs" in common["volumes"]  # one logs volume for every component
    assert common["environment"]["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"].endswith(":admin")
    grafana = services["grafana"]
    assert "./grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]
    assert grafana["environment"]["GF_SECURITY_ADMIN_PASSWORD"].startswith("${GRAFANA_ADMIN_PASSWORD")
    assert any(v.startswith("fairmon-reports:") and v.endswith(":ro") for v in services["reports"]["volumes"])


def test_gpu_worker_reserves_nvidia_gpus_and_listens_on_gpu_queue() -> None:
    gpu = _doc()["services"]["worker-gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any("gpu" in d["capabilities"] and d.get("driver") == "nvidia" for d in devices)
    cmd = gpu["command"].split()
    assert cmd[:2] == ["celery", "worker"] and cmd[cmd.index("--queues") + 1] == "gpu"
    cpu = _doc()["services"]["worker-cpu"]["command"].split()
    assert cpu[cpu.index("--queues") + 1] == "default"
    assert "deploy" not in _doc()["services"]["worker-cpu"]


def test_connections_and_secrets_come_from_environment() -> None:
    env = _doc()["x-airflow-common"]["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert env["AIRFLOW_CONN_FAIRMON_DB"].startswith("postgresql://fairmon:${FAIRMON_DB_PASSWORD")
    assert "${FAIRMON_SLACK_TOKEN" in env["AIRFLOW_CONN_FAIRMON_SLACK"]
    text = COMPOSE.read_text()
    for secret in SECRETS.values():  # nothing hard-coded
        assert f": {secret}\n" not in text


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_config_validates() -> None:
    env = {**os.environ, **SECRETS}
    r = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config", "-q"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # and missing secrets are refused, not defaulted
    bare = {k: v for k, v in os.environ.items() if k not in SECRETS}
    r = subprocess.run(["docker-compose", "-f", str(COMPOSE), "config", "-q"], env=bare, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and "POSTGRES_PASSWORD" in (r.stderr + r.stdout)
