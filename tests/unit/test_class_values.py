"""A word among numeric labels is bad data, not an unfavorable label (found trying the product: without
a validation suite one ``repaid=yes`` among 0/1 labels was counted as unfavorable, the run succeeded)."""

from __future__ import annotations

import pandas as pd

from fairmon.config import MonitorSpec
from fairmon.pipeline.checks import MSG_NOT_A_CLASS, model_input_failures


def _spec(**favorable: object) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a", "s"], "sensitive": ["s"], "label": "repaid"},
        "schedule": {"start_date": "2026-01-01"}, **({"favorable": favorable} if favorable else {}),
    })


def test_a_word_among_numeric_labels_is_named() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "s": list("xyxy"), "repaid": ["1", "0", "yes", "1"]})
    failed = model_input_failures(_spec(), frame, schema=None, scored=False)
    assert [(f["check"], f["column"]) for f in failed] == [("class_values", "repaid")]
    assert failed[0]["message"] == MSG_NOT_A_CLASS.format(
        what="label", column="repaid", count=1, values="['yes']", field="favorable.label_class", value=1)


def test_numeric_labels_and_a_named_class_pass() -> None:
    numbers = pd.DataFrame({"a": [1.0, 2.0], "s": ["x", "y"], "repaid": [1, 0]})
    assert model_input_failures(_spec(), numbers, schema=None, scored=False) == []
    as_text = numbers.assign(repaid=["1", "0"])  # a SQL source may hand numbers over as text
    assert model_input_failures(_spec(), as_text, schema=None, scored=False) == []
    words = numbers.assign(repaid=[">50K", "<=50K"])  # a class named by a word: any other value is unfavorable
    assert model_input_failures(_spec(**{"class": ">50K"}), words, schema=None, scored=False) == []
