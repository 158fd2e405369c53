"""The explainer benchmark's smoke mode runs and writes its results files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


@pytest.mark.slow
def test_explainers_benchmark_smoke(tmp_path: Path, benchmark_module: Callable[[str], ModuleType]) -> None:
    mod = benchmark_module("explainers")
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert [r["method"] for r in rows] == ["lime", "kernelshap"]
    assert all(r["batched_s"] > 0 and r["library_s_extrapolated"] > 0 for r in rows)
    data = json.loads((tmp_path / "explainers_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "explainers_smoke.md").is_file() and (tmp_path / "explainers_smoke.csv").is_file()
