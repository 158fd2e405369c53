"""The FEU paper benchmark's smoke mode runs a tiny search on German and writes its results files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.datasets
def test_feu_paper_benchmark_smoke(tmp_path: Path, data_dir: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_feu_paper_run", REPO / "benchmarks" / "feu_paper" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--mode", "paper", "--out", str(tmp_path)])
    summary = rows[0]
    assert summary["dataset"] == "german" and summary["seeds"] == 1
    assert 0.5 <= summary["auc_mean"] <= 1.0 and 0.0 <= summary["dp_mean"] <= 1.0
    data = json.loads((tmp_path / "feu_paper_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "feu_paper_smoke.md").is_file()
    assert (tmp_path / "pareto_paper_german_seed42.png").is_file()

    # fairmon's default mode: the recommended candidate (or none) beside production and the baselines
    rows = mod.main(["--smoke", "--out", str(tmp_path / "default")])
    summary = rows[0]
    assert summary["mode"] == "default" and summary["seeds"] == 1 and summary["recommended"] in (0, 1)
    for b in ("production", "constant", "threshold_optimizer", "exponentiated_gradient"):
        assert 0.0 <= summary[f"{b}_dp_mean"] <= 1.0
    assert summary["constant_selection_rate_mean"] == 1.0
    assert summary["outside_band_validation"] == 0
    assert (tmp_path / "default" / "feu_paper_smoke_default.json").is_file()
    for b in ("threshold_optimizer", "exponentiated_gradient"):  # the mitigators' GESD is computed (issue 16)
        assert 0.0 <= summary[f"{b}_gesd_mean"] <= 1.0
    table = (tmp_path / "default" / "feu_paper_smoke_default_comparison.md").read_text()
    assert "fairlearn ThresholdOptimizer (DP)" in table and "| FEU recommended |" in table
    if summary["recommended"]:
        assert "balanced accuracy ≥ production − 0.02" in table
