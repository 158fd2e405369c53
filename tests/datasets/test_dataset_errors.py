"""Unreadable benchmark files and a cache that cannot be written are DatasetErrors naming the file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from fairmon.datasets import _files, load_gesd
from fairmon.datasets._files import ERR_CACHE, ERR_READ, FILES, dataset_path
from fairmon.errors import DatasetError


@pytest.fixture
def data_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAIRMON_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FAIRMON_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_undecodable_dataset_file_names_the_file(data_dirs: Path) -> None:
    path = data_dirs / "data" / "gesd" / "german.csv"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GoodCustomer,Gender,Age\n\xff\xfe,\x80,1\n")
    with pytest.raises(DatasetError) as err:
        load_gesd("german")
    assert str(err.value).startswith(ERR_READ.format(file="gesd/german.csv", path=path, error="UnicodeDecodeError"))
    assert isinstance(err.value.__cause__, UnicodeDecodeError)


def test_unwritable_cache_is_a_dataset_error(data_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"GoodCustomer,Gender,Age\n1,0,30\n"
    spec = FILES["gesd/german.csv"]
    monkeypatch.setitem(FILES, spec.key, _files.DataFile(spec.key, spec.url, hashlib.sha256(body).hexdigest()))
    monkeypatch.setattr(_files, "_fetch", lambda url, timeout=60.0: body)
    (data_dirs / "cache").write_text("a file where the cache folder should be")
    with pytest.raises(DatasetError) as err:
        dataset_path(spec.key)
    assert str(err.value).startswith(
        ERR_CACHE.format(file=spec.key, cache_dir=data_dirs / "cache", error="")
    )
    assert isinstance(err.value.__cause__, OSError)
