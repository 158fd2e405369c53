"""Type expectations on text/categorical columns decided on the distinct values (issue 21 req 4).

GX checks a text column's type one row at a time (seconds per million rows and column); fairmon
decides a categorical's from its observed categories and a string column's from its dtype, and leaves
everything else (a failure, ``mostly``, an all-null column, other dtypes) to GX. The reports must be
the ones GX alone gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairmon.validation import _runner, build_suite, validate

COLUMNS: dict[str, Any] = {"features": ["age", "region"], "extra": ["sex"], "sensitive": ["sex"],
                           "label": "repaid"}


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 80, n), "region": rng.choice(["north", "south", "east"], n),
                         "sex": rng.choice(["female", "male"], n), "repaid": rng.integers(0, 2, n)})


def _gx_only(monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, suite: Any) -> dict[str, Any]:
    """The report with every type expectation left to GX (the behaviour before the fast path)."""
    with monkeypatch.context() as m:
        m.setattr(_runner, "_types_pass", lambda exp, frame: False)
        return _comparable(validate(frame, suite))


def _comparable(report: Any) -> dict[str, Any]:
    d = dict(report.to_dict())
    d.pop("seconds", None)
    return d


@pytest.fixture(scope="module")
def suite() -> Any:
    return build_suite(_frame(1000, 0), **COLUMNS, min_rows=50, name="types")


def _type_checks_sent_to_gx(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    sent: list[list[str]] = []
    real = _runner._gx_suite

    def spy(s: Any) -> Any:
        sent.append([e["kwargs"]["column"] for e in s.expectations if e["meta"]["check"] == "type"])
        return real(s)

    monkeypatch.setattr(_runner, "_gx_suite", spy)
    return sent


def test_categorical_and_string_text_columns_skip_gx_and_report_the_same(
    monkeypatch: pytest.MonkeyPatch, suite: Any
) -> None:
    w = _frame(300, 1)
    frame = w.assign(region=w["region"].astype("category"), sex=w["sex"].astype("str"))
    expected = _gx_only(monkeypatch, frame, suite)
    sent = _type_checks_sent_to_gx(monkeypatch)
    got = validate(frame, suite)
    assert got.success and _comparable(got) == expected
    assert sorted(sent[-1]) == ["age", "repaid"]  # region (categorical) and sex (str) decided without GX


def test_a_category_of_the_wrong_type_fails_in_gx_with_its_message(
    monkeypatch: pytest.MonkeyPatch, suite: Any
) -> None:
    w = _frame(300, 2)
    region = pd.Series(w["region"].to_numpy(dtype=object), dtype=object)
    region[::7] = 7  # an int among the texts
    frame = w.assign(region=region.astype("category"))
    expected = _gx_only(monkeypatch, frame, suite)
    got = validate(frame, suite)
    assert not got.success and _comparable(got) == expected
    (fail,) = [f for f in got.failed if f["check"] == "type"]
    assert fail["column"] == "region" and "7" in fail["message"] and "expected text" in fail["message"]


def test_unused_categories_and_all_null_columns(monkeypatch: pytest.MonkeyPatch, suite: Any) -> None:
    w = _frame(300, 3)
    # a wrong-typed category no row holds is not a value of the column: the check passes, as in GX
    region = pd.Categorical(w["region"], categories=["east", "north", "south", 5])
    all_null = pd.Series([None] * len(w), dtype="str")  # no value to decide on: GX decides
    for frame in (w.assign(region=region), w.assign(sex=all_null)):
        assert _comparable(validate(frame, suite)) == _gx_only(monkeypatch, frame, suite)
    assert validate(w.assign(region=region), suite).success
