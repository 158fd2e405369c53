"""GX keeps no window loaded after a validation (issue 21 req 4): its cached batch (the prepared frame)
would stay resident through the window's later steps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairmon.validation import _runner, build_suite, validate


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 80, n), "sex": rng.choice(["female", "male"], n)})


def test_no_batch_stays_loaded_and_the_next_validation_still_runs() -> None:
    suite = build_suite(_frame(500, 0), features=["age"], sensitive=["sex"], min_rows=50, name="forget")
    for frame, ok in ((_frame(200, 1), True), (_frame(200, 2).assign(sex="female"), False), (_frame(200, 3), True)):
        report = validate(frame, suite)
        assert report.success is ok
        engine = _runner._STATE["datasource"].get_execution_engine()
        assert engine.batch_manager.batch_data_cache == {} and engine.batch_manager.active_batch_id is None
    assert report.failed == [] and validate(_frame(200, 2).assign(sex="female"), suite).failed_checks == [("groups", "sex")]


def test_gx_does_not_fingerprint_the_window(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """GX's batch fingerprint (an md5 of hash_pandas_object over the whole frame, ~40 % of a 1M-row
    validation) is switched off: the constant fairmon sets still exists, no batch hashes the frame, and
    the results are the same as with the fingerprint."""
    from great_expectations.execution_engine import pandas_execution_engine

    suite = build_suite(_frame(500, 0), features=["age"], sensitive=["sex"], min_rows=50, name="fingerprint")
    bad = _frame(300, 4).assign(sex="female")
    fast = [validate(f, suite).failed_checks for f in (_frame(300, 5), bad)]
    assert pandas_execution_engine.HASH_THRESHOLD == 0
    calls: list[int] = []
    real = pandas_execution_engine.hash_pandas_dataframe
    monkeypatch.setattr(pandas_execution_engine, "hash_pandas_dataframe", lambda df: calls.append(len(df)) or real(df))
    validate(_frame(300, 5), suite)
    assert calls == []
    monkeypatch.setattr(pandas_execution_engine, "HASH_THRESHOLD", 1e9)  # GX's own default
    assert [validate(f, suite).failed_checks for f in (_frame(300, 5), bad)] == fast == [[], [("groups", "sex")]]
    assert calls  # the default does hash every batch of this size
