"""Window resolution (never from now()) and the artifact store (local dir and fsspec memory://)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import ConfigError, FairmonError
from fairmon.pipeline.artifacts import ERR_MISSING_ARTIFACT, ArtifactStore, MissingArtifactError
from fairmon.window import ERR_ZERO_WIDTH, Window, resolve_window, window_from_logical_date


def test_logical_date_gives_the_interval_starting_there() -> None:
    w = window_from_logical_date("m", "2026-01-03", cron="0 0 * * *")
    assert (w.start, w.end) == (datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 4, tzinfo=UTC))
    # a time inside the day maps to the same window (latest tick at or before)
    assert window_from_logical_date("m", "2026-01-03T17:30:00", cron="0 0 * * *") == w


def test_timezone_of_the_schedule_is_respected() -> None:
    w = window_from_logical_date("m", "2026-01-03", cron="0 0 * * *", timezone="Europe/Berlin")
    assert w.start == datetime(2026, 1, 2, 23, tzinfo=UTC)
    assert w.end == datetime(2026, 1, 3, 23, tzinfo=UTC)


def test_data_interval_wins_and_zero_width_is_refused() -> None:
    w = resolve_window(
        "m", cron="0 0 * * *", data_interval_start="2026-01-02T00:00:00+00:00", data_interval_end="2026-01-03"
    )
    assert w.key == "2026-01-02T000000Z"
    with pytest.raises(ConfigError) as err:
        resolve_window("m", cron="0 0 * * *", data_interval_start="2026-01-02", data_interval_end="2026-01-02")
    assert str(err.value) == ERR_ZERO_WIDTH.format(
        start=datetime(2026, 1, 2, tzinfo=UTC), end=datetime(2026, 1, 2, tzinfo=UTC), monitor="m"
    )


def test_window_roundtrip_and_key() -> None:
    w = Window("m", datetime(2026, 1, 3, tzinfo=UTC), datetime(2026, 1, 4, tzinfo=UTC))
    assert Window.from_dict(w.to_dict()) == w
    assert w.key == "2026-01-03T000000Z"


@pytest.mark.parametrize("location", ["local", "memory"])
def test_artifact_roundtrip(tmp_path, location: str) -> None:
    loc = str(tmp_path) if location == "local" else f"memory://art-{tmp_path.name}"
    a = ArtifactStore(loc, "demo", "2026-01-03T000000Z")
    df = pd.DataFrame({"x": [1.5, 2.5], "c": pd.Series(["a", None], dtype=object)})
    uri = a.put_frame("data", df)
    assert uri.endswith(".parquet")
    back = a.get_frame("data")
    # Parquet returns text as pandas' string dtype; values (missing included) are what was written
    pd.testing.assert_series_equal(back["x"], df["x"])
    assert back["c"].tolist()[0] == "a" and back["c"].isna().tolist() == [False, True]
    mixed = pd.DataFrame({"m": pd.Series([1, "a", None], dtype=object)})  # mixed types: stored as text
    assert a.put_frame("mixed", mixed).endswith(".parquet")
    assert a.get_frame("mixed")["m"].tolist()[:2] == ["1", "a"] and a.get_frame("mixed")["m"].isna().tolist() == [False, False, True]
    a.put_arrays("pred", favorable=np.array([1.0, np.nan]))
    np.testing.assert_array_equal(a.get_arrays("pred")["favorable"], np.array([1.0, np.nan]))
    a.put_json("s", {"v": np.float64(0.5), "t": datetime(2026, 1, 1, tzinfo=UTC)})
    assert a.get_json("s") == {"v": 0.5, "t": "2026-01-01T00:00:00+00:00"}
    assert a.exists("s")
    a.clear()
    assert not a.exists("s")
    with pytest.raises(FairmonError) as err:
        a.get_json("s")
    assert str(err.value) == ERR_MISSING_ARTIFACT.format(
        name="s", monitor="demo", window="2026-01-03T000000Z", uri=a.uri("s", "json")
    )


def test_artifacts_keyed_by_monitor_and_window(tmp_path) -> None:
    a = ArtifactStore(tmp_path, "demo", "2026-01-03T000000Z")
    b = ArtifactStore(tmp_path, "demo", "2026-01-04T000000Z")
    a.put_json("x", 1)
    b.put_json("x", 2)
    assert (a.get_json("x"), b.get_json("x")) == (1, 2)
    assert (tmp_path / "demo" / "2026-01-03T000000Z" / "x.json").is_file()


class _Payload:
    """A pickle whose loading runs code (it would create ``marker``)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (self.marker, "w"))


def test_a_dropped_pickle_is_never_loaded(tmp_path) -> None:
    """Issue 15 item 6: artifacts are Parquet/NPZ/JSON only; a ``data.pkl`` put beside them is not read."""
    import pickle

    a = ArtifactStore(tmp_path / "art", "demo", "2026-01-03T000000Z", "a1")
    marker = tmp_path / "executed"
    (tmp_path / "art" / "demo" / "2026-01-03T000000Z" / "a1").mkdir(parents=True)
    (tmp_path / "art" / "demo" / "2026-01-03T000000Z" / "a1" / "data.pkl").write_bytes(
        pickle.dumps(_Payload(str(marker)))
    )
    with pytest.raises(MissingArtifactError):
        a.get_frame("data")
    assert not a.exists("data") and not marker.exists()
    a.put_frame("data", pd.DataFrame({"x": [1]}))  # a real frame is Parquet, the pickle still ignored
    assert a.get_frame("data")["x"].tolist() == [1] and not marker.exists()


def test_attempts_have_their_own_folders(tmp_path) -> None:
    """Issue 15 item 2: two attempts of one window never see (or delete) each other's artifacts."""
    a = ArtifactStore(tmp_path, "demo", "2026-01-03T000000Z", "aaaa")
    b = ArtifactStore(tmp_path, "demo", "2026-01-03T000000Z", "bbbb")
    a.put_json("x", 1)
    b.clear()  # what a new attempt does first
    b.put_json("x", 2)
    assert (a.get_json("x"), b.get_json("x")) == (1, 2)
    c = ArtifactStore(tmp_path, "demo", "2026-01-03T000000Z", "cccc")
    c.put_json("x", 3)
    assert c.remove_other_attempts(keep={"bbbb"}) == ["aaaa"]  # the attempt taken over is kept
    assert b.get_json("x") == 2 and not a.exists("x")
    with pytest.raises(FairmonError):
        ArtifactStore(tmp_path, "demo", "2026-01-03T000000Z", "../escape")
