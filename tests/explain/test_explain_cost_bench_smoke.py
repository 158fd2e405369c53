"""The explanation-cost benchmark's smoke mode runs, writes its results files, and its cost model
rows are the cost model's (issue 21)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest


@pytest.mark.slow
def test_explain_cost_benchmark_smoke(tmp_path: Path, benchmark_module: Callable[[str], ModuleType]) -> None:
    mod = benchmark_module("explain_cost")
    rows = mod.main(["--smoke", "--out", str(tmp_path)])
    price = rows[0]["cpu_s"]
    assert rows[0]["row"] == "seconds per model row" and price > 0
    lime = [r for r in rows if r["row"].startswith("lime 1000")]
    assert lime and lime[0]["cpu_s"] > 0 and lime[0]["predicted_s"] == pytest.approx(1000 * price)
    totals = {r["row"]: r["predicted_s"] for r in rows if r["row"].startswith("window total")}
    assert totals["window total at previous defaults"] > 100 * totals["window total at current defaults"]
    data = json.loads((tmp_path / "explain_cost_sklearn.json").read_text())
    assert data["commit"] and data["settings"]["smoke"] is True and "loadavg" in data["machine"]
