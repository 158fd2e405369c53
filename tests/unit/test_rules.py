"""fairmon.rules: the one rule module (conditions, rule sets, membership, text, Jaccard)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import MethodError
from fairmon.rules import (
    ERR_RULE_COLUMN,
    ERR_RULE_OP,
    ERR_RULE_VALUE,
    Condition,
    RuleSet,
    jaccard,
    membership,
    parse_rules,
)


def test_membership_of_stored_conditions_and_jaccard() -> None:
    f = pd.DataFrame({"age": [20, 31, 45, 60], "region": ["north", "south", "east", "north"], "x": [0.1, 0.5, 0.9, 0.3]})
    conds = [[{"column": "age", "op": "<=", "value": 30}],
             [{"column": "region", "op": "=", "value": "north"}, {"column": "x", "op": "in (a, b]", "value": [0.2, 0.4]}]]
    m = membership(conds, f)
    assert m.tolist() == [True, False, False, True]
    assert membership([[{"column": "region", "op": "not in", "value": ["north", "east"]}]], f).tolist() == [
        False, True, False, False]
    assert membership([[{"column": "region", "op": "in", "value": ["north", "east"]}]], f).tolist() == [
        True, False, True, True]
    assert jaccard(m, np.array([True, True, False, False])) == pytest.approx(1 / 3)
    assert jaccard(np.zeros(3, bool), np.zeros(3, bool)) is None


def test_interval_and_category_subset_rules() -> None:
    X = pd.DataFrame({"age": [20, 40, 25, 60, 33], "region": ["north", "south", "east", "north", "west"]})
    rules = [[{"column": "age", "op": "in (a, b]", "value": [24, 35]}, {"column": "region", "op": "not in",
                                                                       "value": ["north"]}]]
    assert membership(rules, X).tolist() == [False, False, True, False, True]
    assert jaccard(np.array([False, False, True, False, False]), membership(rules, X)) == pytest.approx(0.5)


def test_errors_name_the_condition() -> None:
    X = pd.DataFrame({"age": [20, 40]})
    with pytest.raises(MethodError) as ei:
        membership([[{"column": "zip", "op": "=", "value": "1", "text": "zip = 1"}]], X)
    assert str(ei.value) == ERR_RULE_COLUMN.format(cond="zip = 1", column="zip")
    assert membership([[{"column": "zip", "op": "=", "value": "1"}]], X, on_missing="false").tolist() == [False, False]
    with pytest.raises(MethodError) as ei:
        membership([[{"column": "age", "op": "~", "value": 1, "text": "age ~ 1"}]], X)
    assert str(ei.value) == ERR_RULE_OP.format(cond="age ~ 1", op="~")
    with pytest.raises(MethodError) as ei:
        parse_rules("age <= old").membership(X)
    assert str(ei.value) == ERR_RULE_VALUE.format(cond="age <= old", value="old")


def test_parse_numeric_and_string_equality() -> None:
    df = pd.DataFrame({"n": [1, 2, 3], "c": ["1", "2", "x"], "age": [20, 30, 40]})
    assert parse_rules("n = 2").membership(df).tolist() == [False, True, False]
    assert parse_rules("c != x").membership(df).tolist() == [True, True, False]
    assert parse_rules("age < 30 OR age >= 40").membership(df).tolist() == [True, False, True]
    assert parse_rules("n > 1 AND c = 2").membership(df).tolist() == [False, True, False]


def test_missing_values_are_never_numeric_members_and_na_is_a_category() -> None:
    df = pd.DataFrame({"v": [1.0, np.nan, 3.0], "c": ["a", None, "b"]})
    assert parse_rules("v <= 5").membership(df).tolist() == [True, False, True]
    assert membership([[{"column": "c", "op": "=", "value": "<NA>"}]], df).tolist() == [False, True, False]


def test_round_trip_and_text() -> None:
    rs = RuleSet(((Condition("age", "in (a, b]", (25.0, 40.0)), Condition("region", "in", ("a", "b"))),
                  (Condition("x", ">", 1.5),)))
    assert rs.text == "age in (25, 40] AND region in {a, b} OR x > 1.5"
    assert rs.n_conditions == 3 and rs.columns == ["age", "region", "x"]
    assert RuleSet.from_dicts(rs.to_dicts()) == rs
