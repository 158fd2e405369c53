"""fsspec, OS and Parquet errors of the data sources reach the caller as DatasetErrors naming the file."""

from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path

import pytest

from fairmon.config import FilesSource
from fairmon.errors import DatasetError
from fairmon.sources import (
    ERR_NOT_FOUND,
    ERR_READ_FAILED,
    ERR_STORAGE_FAILED,
    ERR_UNREACHABLE,
    file_exists,
    load_file,
    load_window,
)

START, END = dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6)


def test_missing_file_is_a_dataset_error_naming_it(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.csv")
    with pytest.raises(DatasetError) as err:
        load_file(path, "csv")
    assert str(err.value) == ERR_NOT_FOUND.format(path=path)
    assert isinstance(err.value.__cause__, FileNotFoundError)


def test_unknown_fsspec_protocol_is_a_dataset_error_naming_the_file() -> None:
    url = "nosuchproto://bucket/2026-01-05.csv"
    with pytest.raises(DatasetError) as err:
        file_exists(url)
    assert str(err.value).startswith(ERR_UNREACHABLE.format(path=url, error="ValueError: "))
    assert isinstance(err.value.__cause__, ValueError)


def test_missing_fsspec_backend_is_a_dataset_error_naming_the_file() -> None:
    # a scheme the spec accepts (config checks it) whose filesystem package is not installed here
    pytest.importorskip("fsspec")
    if importlib.util.find_spec("boxfs") is not None:  # pragma: no cover - only where boxfs is installed
        pytest.skip("boxfs is installed")
    pattern = "box://bucket/{start:%Y-%m-%d}.csv"
    with pytest.raises(DatasetError) as err:
        load_window(FilesSource(pattern=pattern), START, END)
    assert str(err.value).startswith(
        ERR_UNREACHABLE.format(path="box://bucket/2026-01-05.csv", error="ImportError: ")
    )
    assert isinstance(err.value.__cause__, ImportError)


def test_fsspec_memory_files_are_read(tmp_path: Path) -> None:
    import fsspec

    with fsspec.open("memory://fairmon-test/2026-01-05.csv", "w") as fh:
        fh.write("a,b\n1,2\n")
    assert file_exists("memory://fairmon-test/2026-01-05.csv")
    assert not file_exists("memory://fairmon-test/2026-01-06.csv")
    got = load_window(FilesSource(pattern="memory://fairmon-test/{start:%Y-%m-%d}.csv"), START, END)
    assert got.to_dict("list") == {"a": [1], "b": [2]}


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_corrupt_parquet_is_a_dataset_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-05.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(DatasetError) as err:
        load_file(str(path), "parquet")
    prefix = ERR_READ_FAILED.format(fmt="parquet", path=path, error="")
    assert str(err.value).startswith(prefix)
    assert err.value.__cause__ is not None


def test_undecodable_csv_is_a_dataset_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-05.csv"
    path.write_bytes(b"a,b\n\xff\xfe,\x80\n")
    with pytest.raises(DatasetError) as err:
        load_file(str(path), "csv")
    assert str(err.value).startswith(ERR_READ_FAILED.format(fmt="csv", path=path, error=""))
    assert isinstance(err.value.__cause__, UnicodeDecodeError)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="needs pyarrow")
def test_a_corrupt_parquet_body_is_the_datas_problem_though_pyarrow_raises_oserror(tmp_path: Path) -> None:
    """pyarrow reports a damaged footer as a bare ``OSError`` (no errno): still ``file_readable``, not storage."""
    import pandas as pd

    path = tmp_path / "2026-01-05.parquet"
    pd.DataFrame({"a": range(5000), "b": ["x"] * 5000}).to_parquet(path)
    raw = bytearray(path.read_bytes())
    footer = int.from_bytes(raw[-8:-4], "little")
    raw[-8 - footer:-8] = bytes(footer)  # zero the footer, keep the magic bytes
    path.write_bytes(bytes(raw))
    with pytest.raises(DatasetError) as err:
        load_file(str(path), "parquet")
    assert isinstance(err.value.__cause__, OSError) and err.value.__cause__.errno is None
    assert err.value.data_problem == "file_readable" and not err.value.retryable  # type: ignore[attr-defined]


@pytest.mark.parametrize(("raised", "retryable"), [
    (ConnectionResetError("connection reset by peer"), True),
    (TimeoutError("read timed out"), True),
    (OSError(5, "Input/output error"), True),  # EIO of a network filesystem
    (PermissionError(13, "Permission denied"), False),
])
def test_a_storage_failure_is_not_reported_as_bad_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: OSError, retryable: bool
) -> None:
    """A dropped connection must be retried, never make the window data_invalid with a data alert."""
    import pandas as pd

    path = tmp_path / "2026-01-05.csv"
    path.write_text("a,b\n1,2\n")

    def failing(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(pd, "read_csv", failing)
    with pytest.raises(DatasetError) as err:
        load_file(str(path), "csv")
    assert not hasattr(err.value, "data_problem")  # the window fails (and keeps any stored rows)
    assert err.value.retryable is retryable and err.value.__cause__ is raised
    assert str(err.value) == ERR_STORAGE_FAILED.format(
        fmt="csv", path=path, error=f"{type(raised).__name__}: {raised}", retry="; retryable" if retryable else "")
