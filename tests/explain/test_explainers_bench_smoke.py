"""The explainer benchmark's smoke mode runs and writes its results files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_explainers_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_explainers_run", REPO / "benchmarks" / "explainers" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert [r["method"] for r in rows] == ["lime", "kernelshap"]
    assert all(r["batched_s"] > 0 and r["library_s_extrapolated"] > 0 for r in rows)
    data = json.loads((tmp_path / "explainers_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "explainers_smoke.md").is_file() and (tmp_path / "explainers_smoke.csv").is_file()
