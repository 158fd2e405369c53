#!/usr/bin/env bash
# Two databases on one server: Airflow's metadata and the fairmon store (separate owners), and
# Grafana's read-only login to the store.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" <<SQL
CREATE USER airflow WITH PASSWORD '${AIRFLOW_DB_PASSWORD}';
CREATE DATABASE airflow OWNER airflow;
CREATE USER fairmon WITH PASSWORD '${FAIRMON_DB_PASSWORD}';
CREATE DATABASE fairmon OWNER fairmon;
-- Grafana's read-only login (SELECT granted by airflow-init: fairmon db grant-readonly --role grafana)
CREATE USER grafana WITH PASSWORD '${GRAFANA_DB_PASSWORD}';
SQL
