"""Window loaders: file partitions (local, fsspec) and SQL with bound :start/:end."""

from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from fairmon.config import FilesSource, SqlSource, parse_spec
from fairmon.errors import ConfigError, DatasetError
from fairmon.sources import load_window, window_path

START, END = dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6)


def _frame(day: str, n: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"day": [day] * n, "x": range(n), "sex": ["f", "m", "f"][:n]})


def test_csv_partition_for_the_window(tmp_path: Path) -> None:
    for day in ("2026-01-04", "2026-01-05", "2026-01-06"):
        _frame(day).to_csv(tmp_path / f"{day}.csv", index=False)
    got = load_window(FilesSource(pattern="{start:%Y-%m-%d}.csv"), START, END, base_dir=tmp_path)
    assert got["day"].unique().tolist() == ["2026-01-05"] and len(got) == 3


def test_spec_paths_resolve_against_the_spec_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "monitors").mkdir()
    _frame("2026-01-05").to_csv(tmp_path / "data" / "part-2026-01-05.csv", index=False)
    text = (
        "spec_version: 1\nidentity: {name: t}\nmodel: {registry_uri: r}\n"
        "data: {files: {pattern: '../data/part-{start:%Y-%m-%d}.csv'}}\n"
        "columns: {features: [x, sex], sensitive: [sex]}\nschedule: {start_date: 2026-01-01}\n"
    )
    (tmp_path / "monitors" / "t.yaml").write_text(text)
    from fairmon.config import load_spec

    spec = load_spec(tmp_path / "monitors" / "t.yaml")
    assert len(load_window(spec, START, END)) == 3


def test_env_var_in_pattern_and_fsspec_memory_url() -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    with fs.open("memory://fairmon-src/2026-01-05.csv", "w") as fh:
        _frame("2026-01-05", 2).to_csv(fh, index=False)
    src = FilesSource(pattern="${SRC_ROOT}/{start:%Y-%m-%d}.csv")
    got = load_window(src, START, END, env={"SRC_ROOT": "memory://fairmon-src"})
    assert len(got) == 2


def test_missing_partition_names_the_file(tmp_path: Path) -> None:
    src = FilesSource(pattern="{start:%Y-%m-%d}.csv")
    with pytest.raises(DatasetError, match=r"data file not found: .*2026-01-05\.csv"):
        load_window(src, START, END, base_dir=tmp_path)


def test_empty_partition(tmp_path: Path) -> None:
    pd.DataFrame({"x": []}).to_csv(tmp_path / "2026-01-05.csv", index=False)
    (tmp_path / "2026-01-06.csv").write_text("")
    src = FilesSource(pattern="{start:%Y-%m-%d}.csv")
    with pytest.raises(DatasetError, match=r"data file has no rows: .*2026-01-05\.csv"):
        load_window(src, START, END, base_dir=tmp_path)
    assert len(load_window(src, START, END, base_dir=tmp_path, allow_empty=True)) == 0
    with pytest.raises(DatasetError, match="no rows"):
        load_window(src, END, END + dt.timedelta(days=1), base_dir=tmp_path)


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pyarrow is a dependency, but an install without it (or fastparquet) must fail clearly
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a, **k: None if name in ("pyarrow", "fastparquet") else real_find_spec(name, *a, **k),
    )
    (tmp_path / "2026-01-05.parquet").write_bytes(b"PAR1")
    with pytest.raises(DatasetError, match="install pyarrow"):
        load_window(FilesSource(pattern="{start:%Y-%m-%d}.parquet"), START, END, base_dir=tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_parquet_partition(tmp_path: Path) -> None:  # pragma: no cover - runs where pyarrow is installed
    _frame("2026-01-05").to_parquet(tmp_path / "2026-01-05.parquet")
    got = load_window(FilesSource(pattern="{start:%Y-%m-%d}.parquet"), START, END, base_dir=tmp_path)
    assert len(got) == 3


def test_window_path_expands_and_resolves(tmp_path: Path) -> None:
    src = FilesSource(pattern="${R:-data}/{start:%Y/%m}/{end:%d}.csv")
    assert window_path(src, START, END, base_dir=tmp_path, env={}) == str(
        tmp_path / "data" / "2026" / "01" / "06.csv"
    )


def test_sql_source_without_url_is_a_config_error() -> None:
    src = SqlSource(query="select 1 where :start < :end", url_env="NO_SUCH_URL_VAR")
    with pytest.raises(ConfigError, match="set the environment variable NO_SUCH_URL_VAR"):
        load_window(src, START, END, env={})


@pytest.mark.postgres
def test_sql_window_binds_start_and_end(fresh_database_url: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(fresh_database_url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table scored (ts timestamp, amount numeric(10,2), sex text)"))
        conn.execute(
            sa.text("insert into scored values (:ts, :a, :s)"),
            [
                {"ts": dt.datetime(2026, 1, 4, 23, 59), "a": 1.5, "s": "f"},
                {"ts": dt.datetime(2026, 1, 5, 0, 0), "a": 2.5, "s": "m"},
                {"ts": dt.datetime(2026, 1, 5, 12, 0), "a": 3.5, "s": "f"},
                {"ts": dt.datetime(2026, 1, 6, 0, 0), "a": 4.5, "s": "m"},  # end is exclusive
            ],
        )
    spec = parse_spec(
        "spec_version: 1\nidentity: {name: t}\nmodel: {registry_uri: r}\n"
        "data: {sql: {query: 'select amount, sex from scored where ts >= :start and ts < :end order by ts',"
        " url_env: T_SRC_URL}}\n"
        "columns: {features: [amount, sex], sensitive: [sex]}\nschedule: {start_date: 2026-01-01}\n"
    )
    got = load_window(spec, START, END, engine=engine)
    assert got["amount"].tolist() == [2.5, 3.5] and got["amount"].dtype.kind == "f"
    # without an engine: the URL from the env variable the spec names
    got2 = load_window(spec, START, END, env={"T_SRC_URL": fresh_database_url})
    assert got2.equals(got)
    with pytest.raises(DatasetError, match="query returned no rows: select amount"):
        load_window(spec, dt.datetime(2027, 1, 1), dt.datetime(2027, 1, 2), engine=engine)
    bad = SqlSource(query="select nope from scored where ts >= :start and ts < :end")
    with pytest.raises(DatasetError, match="query failed on postgresql") as info:
        load_window(bad, START, END, engine=engine)
    assert info.value.retryable is False
    engine.dispose()


@pytest.mark.postgres
def test_sql_unreachable_database_is_retryable_and_hides_the_password() -> None:
    src = SqlSource(query="select 1 where :start < :end")
    url = "postgresql+psycopg2://fairmon:hunter2@127.0.0.1:1/nodb?connect_timeout=2"
    with pytest.raises(DatasetError) as info:
        load_window(src, START, END, engine=url)
    assert info.value.retryable is True
    assert "hunter2" not in str(info.value) and "127.0.0.1:1" in str(info.value)
