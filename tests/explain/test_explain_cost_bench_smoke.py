"""The explanation-cost benchmark's smoke mode runs, writes its results files, and its cost model
rows are the cost model's (issue 21)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_explain_cost_benchmark_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_explain_cost_run", REPO / "benchmarks" / "explain_cost" / "run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    price = rows[0]["cpu_s"]
    assert rows[0]["row"] == "seconds per model row" and price > 0
    lime = [r for r in rows if r["row"].startswith("lime 1000")]
    assert lime and lime[0]["cpu_s"] > 0 and lime[0]["predicted_s"] == pytest.approx(1000 * price)
    totals = {r["row"]: r["predicted_s"] for r in rows if r["row"].startswith("window total")}
    assert totals["window total at previous defaults"] > 100 * totals["window total at current defaults"]
    data = json.loads((tmp_path / "explain_cost_sklearn.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
