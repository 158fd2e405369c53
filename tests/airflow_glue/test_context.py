"""Context parsing of the Airflow glue: window, notify / feu params, try number (no Airflow DB)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk.definitions.param import ParamsDict

from fairmon_airflow.context import feu_requested, is_backfill, notify_of, try_number, window_of, window_text

START = dt.datetime(2026, 1, 3, tzinfo=dt.UTC)
END = dt.datetime(2026, 1, 4, tzinfo=dt.UTC)


def _ctx(*, conf: dict[str, Any] | None = None, run_type: str = "scheduled", params: Any = None,
         ti: Any = None) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "dag_run": SimpleNamespace(conf=conf or {}, run_type=run_type, run_id=f"{run_type}__x"),
        "data_interval_start": START,
        "data_interval_end": END,
    }
    if params is not None:
        ctx["params"] = params
    if ti is not None:
        ctx["ti"] = ti
    return ctx


def test_scheduled_run_gets_its_data_interval() -> None:
    assert window_of(_ctx()) == {
        "data_interval_start": "2026-01-03T00:00:00+00:00",
        "data_interval_end": "2026-01-04T00:00:00+00:00",
    }
    assert window_text(_ctx()) == "2026-01-03T00:00:00+00:00 → 2026-01-04T00:00:00+00:00"


def test_trigger_conf_logical_date_wins_over_the_interval() -> None:
    ctx = _ctx(conf={"logical_date": "2026-01-08"}, run_type="manual")
    assert window_of(ctx) == {"logical_date": "2026-01-08"}
    assert window_text(ctx) == "logical_date 2026-01-08"


@pytest.mark.parametrize("conf", [None, {}, {"logical_date": ""}, {"feu": True}])
def test_conf_without_a_logical_date_keeps_the_interval(conf: dict[str, Any] | None) -> None:
    ctx = _ctx(conf=conf)
    if conf is None:
        ctx["dag_run"].conf = None  # Airflow gives None for a run triggered without conf
    assert set(window_of(ctx)) == {"data_interval_start", "data_interval_end"}


def test_a_context_without_interval_or_conf_is_an_error_not_now() -> None:
    with pytest.raises(KeyError):
        window_of({"dag_run": SimpleNamespace(conf={})})


def test_notify_defaults_on_and_follows_the_param() -> None:
    assert notify_of(_ctx()) is True
    assert notify_of(_ctx(params=ParamsDict({"notify": False}))) is False
    assert notify_of(_ctx(params=ParamsDict({"notify": True, "notify_backfill": False}))) is True


@pytest.mark.parametrize(("run_type", "backfill"), [("backfill", True), ("BACKFILL_JOB", True),
                                                     ("scheduled", False), ("manual", False)])
def test_backfills_notify_only_with_notify_backfill(run_type: str, backfill: bool) -> None:
    quiet = _ctx(run_type=run_type, params=ParamsDict({"notify": True, "notify_backfill": False}))
    loud = _ctx(run_type=run_type, params=ParamsDict({"notify": True, "notify_backfill": True}))
    assert is_backfill(quiet) is backfill
    assert notify_of(quiet) is (not backfill)
    assert notify_of(loud) is True


def test_feu_param_off_by_default() -> None:
    assert feu_requested(_ctx()) is False
    assert feu_requested(_ctx(params=ParamsDict({"feu": False}))) is False
    assert feu_requested(_ctx(params=ParamsDict({"feu": True}))) is True


@pytest.mark.parametrize(("ti", "want"), [(None, 1), (SimpleNamespace(), 1), (SimpleNamespace(try_number=0), 1),
                                          (SimpleNamespace(try_number=2), 2), (SimpleNamespace(try_number="3"), 3)])
def test_try_number(ti: Any, want: int) -> None:
    assert try_number(_ctx(ti=ti)) == want
