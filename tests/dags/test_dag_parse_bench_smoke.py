"""The DAG-parse benchmark's smoke mode runs, builds every DAG and loads nothing heavy."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.airflow, pytest.mark.slow]


def test_dag_parse_benchmark_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    spec = importlib.util.spec_from_file_location("bench_dag_parse_run", REPO / "benchmarks" / "dag_parse" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    summary = rows[-1]
    assert summary["n_dags"] == len(list((REPO / "monitors").glob("*.yaml")))
    assert summary["heavy_modules"] == "none" and summary["build_dags_s"] > 0
    data = json.loads((tmp_path / "dag_parse_smoke.json").read_text())
    assert "loadavg" in json.dumps(data)
