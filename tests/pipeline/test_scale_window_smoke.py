"""The end-to-end window benchmark's smoke mode runs one small window through every pipeline step and
writes its results files (benchmarks/scale/window.py; figures are in its results, never asserted)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
STEPS = ("resolve_window", "pull_data", "validate", "predict", "outcome", "rumie", "explain", "persist",
         "drift", "diagnose", "report", "alert", "feu", "followup")


@pytest.mark.slow  # a child process through every step with GX, torch and RUMIE (tens of seconds)
def test_scale_window_benchmark_smoke(tmp_path: Path, fresh_database_url: str) -> None:
    spec = importlib.util.spec_from_file_location("bench_scale_window", REPO / "benchmarks" / "scale" / "window.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path / "out"), "--db", fresh_database_url,
                     "--work", str(tmp_path / "work")])
    assert len(rows) == 1
    row = rows[0]
    assert row["status"] == "succeeded" and row["rows"] == 3_000
    for step in STEPS:  # every step timed, with its resident set
        assert row[f"{step}_cpu_s"] >= 0 and row[f"{step}_rss_mb"] > 0
    assert row["total_cpu_s"] > 0 and row["peak_rss_mb"] >= row["validate_rss_mb"]
    assert row["rule"] and row["n_mined"] and row["n_honest"]  # RUMIE's answer recorded from its artifact
    data = json.loads((tmp_path / "out" / "window_smoke.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
    assert (tmp_path / "out" / "window_smoke.md").is_file() and (tmp_path / "out" / "window_smoke.csv").is_file()
    summary = data["rows"][0]
    assert summary["peak_step"] in STEPS and summary["total_cpu_s"] == row["total_cpu_s"]
    per_step = json.loads((tmp_path / "out" / "window_smoke_steps.json").read_text())["rows"]
    assert [r["step"] for r in per_step if r["step"] in STEPS] == list(STEPS)
    # the window read its Parquet partition with only the monitor's columns, text as categories
    assert sorted(p.name for p in (tmp_path / "work").glob("window-3000/*.parquet")) == ["2026-01-02.parquet"]
    (data,) = (tmp_path / "work" / "artifacts").glob("demo/*/*/data.parquet")
    frame = pd.read_parquet(data)
    assert "applicant_id" not in frame.columns and "event_time" not in frame.columns  # not named by the spec
    assert {"age", "region", "sex", "race", "repaid"} <= set(frame.columns)
    assert all(isinstance(frame[c].dtype, pd.CategoricalDtype) for c in ("region", "education", "sex", "race"))
