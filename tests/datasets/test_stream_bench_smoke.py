"""The stream benchmark's smoke mode runs, writes its results files and stays inside the band."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


@pytest.mark.slow
def test_stream_benchmark_smoke(tmp_path: Path, benchmark_module: Callable[[str], ModuleType]) -> None:
    mod = benchmark_module("stream")
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert len(rows) == 2 and all(r["fits"] >= 4 for r in rows)
    assert all(abs(r["err_before"]) <= 0.03 and abs(r["err_after"]) <= 0.03 for r in rows)
    data = json.loads((tmp_path / "stream_smoke.json").read_text())
    assert data["commit"] and "loadavg" in data["machine"]
    assert (tmp_path / "stream_smoke.md").is_file() and (tmp_path / "stream_smoke_runs.csv").is_file()
