"""A failed check's message names the offending value, not values that are fine (found trying the product
as a new user: one 'abc' in a numeric column was reported as "values like '137.7', '16.3'", and one
'yes' in a 0/1 label as "values not in the reference data: ['0', '1', 'yes']")."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from fairmon.validation import build_suite, validate


def _reference(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"income": rng.uniform(10, 200, n).round(1), "sex": rng.choice(["female", "male"], n),
                         "repaid": rng.integers(0, 2, n)})


def _as_csv(frame: pd.DataFrame) -> pd.DataFrame:
    """The window as fairmon reads it: one word in a column makes pandas read the whole column as text."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


def _messages(window: pd.DataFrame) -> dict[str, str]:
    suite = build_suite(_reference(), features=["income"], sensitive=["sex"], label="repaid", min_rows=10)
    return {f"{f['check']}:{f['column']}": f["message"] for f in validate(window, suite).failed}


def test_a_word_in_a_numeric_column_is_named() -> None:
    window = _reference().astype({"income": object})
    window.loc[17, "income"] = "abc"
    messages = _messages(_as_csv(window))
    assert "['abc']" in messages["type:income"] and "1 value(s) that are not numbers" in messages["type:income"]
    assert "137" not in messages["type:income"]


def test_a_word_in_a_zero_one_label_is_the_only_value_named() -> None:
    window = _reference().astype({"repaid": object})
    window.loc[3, "repaid"] = "yes"
    messages = _messages(_as_csv(window))
    assert messages["domain:repaid"] == "column 'repaid' has values not in the reference data: ['yes']"


def test_a_float_label_column_names_only_the_new_class() -> None:
    """A gap makes the label column float: 0.0 and 1.0 are the reference's 0 and 1 (a reviewer found text
    comparison naming them as unseen)."""
    window = _reference().astype({"repaid": float})
    window.loc[3, "repaid"], window.loc[4, "repaid"] = 2.0, float("nan")
    assert _messages(window)["domain:repaid"] == "column 'repaid' has values not in the reference data: [2.0]"


def test_a_reference_lacking_a_declared_column_names_the_spec_and_the_file() -> None:
    """Found trying the product: a spec feature 'incme' (a typo) failed the run with "reference data lacks
    declared column(s) ['incme']", naming neither the reference file nor the spec."""
    import pytest

    from fairmon.config import MonitorSpec
    from fairmon.errors import DatasetError
    from fairmon.validation._monitor import suite_from_spec

    spec = MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["incme", "sex"], "sensitive": ["sex"], "label": "repaid"},
        "schedule": {"start_date": "2026-01-01"}, "validation": {"reference_data": "ref.csv"},
    })
    with pytest.raises(DatasetError, match=r"^m: validation reference ref\.csv: reference data lacks declared "
                                           r"column\(s\) \['incme'\]"):
        suite_from_spec(_reference(), spec)
