"""The store benchmark's smoke mode runs end to end and writes its results and plans."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "store" / "run.py"


def test_store_benchmark_smoke(fresh_database_url: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(RUN),
            "--smoke",
            "--db",
            fresh_database_url,
            "--out",
            str(tmp_path),
            "--nice",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    res = json.loads((tmp_path / "store_queries.json").read_text())
    by = {r["query"]: r for r in res["rows"]}
    assert {"latest_all", "series_3y", "drift_30d", "write_window_50_metrics"} <= set(by)
    assert by["latest_all"]["rows"] == 4 * 50  # one row per monitor and series
    assert by["series_3y"]["rows"] == 60  # every daily window of the smoke set
    assert res["commit"] and res["machine"]["cpu_count"] and res["settings"]["smoke"] is True
    load = {r["step"]: r["value"] for r in json.loads((tmp_path / "store_load.json").read_text())["rows"]}
    assert load["metric_rows"] == 4 * 60 * 50 and load["latest_rows"] == 200
    for name in ("latest_all", "series_3y", "drift_30d"):
        plan = (tmp_path / "plans" / f"{name}.txt").read_text()
        assert "actual time=" in plan and "Buffers:" in plan
    assert (tmp_path / "store_queries.md").read_text().startswith("# store_queries")
