"""Progress lines during long steps and the OpenMP settings heavy steps get (issue 20)."""

from __future__ import annotations

import logging
import time

import pytest

from fairmon._device import THREAD_ENV, thread_settings
from fairmon._logs import QuietThirdParty, quiet_third_party
from fairmon._progress import advance, current, set_total, track


def test_a_running_step_logs_done_total_at_the_interval(caplog: pytest.LogCaptureFixture) -> None:
    lg = logging.getLogger("fairmon.test.progress")
    with caplog.at_level(logging.INFO, logger=lg.name), track("demo w explain", every_s=0.05, logger=lg) as p:
        set_total(4)
        advance()
        time.sleep(0.3)  # one unit still running: the heartbeat keeps writing
        assert current() is p
    lines = [r.getMessage() for r in caplog.records]
    beats = [ln for ln in lines if ln.startswith("demo w explain: 1/4 (25%)")]
    assert len(beats) >= 2, lines
    assert lines[-1].startswith("demo w explain: 4/4 (100%)") and lines[-1].endswith(", done")
    assert current() is None
    advance()  # outside a tracked step: a no-op


def test_a_failing_step_logs_no_done_line(caplog: pytest.LogCaptureFixture) -> None:
    lg = logging.getLogger("fairmon.test.progress2")
    with caplog.at_level(logging.INFO, logger=lg.name), pytest.raises(RuntimeError):
        with track("x", total=2, every_s=60, logger=lg):
            raise RuntimeError("boom")
    assert not [r for r in caplog.records if "done" in r.getMessage()]


def test_thread_settings_fill_only_what_the_operator_left_unset() -> None:
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    import sys

    if "torch" in sys.modules:  # OpenMP already started: nothing can change any more
        assert thread_settings(env) == {} and env == {"OMP_WAIT_POLICY": "ACTIVE"}
        return
    applied = thread_settings(env)
    assert env["OMP_WAIT_POLICY"] == "ACTIVE" and applied == {k: v for k, v in THREAD_ENV.items() if k != "OMP_WAIT_POLICY"}


def test_quiet_third_party_is_idempotent_per_handler() -> None:
    lg = logging.getLogger("fairmon.test.quiet")
    h = logging.StreamHandler()
    lg.addHandler(h)
    try:
        assert quiet_third_party(lg) == 1 and quiet_third_party(lg) == 1
        assert sum(isinstance(f, QuietThirdParty) for f in h.filters) == 1
    finally:
        lg.removeHandler(h)


def _blas_threads_now() -> list[int]:
    from threadpoolctl import threadpool_info

    return [int(p["num_threads"]) for p in threadpool_info() if p["user_api"] == "blas"]


def test_blas_threads_limits_inside_and_restores_after() -> None:
    import numpy as np

    from fairmon._device import blas_threads

    np.ones((4, 4)) @ np.ones(4)  # numpy's BLAS is loaded
    before = _blas_threads_now()
    assert before, "no BLAS library loaded: nothing to limit"
    with blas_threads(1):
        assert _blas_threads_now() == [1] * len(before)
    assert _blas_threads_now() == before
    with blas_threads(None):  # no limit: the library's own setting
        assert _blas_threads_now() == before


def test_run_step_runs_heavy_steps_under_the_specs_blas_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from fairmon.config import MonitorSpec
    from fairmon.pipeline import runner

    doc = {"spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
           "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
           "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"}}
    seen: dict[str, list[int]] = {}
    for name in ("explain", "outcome"):  # heavy, light
        monkeypatch.setitem(runner.STEPS, name, lambda ctx, name=name: seen.update({name: _blas_threads_now()}) or {})
    monkeypatch.setattr(runner.runs, "check_attempt", lambda ctx: None)  # no store: the attempt is current
    monkeypatch.setattr(runner.runs, "heartbeat", lambda ctx: None)
    library_default = _blas_threads_now()
    for limit, want in ((None, library_default), (1, [1] * len(library_default))):
        spec = MonitorSpec.model_validate({**doc, "execution": {"blas_threads": limit}})
        assert spec.execution.blas_threads == limit
        ctx = SimpleNamespace(monitor="m", window=SimpleNamespace(key="k"), spec=spec, attempt_id="a1")
        for name in ("explain", "outcome"):
            runner.run_step(name, spec, {}, context=ctx)  # type: ignore[arg-type]
        assert seen["explain"] == want and seen["outcome"] == library_default
    assert MonitorSpec.model_validate(doc).execution.blas_threads == 1  # the default
