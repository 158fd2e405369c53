"""Great Expectations validation: each kind of bad batch fails with the expectation that caught it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairmon.config import parse_spec
from fairmon.errors import ConfigError, DatasetError, DataValidationError
from fairmon.validation import (
    SUITE_FORMAT_VERSION,
    Suite,
    build_suite,
    ensure_suite,
    load_suite,
    save_suite,
    validate,
    validate_window,
)
from fairmon.validation._runner import MSG_GROUPS, MSG_MISSING_COLUMN, MSG_ROWS

COLUMNS = {
    "features": ["age", "income", "region"],
    "extra": ["sex", "race"],  # protected attributes withheld from the model
    "sensitive": ["sex", "race"],
    "label": "repaid",
    "decision": "approved",
    "score": "score",
}


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": np.round(rng.gamma(4.0, 12.0, n), 2),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "sex": rng.choice(["female", "male"], n),
            "race": rng.choice(["white", "black", "asian"], n, p=[0.6, 0.25, 0.15]),
            "repaid": rng.integers(0, 2, n),
            "approved": rng.integers(0, 2, n),
            "score": rng.uniform(0, 1, n),
            "applicant_id": np.arange(n),  # undeclared columns are ignored
        }
    )


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return _frame(2000, 0)


@pytest.fixture(scope="module")
def window() -> pd.DataFrame:
    return _frame(400, 1)


@pytest.fixture(scope="module")
def suite(reference: pd.DataFrame) -> Suite:
    return build_suite(reference, **COLUMNS, min_rows=200, max_null_fraction=0.05, name="credit")  # type: ignore[arg-type]


def test_good_batch_passes(suite: Suite, window: pd.DataFrame) -> None:
    report = validate(window, suite)
    assert report.success, report.summary()
    assert report.failed == [] and report.n_rows == 400
    assert report.n_expectations == len(suite.expectations) > 20
    json.dumps(report.to_dict())  # plain JSON


def test_suite_covers_every_rule(suite: Suite) -> None:
    checks = {(e["meta"]["check"], e["kwargs"].get("column")) for e in suite.expectations}
    assert ("min_rows", None) in checks
    for col in ("age", "income", "region", "sex", "race", "repaid", "approved", "score"):
        assert ("column", col) in checks and ("type", col) in checks
    assert {("range", "age"), ("range", "income"), ("range", "score")} <= checks
    assert {
        ("domain", "region"),
        ("domain", "sex"),
        ("domain", "race"),
        ("domain", "repaid"),
        ("domain", "approved"),
    } <= checks
    assert {("groups", "sex"), ("groups", "race")} <= checks
    assert ("nulls", "repaid") not in checks  # labels may be pending
    income = next(
        e for e in suite.expectations if e["meta"]["check"] == "range" and e["kwargs"]["column"] == "income"
    )
    assert income["kwargs"]["min_value"] == 0.0  # non-negative reference keeps a non-negative bound
    assert income["kwargs"]["mostly"] == 0.99


def _bad_batches(w: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, list[tuple[str, str | None]]]]:
    idx = np.arange(len(w))
    return {
        "missing-column": (w.drop(columns=["income"]), [("column", "income")]),
        "wrong-type": (w.assign(age=w["age"].astype(str) + " years"), [("type", "age")]),
        "nulls-in-sensitive": (w.assign(sex=w["sex"].where(idx % 10 != 0)), [("nulls", "sex")]),
        "unseen-category": (
            w.assign(region=w["region"].where(idx % 7 != 0, "atlantis")),
            [("domain", "region")],
        ),
        "missing-protected-group": (w[w["race"] != "asian"], [("groups", "race")]),
        "too-few-rows": (w.iloc[:120], [("min_rows", None)]),
        "unit-change": (w.assign(income=w["income"] * 1000), [("range", "income")]),
        "label-domain": (w.assign(repaid=w["repaid"].replace({1: 2})), [("domain", "repaid")]),
        "decision-domain": (w.assign(approved=w["approved"].replace({0: -1})), [("domain", "approved")]),
        "too-many-nulls": (w.assign(score=w["score"].where(idx % 5 != 0)), [("nulls", "score")]),
    }


CASES = [
    "missing-column",
    "wrong-type",
    "nulls-in-sensitive",
    "unseen-category",
    "missing-protected-group",
    "too-few-rows",
    "unit-change",
    "label-domain",
    "decision-domain",
    "too-many-nulls",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_batch_fails_with_its_expectation(suite: Suite, window: pd.DataFrame, case: str) -> None:
    frame, expected = _bad_batches(window)[case]
    report = validate(frame, suite)
    assert not report.success
    assert report.failed_checks == expected, report.summary()
    f = report.failed[0]
    assert set(f) >= {"expectation_type", "expectation", "check", "column", "observed", "expected", "message"}
    assert f["expectation_type"].startswith("expect_")
    json.dumps(report.to_dict())


def test_failure_details_name_what_was_observed(suite: Suite, window: pd.DataFrame) -> None:
    batches = _bad_batches(window)
    r = validate(batches["missing-column"][0], suite)
    assert r.failed[0]["message"] == MSG_MISSING_COLUMN.format(column="income")
    r = validate(batches["missing-protected-group"][0], suite)
    assert r.failed[0]["observed"]["missing_groups"] == ["asian"]
    assert r.failed[0]["message"] == MSG_GROUPS.format(column="race", groups=["asian"])
    r = validate(batches["unseen-category"][0], suite)
    assert r.failed[0]["observed"]["unseen"] == ["atlantis"]
    r = validate(batches["nulls-in-sensitive"][0], suite)
    assert r.failed[0]["observed"]["null_fraction"] == pytest.approx(0.1, abs=1e-9)
    r = validate(batches["too-few-rows"][0], suite)
    assert r.failed[0]["observed"] == 120 and r.failed[0]["message"] == MSG_ROWS.format(
        rows=120, min_rows=200
    )
    r = validate(batches["unit-change"][0], suite)
    assert r.failed[0]["observed"]["outside_fraction"] > 0.9
    r = validate(batches["wrong-type"][0], suite)
    assert "expected numeric" in r.failed[0]["message"]


def test_tolerated_deviations_pass(suite: Suite, window: pd.DataFrame) -> None:
    idx = np.arange(len(window))
    pending_labels = window.assign(repaid=np.nan)  # labels not arrived yet
    few_nulls = window.assign(income=window["income"].where(idx % 50 != 0))  # 2% < 5% allowed
    one_outlier = window.assign(income=np.where(idx == 0, 1e6, window["income"]))  # 0.25% < 1% allowed
    categorical_dtype = window.assign(region=window["region"].astype("category"))
    for frame in (pending_labels, few_nulls, one_outlier, categorical_dtype):
        report = validate(frame, suite)
        assert report.success, report.summary()


def test_raise_for_failures(suite: Suite, window: pd.DataFrame) -> None:
    assert validate(window, suite).raise_for_failures().success
    report = validate(window.drop(columns=["region"]), suite)
    with pytest.raises(
        DataValidationError, match="data validation failed .*column 'region' is missing"
    ) as info:
        report.raise_for_failures()
    assert info.value.failed == report.failed


def test_suite_json_round_trip_and_versioning(suite: Suite, tmp_path: Path) -> None:
    path = save_suite(suite, tmp_path / "s" / "suite.json")
    data = json.loads(Path(path).read_text())
    assert data["format"] == "fairmon.validation.suite" and data["format_version"] == SUITE_FORMAT_VERSION
    assert data["fingerprint"] == suite.fingerprint and data["revision"] == 1
    loaded = load_suite(path)
    assert loaded == suite and loaded.fingerprint == suite.fingerprint
    # the same reference → the same suite (deterministic)
    again = build_suite(_frame(2000, 0), **COLUMNS, min_rows=200, name="credit")  # type: ignore[arg-type]
    assert again.fingerprint == suite.fingerprint
    # hand edits are detected; other formats are refused
    data["expectations"][0]["kwargs"]["min_value"] = 1
    Path(path).write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="edited by hand"):
        load_suite(path)
    Path(path).write_text(json.dumps({**data, "format_version": 99}))
    with pytest.raises(ConfigError, match="format_version 99"):
        load_suite(path)
    with pytest.raises(ConfigError, match="suite file not found"):
        load_suite(tmp_path / "nope.json")


def test_build_suite_input_errors(reference: pd.DataFrame) -> None:
    with pytest.raises(DatasetError, match="no rows"):
        build_suite(reference.iloc[:0], features=["age"], sensitive=["sex"])
    with pytest.raises(DatasetError, match=r"lacks declared column\(s\) \['zip'\]"):
        build_suite(reference, features=["age", "zip"], sensitive=["sex"])


def test_allow_unseen_categories_for_features(reference: pd.DataFrame, window: pd.DataFrame) -> None:
    lax = build_suite(
        reference, features=["region"], sensitive=["sex"], min_rows=1, allow_unseen_categories=True
    )
    frame = window.assign(region="atlantis")
    assert validate(frame, lax).success
    # sensitive attributes stay strict
    assert validate(frame.assign(sex="unknown"), lax).failed_checks == [("domain", "sex"), ("groups", "sex")]


SPEC = """\
spec_version: 1
identity: {{name: credit}}
model: {{registry_uri: registry}}
data: {{files: {{pattern: "data/{{start:%Y-%m-%d}}.csv"}}}}
columns:
  features: [age, income, region]
  extra: [sex, race]
  sensitive: [sex, race]
  label: repaid
schedule: {{start_date: 2026-01-01}}
validation: {{reference_data: ref/reference.csv, suite_path: suites/credit.json, min_rows: {min_rows}}}
"""


def test_ensure_suite_builds_once_and_versions_rebuilds(
    tmp_path: Path, reference: pd.DataFrame, window: pd.DataFrame
) -> None:
    (tmp_path / "ref").mkdir()
    reference.to_csv(tmp_path / "ref" / "reference.csv", index=False)
    spec_path = tmp_path / "credit.yaml"
    spec_path.write_text(SPEC.format(min_rows=100))
    from fairmon.config import load_spec

    spec = load_spec(spec_path)
    s1 = ensure_suite(spec)
    assert (tmp_path / "suites" / "credit.json").is_file() and s1.revision == 1
    assert s1.reference["location"] == "ref/reference.csv" and s1.reference["rows"] == 2000
    assert ensure_suite(spec) == s1  # loaded, not rebuilt
    report = validate_window(spec, window)
    assert report.success and report.suite_fingerprint == s1.fingerprint
    # a settings change rebuilds: revision 2, the previous suite archived beside it
    spec_path.write_text(SPEC.format(min_rows=500))
    spec2 = load_spec(spec_path)
    s2 = ensure_suite(spec2)
    assert s2.revision == 2 and s2.previous == s1.fingerprint
    assert load_suite(tmp_path / "suites" / "credit.r1.json") == s1
    assert validate_window(spec2, window).failed_checks == [("min_rows", None)]


def test_ensure_suite_needs_validation_enabled() -> None:
    spec = parse_spec(SPEC.format(min_rows=1).replace("validation: {", "validation: {enabled: false, "))
    with pytest.raises(ConfigError, match="validation is disabled"):
        ensure_suite(spec)
