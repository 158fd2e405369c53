"""The window's rows in memory (issue 21 req 4): text as categoricals, raw-input models get text back,
chunked scoring equals whole-window scoring, the data artifact is read once per process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairmon.config import MonitorSpec
from fairmon.config._monitor import EXAMPLE
from fairmon.errors import SchemaError
from fairmon.pipeline.artifacts import ArtifactStore
from fairmon.pipeline.frames import as_categories, as_texts, predict, predict_proba, window_columns
from fairmon.registry.model import Model
from fairmon.schema import FeatureSchema


def _frame(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "region": pd.Series(rng.choice(["north", "south", "east"], n), dtype="str"),
        "kind": pd.Series(rng.choice(["a", "b"], n), dtype=object),
        "mixed": pd.Series([1, "1"] * (n // 2), dtype=object),
    })


def test_text_columns_become_categoricals_of_the_same_texts() -> None:
    frame = _frame()
    frame.loc[3, "kind"] = None
    out = as_categories(frame)
    assert isinstance(out["region"].dtype, pd.CategoricalDtype) and isinstance(out["kind"].dtype, pd.CategoricalDtype)
    assert out["age"].dtype == frame["age"].dtype and out["mixed"].dtype == object  # numbers, mixed: unchanged
    assert out["region"].astype(str).tolist() == frame["region"].tolist()
    assert out["kind"].isna().tolist() == frame["kind"].isna().tolist()
    assert frame["region"].dtype == "str"  # the input frame is not changed
    back = as_texts(out)
    assert back["region"].dtype == frame["region"].dtype and back["kind"].dtype == object
    assert back["region"].tolist() == frame["region"].tolist() and back["kind"].tolist() == frame["kind"].tolist()


def test_categories_survive_the_parquet_artifact_and_it_is_read_once(tmp_path: Path) -> None:
    a = ArtifactStore(tmp_path, "m", "2026-01-05T000000Z", "a1")
    a.put_frame("data", as_categories(_frame()))
    first = a.get_frame("data")
    assert isinstance(first["region"].dtype, pd.CategoricalDtype) and as_texts(first)["region"].dtype == "str"
    (tmp_path / "m" / "2026-01-05T000000Z" / "a1" / "data.parquet").unlink()  # a second read would fail
    second = a.get_frame("data")
    first["age"] = -1  # a step changing its copy does not change what the next step gets
    assert (second["age"] >= 18).all() and (a.get_frame("data")["age"] >= 18).all()
    a.put_frame("data", _frame(10))  # a new frame replaces the kept one
    assert len(a.get_frame("data")) == 10
    other = ArtifactStore(tmp_path, "m", "2026-01-05T000000Z", "a1")  # another process: reads the file
    assert len(other.get_frame("data")) == 10


def _model() -> Model:
    ref = _frame(500, seed=1)[["age", "region"]]
    schema = FeatureSchema.fit(ref)
    y = (ref["age"] < 40).to_numpy()
    return Model(LogisticRegression().fit(schema.transform(ref), y), schema, framework="sklearn")


def test_chunked_scoring_equals_scoring_the_window_whole() -> None:
    model = _model()
    X = as_categories(_frame(1000))[["age", "region"]]
    whole = model.predict_proba(_frame(1000)[["age", "region"]])
    assert np.array_equal(predict_proba(model, X, chunk_rows=128), whole)
    assert np.array_equal(predict(model, X, chunk_rows=128), (whole[:, 1] >= model.threshold).astype(int))


def test_a_chunk_the_schema_refuses_gives_the_whole_windows_error() -> None:
    model = _model()
    X = _frame(1000)[["age", "region"]].copy()
    X.loc[[10, 900], "region"] = ["west", "up"]  # unseen, in the first and in the last chunk
    with pytest.raises(SchemaError) as whole:
        model.predict_proba(X)
    with pytest.raises(SchemaError) as chunked:
        predict_proba(model, as_categories(X), chunk_rows=128)
    assert str(chunked.value) == str(whole.value) and "up" in str(chunked.value)


def test_window_columns_are_the_specs_and_its_suites(tmp_path: Path) -> None:
    spec = MonitorSpec.model_validate({**EXAMPLE, "validation": {"enabled": False}})
    cols = window_columns(spec)
    assert cols is not None and set(spec.columns.all) <= set(cols) and set(spec.columns.sensitive) <= set(cols)
