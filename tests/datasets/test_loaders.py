"""Dataset loaders: row counts, the official files' quirks, roles, download/no-network errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairmon.datasets import (
    ADULT_COLUMNS,
    Dataset,
    _files,
    load_adult,
    load_compas,
    load_dataset,
    load_german,
    load_gesd,
)
from fairmon.datasets._files import ERR_CHECKSUM, FILES, dataset_path, strip_banner
from fairmon.errors import DatasetError


@pytest.fixture(scope="module")
def adult(data_dir: Path) -> Dataset:
    return load_adult()


@pytest.mark.datasets
def test_adult_rows_and_quirks(adult: Dataset) -> None:
    f = adult.frame
    assert len(f) == 48_842
    assert (f["split"] == "train").sum() == 32_561 and (f["split"] == "test").sum() == 16_281
    assert set(f["income"].unique()) == {">50K", "<=50K"}  # test labels lost their trailing '.'
    assert int((f["income"] == ">50K").sum()) == 11_687
    assert not (f.select_dtypes(include="object") == "?").any().any()
    assert f["workclass"].isna().sum() == 2_799 and f["native_country"].isna().sum() == 857
    assert not f[list(adult.features)].select_dtypes("number").isna().any().any()
    assert list(f.columns[:15]) == list(ADULT_COLUMNS)
    assert adult.favorable_indicator.sum() == 11_687 and adult.sensitive == ["sex", "race"]
    assert f["education"].str.startswith(" ").sum() == 0  # ", " separators stripped


@pytest.mark.datasets
def test_adult_official_test_file_with_banner(tmp_path: Path, monkeypatch, data_dir: Path) -> None:
    """The official adult.test starts with '|1x3 Cross validator'; the loader copes with both forms."""
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.data").write_bytes((data_dir / "adult" / "adult.data").read_bytes())
    shared = (data_dir / "adult" / "adult.test").read_bytes()
    (tmp_path / "adult" / "adult.test").write_bytes(b"|1x3 Cross validator\n" + shared)
    monkeypatch.setenv("FAIRMON_DATA_DIR", str(tmp_path))
    ds = load_adult()
    assert len(ds) == 48_842 and set(ds.frame["income"]) == {">50K", "<=50K"}
    assert strip_banner(b"|1x3 Cross validator\n" + shared) == shared
    assert hashlib.sha256(strip_banner(shared)).hexdigest() == FILES["adult/adult.test"].sha256


@pytest.mark.datasets
def test_german(data_dir: Path) -> None:
    ds = load_german()
    f = ds.frame
    assert len(f) == 1_000 and len(ds.features) == 20
    assert int(f["credit"].sum()) == 700 and ds.favorable == 1  # 1 = good = favorable
    assert f["sex"].value_counts().to_dict() == {"male": 690, "female": 310}
    assert f.loc[0, "status"] == "< 0 DM" and f.loc[0, "purpose"] == "radio/television"
    assert not f.astype(str).apply(lambda c: c.str.match(r"^A\d+$")).any().any()  # no A-codes left
    assert f["age"].dtype == np.int64 and ds.sensitive == ["sex", "age"]


@pytest.mark.datasets
def test_compas(data_dir: Path) -> None:
    ds = load_compas()
    f = ds.frame
    assert len(f) == 6_172
    assert (f["days_b_screening_arrest"].abs() <= 30).all() and (f["is_recid"] != -1).all()
    assert set(f["c_charge_degree"]) == {"F", "M"} and "N/A" not in set(f["score_text"])
    assert not [c for c in f.columns if "." in c]  # duplicate columns resolved
    assert f.columns.is_unique and {"decile_score", "priors_count"} <= set(f.columns)
    assert ds.favorable_indicator.sum() == 3_421  # score_text == 'Low'
    assert set(ds.features) <= set(f.columns)


@pytest.mark.datasets
@pytest.mark.parametrize(
    ("name", "rows", "label", "sensitive", "dropped"),
    [
        ("german", 1_000, "GoodCustomer", "Gender", "Age"),
        ("bail", 18_876, "RECID", "WHITE", "MALE"),
        ("math", 395, "G3", "sex", "age"),
        ("por", 649, "G3", "sex", "age"),
    ],
)
def test_gesd(data_dir: Path, name: str, rows: int, label: str, sensitive: str, dropped: str) -> None:
    ds = load_gesd(name)  # type: ignore[arg-type]
    assert len(ds) == rows and ds.label == label and ds.sensitive == [sensitive]
    assert dropped not in ds.features and label not in ds.features and sensitive in ds.features
    assert set(ds.frame[label].unique()) == {0, 1}
    if name == "german":
        assert int(ds.frame[label].sum()) == 700  # +1 → 1, -1 → 0


@pytest.mark.datasets
def test_gesd_raw_grades_binarised(tmp_path: Path, monkeypatch, data_dir: Path) -> None:
    (tmp_path / "gesd").mkdir()
    raw = pd.read_csv(data_dir / "gesd" / "math.csv").assign(G3=lambda d: d["G1"])  # grades 0..20
    raw.to_csv(tmp_path / "gesd" / "math.csv", index=False)
    monkeypatch.setenv("FAIRMON_DATA_DIR", str(tmp_path))
    ds = load_gesd("math", g3_threshold=10)
    np.testing.assert_array_equal(ds.frame["G3"].to_numpy(), (raw["G1"] >= 10).astype(int).to_numpy())


def test_unknown_names() -> None:
    with pytest.raises(DatasetError, match="unknown dataset 'iris'"):
        load_dataset("iris")
    with pytest.raises(DatasetError, match="unknown dataset 'wine'"):
        load_gesd("wine")  # type: ignore[arg-type]


@pytest.fixture
def empty_dirs(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("FAIRMON_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FAIRMON_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_no_network_gives_one_clear_error(empty_dirs: Path, monkeypatch) -> None:
    def offline(url: str, timeout: float = 60.0) -> bytes:
        raise OSError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(_files, "_fetch", offline)
    with pytest.raises(DatasetError) as err:
        load_compas()
    msg = str(err.value)
    assert "'compas/compas-scores-two-years.csv'" in msg
    assert FILES["compas/compas-scores-two-years.csv"].url in msg
    assert "FAIRMON_DATA_DIR" in msg and "name resolution" in msg
    assert not (empty_dirs / "cache").exists()


def test_download_verified_and_cached(empty_dirs: Path, monkeypatch) -> None:
    body = b"|1x3 Cross validator\n25, Private, 1, 11th, 7, Never-married, x, y, Black, Male, 0, 0, 40, US, <=50K.\n"
    spec = FILES["adult/adult.test"]
    monkeypatch.setitem(
        FILES,
        "adult/adult.test",
        _files.DataFile(spec.key, spec.url, hashlib.sha256(strip_banner(body)).hexdigest(), strip_banner),
    )
    calls: list[str] = []

    def fake(url: str, timeout: float = 60.0) -> bytes:
        calls.append(url)
        return body

    monkeypatch.setattr(_files, "_fetch", fake)
    path = dataset_path("adult/adult.test")
    assert path == empty_dirs / "cache" / "adult" / "adult.test"
    assert path.read_bytes() == strip_banner(body) and calls == [spec.url]
    assert dataset_path("adult/adult.test") == path and len(calls) == 1  # served from the cache


def test_download_checksum_mismatch_refused(empty_dirs: Path, monkeypatch) -> None:
    monkeypatch.setattr(_files, "_fetch", lambda url, timeout=60.0: b"not the file")
    with pytest.raises(DatasetError) as err:
        dataset_path("german/german.data")
    msg = str(err.value)
    assert msg.startswith(ERR_CHECKSUM.split("{")[0])
    assert FILES["german/german.data"].sha256 in msg and hashlib.sha256(b"not the file").hexdigest() in msg
    assert not (empty_dirs / "cache" / "german" / "german.data").exists()


@pytest.mark.datasets
def test_shared_copies_match_registered_checksums(data_dir: Path) -> None:
    for key, spec in FILES.items():
        assert hashlib.sha256((data_dir / key).read_bytes()).hexdigest() == spec.sha256, key
