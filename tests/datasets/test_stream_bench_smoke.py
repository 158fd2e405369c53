"""The stream benchmark's smoke mode runs, writes its results files and stays inside the band."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_stream_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_stream_run", REPO / "benchmarks" / "stream" / "run.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert len(rows) == 2 and all(r["fits"] >= 4 for r in rows)
    assert all(abs(r["err_before"]) <= 0.03 and abs(r["err_after"]) <= 0.03 for r in rows)
    data = json.loads((tmp_path / "stream_smoke.json").read_text())
    assert data["commit"] and "loadavg" in data["machine"]
    assert (tmp_path / "stream_smoke.md").is_file() and (tmp_path / "stream_smoke_runs.csv").is_file()
