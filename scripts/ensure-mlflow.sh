#!/usr/bin/env bash
# A separate virtualenv holding the MLflow tracking server (and client) that the MLflow-registry tests
# start on 127.0.0.1: fairmon itself talks to MLflow over its REST API and does not import mlflow.
# Pinned by constraints-mlflow.txt; rebuilt when that file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${FAIRMON_TEST_MLFLOW_VENV:-.venv-mlflow}
STAMP="$VENV/.installed-$(sha256sum constraints-mlflow.txt | cut -c1-16)"
[ -f "$STAMP" ] && exit 0
test -x "$VENV/bin/python" || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q -c constraints-mlflow.txt mlflow==3.17.2
rm -f "$VENV"/.installed-* && touch "$STAMP"
