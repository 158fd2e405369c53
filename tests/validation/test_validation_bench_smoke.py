"""The validation benchmark's smoke mode runs and writes its results files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_validation_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_validation_run", REPO / "benchmarks" / "validation" / "run.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    assert rows[0]["rows"] == 1000 and rows[0]["validate_good_s"] > 0
    data = json.loads((tmp_path / "validation_smoke.json").read_text())
    assert "commit" in json.dumps(data) and "loadavg" in json.dumps(data)
