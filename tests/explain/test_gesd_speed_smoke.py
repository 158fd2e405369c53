"""The GESD speed benchmark's smoke mode runs and writes its results files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


@pytest.mark.slow
@pytest.mark.datasets
def test_gesd_speed_benchmark_smoke(tmp_path: Path, data_dir: Path, benchmark_module: Callable[[str], ModuleType]) -> None:
    mod = benchmark_module("gesd_speed")
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert [r["variant"].split()[0] for r in rows] == ["fairmon", "libraries", "reference-style"]
    assert all(r["seconds"] > 0 for r in rows)
    data = json.loads((tmp_path / "gesd_speed_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "gesd_speed_smoke.md").is_file() and (tmp_path / "gesd_speed_smoke.csv").is_file()
