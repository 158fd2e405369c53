"""The scale benchmark's smoke mode runs one small window through every step and writes its files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a child process with torch and RUMIE (about a minute on a loaded machine)
def test_scale_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_scale_run", REPO / "benchmarks" / "scale" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert len(rows) == 1
    row = rows[0]
    assert row["rows"] == 3_000 and row["n_mined"] == 1_000 and row["n_honest"] == 2_000  # the sampled path
    assert row["outcome_cpu_s"] > 0 and row["rumie_cpu_s"] > 0 and row["peak_rss_mb"] > 0
    assert row["iteration_ms"] > 0 and row["iteration_floor_ms"] > 0 and "same_rule" in row
    # 3,000 rows take torch; the compiled kernel is timed alongside (the 1M window takes it)
    assert row["iteration_path"] == "torch" and row["iteration_ms"] == row["iteration_torch_ms"]
    assert row["iteration_kernel_ms"] > 0 and row["kernel_load_cpu_s"] > 0
    assert 0.0 <= row["jaccard_full"] <= 1.0 and 0.0 <= row["jaccard_planted"] <= 1.0
    assert 0 < row["iterations_run"] <= 100 and row["iteration_layout"] in ("dense", "sparse")
    samples = json.loads((tmp_path / "scale_samples_smoke.json").read_text())["rows"]
    assert [r["max_rows"] for r in samples] == [1_000] and "jaccard_full" in samples[0]
    data = json.loads((tmp_path / "scale_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "scale_smoke.md").is_file() and (tmp_path / "scale_smoke.csv").is_file()


@pytest.mark.slow  # RUMIE four times on a small planted frame (seconds, plus torch's import)
def test_early_stop_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_scale_early_stop", REPO / "benchmarks" / "scale" / "early_stop.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert [r["tol"] for r in rows] == [0.0, 0.001, 0.002, 0.005]
    assert rows[0]["same_rule"] is True and rows[0]["stopped_early"] is False  # tol 0: the reference, every iteration
    assert all(0 < r["iterations_run"] <= 200 and 0.0 <= r["jaccard_planted"] <= 1.0 for r in rows)
    assert json.loads((tmp_path / "early_stop_smoke.json").read_text())["settings"]["smoke"] is True
