"""RUMIE's full-window evaluation without the window's encoded matrix (issue 21 req 4).

A window mined on a sample (``max_rows``) is encoded only for the sample: the group is evaluated on
every other row from the raw columns (the reported rules) or block by block (tree, Enum, IE cut). The
numbers must be those of the eager path, which encodes the whole window first (a schema passed to
``mine`` is applied up front, so ``schema=FeatureSchema.fit(X)`` is the eager reference).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from _rumie_data import planted_frame

from fairmon.errors import SchemaError
from fairmon.fairness import RuleSearchSettings, _rumie_inputs
from fairmon.fairness.rumie import held_out_test, mine
from fairmon.schema import FeatureSchema

KW: dict[str, Any] = {"k": 4, "alpha": 0.4, "beta": 0.6, "iterations": 200, "random_state": 3}
FIELDS = ("status", "rule", "rules", "dscore", "honest_dscore", "p_value", "group_size", "honest_group_size",
          "n_mined", "n_honest", "within_bounds")


def _encoded_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the number of rows of every FeatureSchema.transform call."""
    seen: list[int] = []
    real = FeatureSchema.transform

    def spy(self: FeatureSchema, df: pd.DataFrame, **kw: Any) -> np.ndarray:
        seen.append(len(df))
        return real(self, df, **kw)

    monkeypatch.setattr(FeatureSchema, "transform", spy)
    return seen


@pytest.mark.parametrize("options", [
    {},  # IE-DT with the rule search: the reported rules, decided on the raw columns
    {"rule_search": RuleSearchSettings(enabled=False)},  # IE-DT's pruned tree on encoded blocks
    {"method": "ie"},  # IE's linear cut on encoded blocks
])
def test_sampled_window_is_never_encoded_whole_and_matches_the_eager_path(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    X, fav, _ = planted_frame(9_000, gap=0.25, random_state=5)
    eager = mine(X, fav, schema=FeatureSchema.fit(X), max_rows=2_000, **KW, **options)
    monkeypatch.setattr(_rumie_inputs, "ENCODE_CHUNK_ROWS", 1_234)  # several blocks, the last one short
    seen = _encoded_rows(monkeypatch)
    lazy = mine(X, fav, max_rows=2_000, **KW, **options)
    assert lazy.status == "ok" and lazy.n_mined == 2_000 and lazy.n_honest == 7_000
    assert seen and max(seen) == 2_000  # the mining sample; the window only in blocks of 1,234 rows
    if options:
        assert seen.count(1_234) == 9_000 // 1_234 and 9_000 % 1_234 in seen
    else:
        assert seen == [2_000]  # the reported rules need no encoding at all
    for name in FIELDS:
        assert getattr(lazy, name) == getattr(eager, name), name
    assert lazy.significance == eager.significance
    assert np.array_equal(lazy.mask, eager.mask)


def test_unsampled_window_and_split_test_match_the_eager_path() -> None:
    X, fav, _ = planted_frame(1_500, gap=0.3, random_state=6)
    schema = FeatureSchema.fit(X)
    lazy, eager = mine(X, fav, **KW), mine(X, fav, schema=schema, **KW)
    for name in FIELDS:
        assert getattr(lazy, name) == getattr(eager, name), name
    assert lazy.significance == eager.significance and np.array_equal(lazy.mask, eager.mask)
    assert held_out_test(X, fav, **KW) == held_out_test(X, fav, schema=schema, **KW)


def test_a_given_schema_still_refuses_an_unseen_category_up_front() -> None:
    X, fav, _ = planted_frame(600, random_state=1)
    schema = FeatureSchema.fit(X.iloc[:300].assign(colour="red"))
    with pytest.raises(SchemaError, match="not seen when the schema was fitted"):
        mine(X, fav, schema=schema, max_rows=200, **KW)
