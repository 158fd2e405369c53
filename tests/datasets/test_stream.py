"""Synthetic production stream: determinism, planted rule, decoys and the calibrated DScore knob."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairmon.datasets import (
    DECOY_COLUMNS,
    FEATURE_COLUMNS,
    PLANTED_ATTRIBUTES,
    SENSITIVE_COLUMNS,
    DeployedModels,
    SyntheticStream,
    decision_dscore,
    deploy_models,
    evaluate_rule,
    generate_stream,
    read_partition,
    write_partitions,
)
from fairmon.errors import DatasetError
from fairmon.registry import Registry

BASE, RISE, TOL = 0.05, 0.15, 0.03


@pytest.fixture(scope="module")
def stream() -> SyntheticStream:
    return generate_stream(
        n_windows=10, rows_per_window=5000, drift_window=6, base_dscore=BASE, dscore_rise=RISE
    )


@pytest.fixture(scope="module")
def deployed(stream: SyntheticStream) -> tuple[Registry, DeployedModels]:
    reg = Registry("memory://test-stream-registry")
    return reg, deploy_models(stream, reg, name="demo")


def test_contract_columns_and_windows(stream: SyntheticStream) -> None:
    assert len(stream.windows) == 10
    for i, w in enumerate(stream.windows):
        assert w.index == i and len(w.frame) == 5000
        assert (w.end - w.start).days == 1
        assert w.start == pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(days=i)
        times = w.frame[stream.time_column]
        assert times.min() >= w.start.replace(tzinfo=None) and times.max() < w.end.replace(tzinfo=None)
    for col in (*FEATURE_COLUMNS, *SENSITIVE_COLUMNS, stream.label_column):
        assert col in stream.windows[0].frame.columns
    assert not set(PLANTED_ATTRIBUTES) & set(SENSITIVE_COLUMNS)
    assert len(PLANTED_ATTRIBUTES) <= 3
    assert set(PLANTED_ATTRIBUTES) <= set(FEATURE_COLUMNS) and set(DECOY_COLUMNS) <= set(FEATURE_COLUMNS)
    ids = stream.frame()[stream.id_column]
    assert ids.is_unique


def test_deterministic_for_a_seed() -> None:
    a = generate_stream(n_windows=3, rows_per_window=800, drift_window=2, random_state=7)
    b = generate_stream(n_windows=3, rows_per_window=800, drift_window=2, random_state=7)
    c = generate_stream(
        n_windows=3, rows_per_window=800, drift_window=2, random_state=8, delta_base=a.delta_base
    )
    for wa, wb in zip(a.windows, b.windows):
        pd.testing.assert_frame_equal(wa.frame, wb.frame)
        np.testing.assert_array_equal(wa.membership, wb.membership)
    assert a.delta_base == b.delta_base and a.calibrated_base_dscore == b.calibrated_base_dscore
    assert not a.windows[0].frame.equals(c.windows[0].frame)


def test_planted_rule_matches_membership(stream: SyntheticStream) -> None:
    frame, member = stream.frame(), stream.membership()
    np.testing.assert_array_equal(evaluate_rule(stream.planted_rule, frame), member)
    np.testing.assert_array_equal(frame.eval(stream.planted_query).to_numpy(), member)
    # the rule names exactly the planted attributes, and the group is neither tiny nor everyone
    assert all(a in stream.planted_rule for a in stream.planted_attributes)
    assert 0.40 <= member.mean() <= 0.55


def test_decoys_correlated_with_planted_attributes(stream: SyntheticStream) -> None:
    f = stream.frame()
    student = (f["student"] == "yes").astype(float)
    assert np.corrcoef(student, f["age"])[0, 1] < -0.3
    assert np.corrcoef(f["account_years"], f["age"])[0, 1] > 0.8
    harbor = (f["branch"] == "harbor").astype(float)
    north = (f["region"] == "north").astype(float)
    assert np.corrcoef(harbor, north)[0, 1] > 0.5
    # ... but a decoy does not define the group: it disagrees with membership on many rows
    member = stream.membership()
    assert ((f["student"] == "yes").to_numpy() != member).mean() > 0.25


def test_decision_dscore_before_and_after_drift(stream: SyntheticStream, deployed) -> None:
    reg, dep = deployed
    dw = stream.drift_window
    models = {v: reg.load("demo", v) for v in ("v1", "v2")}
    before = [w for w in stream.windows if w.index < dw]
    after = [w for w in stream.windows if w.index >= dw]

    def pooled(model, windows) -> float:
        dec = np.concatenate([model.predict(w.frame[list(FEATURE_COLUMNS)]) for w in windows])
        return decision_dscore(dec, np.concatenate([w.membership for w in windows]))

    ds_before, ds_after = pooled(models["v1"], before), pooled(models["v2"], after)
    assert abs(ds_before - BASE) <= TOL, ds_before
    assert abs(ds_after - (BASE + RISE)) <= TOL, ds_after
    assert ds_before == pytest.approx(dep.dscore_before) and ds_after == pytest.approx(dep.dscore_after)
    # every single window lands in the band too (sampling noise at 5,000 rows is about 0.015)
    for i, d in enumerate(dep.window_dscores):
        assert abs(d - (BASE if i < dw else BASE + RISE)) <= TOL, (i, d)
    # the sensitive attributes are not where the discrimination was planted
    f = stream.frame(list(range(dw, 10)))
    dec = models["v2"].predict(f[list(FEATURE_COLUMNS)])
    assert abs(decision_dscore(dec, (f["sex"] == "female").to_numpy())) < 0.03


def test_deployed_decisions_follow_the_serving_version(stream: SyntheticStream, deployed) -> None:
    reg, dep = deployed
    for i in (0, 5, 6, 9):
        w = stream.windows[i]
        expected = reg.load("demo", "v1" if i < 6 else "v2").predict(w.frame[list(FEATURE_COLUMNS)])
        np.testing.assert_array_equal(dep.decisions(w), expected)


def test_fixed_delta_skips_calibration() -> None:
    a = generate_stream(n_windows=2, rows_per_window=400, drift_window=1, train_windows=1, delta_base=0.0)
    b = generate_stream(n_windows=2, rows_per_window=400, drift_window=1, train_windows=1, delta_base=3.0)
    assert a.calibrated_base_dscore is None and a.delta_base == 0.0
    pd.testing.assert_frame_equal(
        a.windows[0].frame.drop(columns="repaid"), b.windows[0].frame.drop(columns="repaid")
    )
    m = a.windows[0].membership
    # a larger disadvantage can only flip labels of members from 1 to 0 (common random numbers)
    ya, yb = a.windows[0].frame["repaid"].to_numpy(), b.windows[0].frame["repaid"].to_numpy()
    assert (ya[~m] == yb[~m]).all() and (yb[m] <= ya[m]).all() and (yb[m] < ya[m]).any()


def test_registry_latest_and_as_of(stream: SyntheticStream, deployed) -> None:
    reg, dep = deployed
    assert dep.window_versions == ["v1"] * 6 + ["v2"] * 4
    assert reg.resolve("demo").version == "v2"
    assert reg.resolve("demo", as_of=stream.windows[3].start).version == "v1"
    assert reg.resolve("demo", as_of=stream.windows[6].start).version == "v2"


def test_write_partitions_round_trip(tmp_path, stream: SyntheticStream, deployed) -> None:
    _, dep = deployed
    small = generate_stream(n_windows=3, rows_per_window=300, drift_window=2, delta_base=0.5)
    manifest = write_partitions(small, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("2026-*.csv")) == [
        "2026-01-01.csv",
        "2026-01-02.csv",
        "2026-01-03.csv",
    ]
    back = read_partition(tmp_path / "2026-01-02.csv")
    pd.testing.assert_frame_equal(back, small.windows[1].frame, check_dtype=False)
    assert manifest["planted_rule"] == small.planted_rule
    assert len(pd.read_csv(tmp_path / "reference.csv")) == 600
    # with the deployed models, the logged decisions are those of the version serving each day
    out = tmp_path / "logged"
    write_partitions(stream, out, deployed=dep)
    day7 = read_partition(out / f"{stream.windows[7].day}.csv")
    reg = Registry(dep.registry_uri)
    expected = reg.load("demo", "v2").predict(stream.windows[7].frame[list(FEATURE_COLUMNS)])
    np.testing.assert_array_equal(day7["decision"].to_numpy(), expected)


def test_bad_arguments_and_rules() -> None:
    with pytest.raises(DatasetError, match="drift_window"):
        generate_stream(n_windows=3, drift_window=5)
    df = pd.DataFrame({"age": [1]})
    with pytest.raises(DatasetError, match="unknown column 'zip'"):
        evaluate_rule("zip = 5", df)
