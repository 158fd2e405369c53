"""A Parquet window's text columns read as categoricals from the file's dictionaries (issue 21 req 4).

The frame must be the one the text read followed by ``as_categories`` gives (the same values, the
same sorted categories, the same ``attrs``), across row groups whose dictionaries differ.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairmon._codes import TEXT_CATEGORIES
from fairmon.pipeline.frames import as_categories, as_texts
from fairmon.sources import load_file


def _write(path: Path) -> pd.DataFrame:
    parts = [
        pd.DataFrame({"region": ["north", "east", "north"], "n": [1, 2, 3], "sex": ["m", "f", None],
                      "empty": pd.Series([None] * 3, dtype="str"), "ignored": ["a", "b", "c"]}),
        pd.DataFrame({"region": ["west", None, "east"], "n": [4, 5, 6], "sex": ["f", "f", "f"],
                      "empty": pd.Series([None] * 3, dtype="str"), "ignored": ["d", "e", "f"]}),
    ]
    writer = None
    for part in parts:  # one row group each: each with its own dictionary
        table = pa.Table.from_pandas(part, preserve_index=False)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()
    return pd.concat(parts, ignore_index=True)


def test_dictionary_read_equals_text_read_then_categories(tmp_path: Path) -> None:
    path = str(tmp_path / "w.parquet")
    _write(Path(path))
    for columns in (None, ["sex", "region", "n", "empty"]):
        text = as_categories(load_file(path, "parquet", columns=columns))
        direct = load_file(path, "parquet", columns=columns, text_as_categories=True)
        assert isinstance(direct["region"].dtype, pd.CategoricalDtype)  # categorical straight from the file
        got = as_categories(direct)
        pd.testing.assert_frame_equal(got, text)
        assert got.attrs == text.attrs and set(got.attrs[TEXT_CATEGORIES]) == set(text.columns) - {"n"}
        pd.testing.assert_frame_equal(as_texts(got), as_texts(text))  # a raw-input model sees the same texts
    direct = load_file(path, "parquet", columns=["region", "n"], text_as_categories=True)
    assert list(direct.columns) == ["region", "n"] and direct["region"].cat.categories.tolist() == ["east", "north", "west"]


def test_csv_and_missing_columns_are_read_as_before(tmp_path: Path) -> None:
    frame = _write(tmp_path / "w.parquet")
    frame.to_csv(tmp_path / "w.csv", index=False)
    csv = load_file(str(tmp_path / "w.csv"), "csv", text_as_categories=True)
    pd.testing.assert_frame_equal(csv, load_file(str(tmp_path / "w.csv"), "csv"))
    whole = load_file(str(tmp_path / "w.parquet"), "parquet", columns=["region", "nope"], text_as_categories=True)
    assert list(whole.columns) == list(frame.columns)  # a column the file lacks: read whole, as before


def test_dictionary_texts_no_row_holds_are_not_categories(tmp_path: Path) -> None:
    path = str(tmp_path / "u.parquet")
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 2, 0], pa.int32()), pa.array(["z", "unused", "a"]))
    pq.write_table(pa.table({"c": arr}), path, store_schema=False)  # a string column with that dictionary
    assert pd.read_parquet(path, read_dictionary=["c"])["c"].cat.categories.tolist() == ["z", "unused", "a"]
    got = load_file(path, "parquet", text_as_categories=True)
    pd.testing.assert_frame_equal(got, as_categories(load_file(path, "parquet")))
    assert got["c"].cat.categories.tolist() == ["a", "z"]
