"""``fairmon spec``: check/show/schema/suite through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairmon.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_spec_check_example_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "check", str(REPO / "monitors"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and sorted(s["name"] for s in out["specs"]) == ["adult", "compas", "demo", "german"]


def test_spec_check_reports_each_broken_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "good.yaml").write_text((REPO / "monitors" / "german.yaml").read_text())
    (tmp_path / "bad.yaml").write_text("spec_version: 1\nidentity: {name: x}\nrumie: {k: 0}\n")
    assert main(["spec", "check", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "ok     " in captured.out and "good.yaml" in captured.out
    assert (
        "bad.yaml" in captured.err
        and "rumie.k" in captured.err
        and "model: missing required field" in captured.err
    )


def test_spec_show_fills_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "show", str(REPO / "monitors" / "compas.yaml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spec"]["rumie"]["iterations"] == 2500 and out["spec"]["favorable"]["class"] == "Low"
    assert len(out["fingerprint"]) == 64


def test_spec_schema_and_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "schema"]) == 0
    assert "spec_version" in json.loads(capsys.readouterr().out)["properties"]
    assert main(["spec", "show", "nope.yaml"]) == 2
    assert "nope.yaml: monitor spec file not found" in capsys.readouterr().err


def test_spec_suite_builds_from_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pandas as pd

    pd.DataFrame({"age": [20, 30, 40, 50], "sex": ["f", "m", "f", "m"]}).to_csv(
        tmp_path / "ref.csv", index=False
    )
    (tmp_path / "m.yaml").write_text(
        "spec_version: 1\nidentity: {name: m}\nmodel: {registry_uri: r}\n"
        "data: {files: {pattern: 'd/{start:%Y-%m-%d}.csv'}}\ncolumns: {features: [age, sex], sensitive: [sex]}\n"
        "schedule: {start_date: 2026-01-01}\nvalidation: {reference_data: ref.csv, suite_path: suite.json}\n"
    )
    assert main(["spec", "suite", str(tmp_path / "m.yaml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["revision"] == 1 and out["checks"]["groups"] == 1 and (tmp_path / "suite.json").is_file()
