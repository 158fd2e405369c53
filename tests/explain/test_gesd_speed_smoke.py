"""The GESD speed benchmark's smoke mode runs and writes its results files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.datasets
def test_gesd_speed_benchmark_smoke(tmp_path: Path, data_dir: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_gesd_speed_run", REPO / "benchmarks" / "gesd_speed" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert [r["variant"].split()[0] for r in rows] == ["fairmon", "libraries", "reference-style"]
    assert all(r["seconds"] > 0 for r in rows)
    data = json.loads((tmp_path / "gesd_speed_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "gesd_speed_smoke.md").is_file() and (tmp_path / "gesd_speed_smoke.csv").is_file()
