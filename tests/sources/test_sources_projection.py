"""Column projection of the window loaders: only the monitor's columns are read, when the source has
them all (Parquet columns, CSV usecols, a SQL select list); a source lacking one is read whole."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from fairmon.config import FilesSource, SqlSource
from fairmon.errors import DatasetError
from fairmon.sources import load_window

START, END = dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6)
FRAME = pd.DataFrame({"id": [1, 2, 3], "sex": ["f", "m", "f"], "x": [0.5, 1.5, 2.5], "note": ["a", "b", "c"]})


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_file_reads_only_the_wanted_columns_in_file_order(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"2026-01-05.{fmt}"
    FRAME.to_csv(path, index=False) if fmt == "csv" else FRAME.to_parquet(path)
    src = FilesSource(pattern="{start:%Y-%m-%d}." + fmt, format=fmt)
    got = load_window(src, START, END, base_dir=tmp_path, columns=["x", "sex"])
    assert list(got.columns) == ["sex", "x"]
    assert got["x"].tolist() == [0.5, 1.5, 2.5] and got["sex"].tolist() == ["f", "m", "f"]
    whole = load_window(src, START, END, base_dir=tmp_path)
    assert list(whole.columns) == ["id", "sex", "x", "note"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_file_lacking_a_wanted_column_is_read_whole(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"2026-01-05.{fmt}"
    FRAME.to_csv(path, index=False) if fmt == "csv" else FRAME.to_parquet(path)
    src = FilesSource(pattern="{start:%Y-%m-%d}." + fmt, format=fmt)
    got = load_window(src, START, END, base_dir=tmp_path, columns=["x", "income"])
    assert list(got.columns) == ["id", "sex", "x", "note"]  # so the missing-column check names them


def test_corrupt_parquet_with_columns_is_still_a_dataset_error(tmp_path: Path) -> None:
    (tmp_path / "2026-01-05.parquet").write_bytes(b"not parquet")
    src = FilesSource(pattern="{start:%Y-%m-%d}.parquet", format="parquet")
    with pytest.raises(DatasetError, match="cannot read parquet data file"):
        load_window(src, START, END, base_dir=tmp_path, columns=["x"])


def test_sql_select_list_over_the_window_query(fresh_database_url: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(fresh_database_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE events (ts timestamp, sex text, x float, note text)"))
            conn.execute(sa.text("INSERT INTO events VALUES ('2026-01-05 10:00', 'f', 1.0, 'a'), "
                                 "('2026-01-05 11:00', 'm', 2.0, 'b'), ('2026-01-06 10:00', 'f', 3.0, 'c')"))
        src = SqlSource(query="SELECT * FROM events WHERE ts >= :start AND ts < :end ORDER BY ts;")
        got = load_window(src, START, END, engine=engine, columns=["x", "sex"])
        assert list(got.columns) == ["sex", "x"] and got["x"].tolist() == [1.0, 2.0]
        whole = load_window(src, START, END, engine=engine, columns=["x", "income"])  # lacks one: all columns
        assert list(whole.columns) == ["ts", "sex", "x", "note"] and len(whole) == 2
        commented = SqlSource(query="SELECT * FROM events WHERE ts >= :start AND ts < :end -- the daily window")
        got = load_window(commented, START, END, engine=engine, columns=["x", "sex"])  # the comment ends its line
        assert list(got.columns) == ["sex", "x"] and len(got) == 2
        bad = SqlSource(query="SELECT * FROM no_such_table WHERE ts >= :start AND ts < :end")
        with pytest.raises(DatasetError, match=r"query: SELECT \* FROM no_such_table"):  # names the user's query
            load_window(bad, START, END, engine=engine, columns=["x"])
    finally:
        engine.dispose()
