"""The alert-quality benchmark's smoke mode runs the real pipeline pieces end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "alert_quality" / "run.py"


@pytest.mark.slow
def test_alert_quality_benchmark_smoke(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "alert_quality_smoke.json").read_text())
    assert data["settings"]["smoke"] is True and data["commit"]
    assert "loadavg" in data["machine"]
    measures = {r["measure"].split(" ")[0]: r for r in data["rows"]}
    assert 0.0 <= measures["false-alarm"]["value"] <= 1.0
    windows = json.loads((tmp_path / "alert_quality_smoke_windows.json").read_text())["rows"]
    assert len(windows) == 6 and all(w["honest_dscore"] is not None for w in windows)
    trials = json.loads((tmp_path / "alert_quality_smoke_trials.json").read_text())["rows"]
    assert len(trials) == 1 and trials[0]["dscore_after"] > trials[0]["dscore_before"]
    assert (tmp_path / "alert_quality_smoke.md").read_text().startswith("# alert_quality_smoke")
