"""The RUMIE benchmarks run in their ``--smoke`` mode and write their results files."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # benchmark smoke runs

REPO = Path(__file__).resolve().parents[2]


def _load(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / name / "run.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_calibration_smoke(tmp_path: Path) -> None:
    assert _load("rumie_calibration").main(["--smoke", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "rumie_calibration.json").read_text())
    assert data["commit"] and data["machine"]["cpu_count"]
    kinds = {r["kind"]: r for r in data["rows"]}
    assert kinds["null"]["windows"] == 4 and kinds["planted"]["windows"] == 2
    for r in kinds.values():
        assert 0.0 <= r["rate_p_lt_0.05"] <= 1.0
    assert (tmp_path / "rumie_calibration.md").read_text().startswith("# rumie_calibration")
    assert (tmp_path / "rumie_calibration_windows.csv").exists()


@pytest.mark.datasets
def test_paper_smoke(tmp_path: Path, data_dir: Path) -> None:
    assert _load("rumie_paper").main(["--smoke", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "rumie_paper.json").read_text())["rows"]
    assert {r["method"] for r in rows} == {"ie", "ie-dt"}
    for r in rows:
        assert r["dataset"] == "compas" and r["within_bounds"] and r["dscore_honest"] is not None
    grid = json.loads((tmp_path / "rumie_paper_grid.json").read_text())["rows"]
    assert {g["method"] for g in grid} == {"ie", "ie-dt", "enum"}
    assert "dscore_honest" in (tmp_path / "rumie_paper.csv").read_text().splitlines()[0]
