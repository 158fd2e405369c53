"""Category encoding from factorize codes (issue 21 req 4): the same strings, codes and one-hot
matrix as the per-row ``str``/``pd.isna`` definition, across column types."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairmon.errors import SchemaError
from fairmon.schema import MISSING_CATEGORY, FeatureSchema, category_codes, category_strings


def _reference_strings(s: pd.Series) -> list[str]:
    return [MISSING_CATEGORY if pd.isna(v) else str(v) for v in s.tolist()]


def _column(kind: int, n: int, rng: np.random.Generator) -> pd.Series:
    if kind == 0:
        s = pd.Series(rng.choice(["north", "south", "o'x", "<NA>", "10", "2"], n), dtype=object)
        return s.mask(rng.random(n) < 0.2)
    if kind == 1:
        return pd.Series(pd.Categorical(rng.choice(["b", "a"], n), categories=["a", "b", "c"])).mask(rng.random(n) < 0.1)
    if kind == 2:
        return pd.Series(rng.choice(np.array([1, 1.0, True, "1", None, 2], dtype=object), n), dtype=object)
    if kind == 3:
        return pd.Series(rng.choice([0.0, -0.0, 1.5, np.nan], n))
    if kind == 4:
        return pd.Series(rng.integers(0, 4, n)).astype("Int64").mask(rng.random(n) < 0.2)
    return pd.Series(rng.random(n) < 0.5)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 200), kind=st.integers(0, 5))
def test_strings_and_codes_equal_the_per_row_definition(seed: int, n: int, kind: int) -> None:
    rng = np.random.default_rng(seed)
    s = _column(kind, n, rng)
    ref = _reference_strings(s)
    assert category_strings(s).tolist() == ref
    cats = tuple(sorted(set(ref)))[: max(1, len(set(ref)) - 1)]  # leave one category out: unseen → -1
    index = {c: i for i, c in enumerate(cats)}
    assert category_codes(s, cats).tolist() == [index.get(v, -1) for v in ref]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 150))
def test_transform_equals_the_per_row_one_hot(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"c{k}": _column(k, n, rng) for k in range(6)})
    frame["x"] = rng.normal(size=n)
    schema = FeatureSchema.fit(frame, categorical=[f"c{k}" for k in range(6)])
    Z = schema.transform(frame)
    for col in schema.columns:
        sl = schema.slice_of(col.name)
        if col.kind == "categorical":
            ref = _reference_strings(frame[col.name])
            want = np.zeros((n, col.width))
            want[np.arange(n), [col.categories.index(v) for v in ref]] = 1.0
            np.testing.assert_array_equal(Z[:, sl], want)


def test_unseen_categories_are_named() -> None:
    schema = FeatureSchema.fit(pd.DataFrame({"r": ["a", "b"]}))
    with pytest.raises(SchemaError, match=r"\['z'\]"):
        schema.transform(pd.DataFrame({"r": ["a", "z", "z"]}))
    assert schema.transform(pd.DataFrame({"r": ["z", "b"]}), handle_unknown="ignore").tolist() == [[0, 0], [0, 1]]
