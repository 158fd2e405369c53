"""The fleet benchmark's smoke mode (no Airflow): the fleet's specs load with the chosen layout, and the
summary and capacity arithmetic, run again on the recorded small run, give the figures that run wrote."""

from __future__ import annotations

import doctest
import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "benchmarks" / "fleet"


def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    if str(FLEET) not in sys.path:
        sys.path.insert(0, str(FLEET))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is created
    spec.loader.exec_module(mod)
    return mod


def test_fleet_model_doctests() -> None:
    model = _load("fleet_model", FLEET / "model.py")
    assert doctest.testmod(model).failed == 0


def test_fleet_benchmark_smoke(tmp_path: Path) -> None:
    run = _load("bench_fleet_run", FLEET / "run.py")
    assert run.main(["--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "smoke.json").read_text())
    rows = [r for r in data["rows"] if "phase" in r]
    recorded = json.loads((FLEET / "results" / "recorded_small.json").read_text())
    assert [r["phase"] for r in rows] == [p["phase"] for p in recorded["phases"]]
    for row, rec in zip(rows, recorded["phases"], strict=True):
        n_ok = sum(1 for r in rec["dag_runs"] if r["state"] == "success")
        assert row["windows_succeeded"] == n_ok > 0
        assert row["cpu_s_per_window"] == pytest.approx(rec["worker_cpu_s"] / n_ok, abs=0.01)
        assert row["capacity_windows_per_hour"] == pytest.approx(7200 / row["cpu_s_per_window"], rel=0.01)
        assert row["latency_p95_s"] >= row["latency_p50_s"] > 0
    cap = [r for r in data["rows"] if "setting" in r]
    assert {c["setting"] for c in cap} == {r["phase"] for r in rows}
    for c in cap:
        assert c["windows_per_hour_per_worker"] == pytest.approx(7200 / c["cpu_s_per_window"], rel=0.01)
        assert c["workers_500_in_1h"] >= c["workers_500_in_4h"] >= c["workers_500_in_24h"] >= 1
