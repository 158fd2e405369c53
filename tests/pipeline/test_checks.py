"""Unit tests of the window checks that run with or without a validation suite."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairmon.config import MonitorSpec
from fairmon.errors import ConfigError, SchemaError
from fairmon.pipeline.checks import (
    MAX_SENSITIVE_VALUES,
    check_columns,
    check_favorable_class,
    check_favorable_value,
    check_sensitive_categorical,
)
from fairmon.registry.model import Model

SPEC = MonitorSpec.model_validate({
    "spec_version": 1,
    "identity": {"name": "m"},
    "model": {"registry_uri": "r"},
    "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["a", "b"], "extra": ["s"], "sensitive": ["s"], "decision": "d"},
    "schedule": {"start_date": "2026-01-01"},
})


def test_missing_columns_are_named_with_their_fields_and_the_source() -> None:
    frame = pd.DataFrame({"a": [1], "d": [1]})
    with pytest.raises(SchemaError) as err:
        check_columns(SPEC, frame, window="2026-01-02", origin="/x/2026-01-02.csv")
    msg = str(err.value)
    assert msg.startswith("window data for m 2026-01-02 (/x/2026-01-02.csv) lacks column(s) "
                          "'b' (columns.features), 's' (columns.extra, columns.sensitive);"), msg
    check_columns(SPEC, pd.DataFrame({"a": [1], "b": [1], "s": [1], "d": [1]}), window="w", origin="o")


def test_a_numeric_sensitive_column_with_many_values_is_rejected() -> None:
    many = pd.DataFrame({"s": np.arange(MAX_SENSITIVE_VALUES + 1, dtype=float)})
    with pytest.raises(ConfigError, match=rf"sensitive column 's' has {MAX_SENSITIVE_VALUES + 1} distinct"):
        check_sensitive_categorical(SPEC, many, window="2026-01-02")
    check_sensitive_categorical(SPEC, pd.DataFrame({"s": np.arange(MAX_SENSITIVE_VALUES) % 20}), window="w")
    check_sensitive_categorical(SPEC, pd.DataFrame({"s": [f"g{i}" for i in range(100)]}), window="w")
    check_sensitive_categorical(SPEC, pd.DataFrame({"s": [True, False] * 50}), window="w")


def test_favorable_value_must_occur_unless_the_column_holds_one_value() -> None:
    with pytest.raises(ConfigError) as err:
        check_favorable_value(pd.Series([0, 1, 1], name="repaid"), "yes", what="label", field="favorable.label_class")
    assert str(err.value) == "label column 'repaid' has no value equal to favorable.label_class 'yes' (values [0, 1])"
    with pytest.raises(ConfigError, match="decision column 'd' has no value equal to favorable.class 'Low'"):
        check_favorable_value(pd.Series(["high", "medium"], name="d"), "Low", what="decision", field="favorable.class")
    check_favorable_value(pd.Series(["High", "Low", None], name="d"), "Low", what="decision", field="f")
    check_favorable_value(pd.Series([0.0, 1.0], name="d"), 1, what="decision", field="f")
    check_favorable_value(pd.Series([0, 0, np.nan], name="y"), 1, what="label", field="f")  # all unfavorable
    check_favorable_value(pd.Series([np.nan, np.nan], name="y"), "yes", what="label", field="f")  # pending


def test_favorable_class_must_be_a_model_class() -> None:
    assert Model.classes == (0, 1)
    for bad in ("yes", 2):
        with pytest.raises(ConfigError) as err:
            check_favorable_class(bad, Model.classes, what="model demo:v1")
        assert str(err.value) == f"favorable.class {bad!r} is not a class of model demo:v1 (classes [0, 1])"
    for ok in (0, 1, 1.0, True, "1"):
        check_favorable_class(ok, Model.classes, what="model demo:v1")
