"""The validation benchmark's smoke mode measures what it claims and writes those figures to its results."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from fairmon.datasets import FEATURE_COLUMNS, SENSITIVE_COLUMNS
from fairmon.validation import build_suite

REPO = Path(__file__).resolve().parents[2]
TIMINGS = ("validate_good_s", "validate_bad_s", "build_suite_s", "first_call_s")


@pytest.mark.slow
def test_validation_benchmark_smoke(tmp_path: Path, benchmark_module: Callable[[str], ModuleType]) -> None:
    mod = benchmark_module("validation")
    rows = mod.main(["--smoke", "--out", str(tmp_path)])

    # one row of the smoke size, with the suite the benchmark says it validates
    sens = list(SENSITIVE_COLUMNS)
    suite = build_suite(
        mod.make_frame(2000, 0), features=list(FEATURE_COLUMNS), sensitive=sens, extra=sens, label="repaid",
        min_rows=100,
    )
    assert [r["rows"] for r in rows] == [1000]
    row = rows[0]
    assert row["expectations"] == len(suite.expectations) > 20
    for key in TIMINGS:
        assert 0 < row[key] < 120, (key, row[key])
    # the context cost is what the first call takes beyond a warm one (never negative: a first call
    # that the machine's noise made faster than the warm one reports 0, not a negative cost)
    assert row["context_s"] == pytest.approx(max(row["first_call_s"] - row["validate_good_s"], 0.0))
    assert row["gx_import_s"] is None  # measured in the full run only
    assert 0 < row["spec_load_ms"] < 10_000

    # the results files carry the same figures, the settings and the provenance
    data = json.loads((tmp_path / "validation_smoke.json").read_text())
    assert data["name"] == "validation_smoke"
    assert data["settings"] == {"smoke": True, "repeat": 1, "sizes": [1000], "reference_rows": 2000}
    assert data["commit"] and "loadavg" in json.dumps(data["machine"])
    assert data["rows"] == [json.loads(json.dumps(r, default=str)) for r in rows]
    with (tmp_path / "validation_smoke.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 1 and int(table[0]["rows"]) == 1000
    assert float(table[0]["validate_bad_s"]) == pytest.approx(row["validate_bad_s"])
    md = (tmp_path / "validation_smoke.md").read_text()
    assert md.startswith("# validation_smoke") and "validate_good_s" in md
