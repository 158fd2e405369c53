"""``fairmon spec check`` prints the estimated explanation cost of a window (issue 21): measured on the
registered model when the registry has it, otherwise with the stated assumption."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairmon.cli import main
from fairmon.config import load_spec
from fairmon.explain.cost import ASSUMED_SECONDS_PER_ROW, estimate

SPEC = """\
spec_version: 1
identity: {{name: m}}
model: {{registry_uri: registry}}
data:
  files: {{pattern: "data/{{start:%Y-%m-%d}}.csv"}}
columns:
  features: [a, b]
  extra: [sex]
  sensitive: [sex]
schedule:
  start_date: 2026-01-01
{extra}"""


def _register(tmp_path: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model, Registry
    from fairmon.schema import FeatureSchema

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    schema = FeatureSchema.fit(frame)
    model = Model(LogisticRegression().fit(schema.transform(frame), frame["a"] > 0), schema, framework="sklearn")
    Registry(str(tmp_path / "registry")).register(model, name="m")


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str = "") -> dict:  # type: ignore[type-arg]
    (tmp_path / "m.yaml").write_text(SPEC.format(extra=extra))
    assert main(["spec", "check", str(tmp_path / "m.yaml"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["specs"][0]["cost"]  # type: ignore[no-any-return]


def test_without_the_model_the_cost_says_what_it_assumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cost = _check(tmp_path, capsys)
    assert cost["assumed"] and "model not loaded" in cost["line"] and "assumed" in cost["line"]
    assert cost["seconds_per_row"] == ASSUMED_SECONDS_PER_ROW["sklearn"]
    spec = load_spec(tmp_path / "m.yaml")
    expected = estimate(spec.explanations, n_rows=None, n_attributes=1, seconds_per_row=cost["seconds_per_row"])
    assert cost["cpu_s"] == pytest.approx(expected.cpu_seconds) and cost["evaluations"] == expected.evaluations


def test_with_the_registered_model_the_price_is_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _register(tmp_path)
    cost = _check(tmp_path, capsys, "explanations:\n  budget_cpu_s: 0.5\n")
    assert not cost["assumed"] and "sklearn" in cost["basis"] and "measured" in cost["basis"]
    assert cost["seconds_per_row"] > 0 and cost["cpu_s"] > 0
    assert cost["budget_cpu_s"] == 0.5 and "budget_cpu_s 0.5" in cost["line"]
    assert cost["budget_estimate_cpu_s"] <= 0.5 or not cost["budget_fits"]


def test_the_text_output_has_a_cost_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.yaml").write_text(SPEC.format(extra="explanations:\n  enabled: false\n"))
    assert main(["spec", "check", str(tmp_path / "m.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok ") and out[1] == "cost   explanations disabled: no explanation cost"
