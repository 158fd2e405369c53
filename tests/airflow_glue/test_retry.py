"""Retry mapping: retryable FairmonErrors keep Airflow's retries, the others fail the task at once."""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowFailException

from fairmon.errors import (
    AlertDeliveryError,
    ConfigError,
    DataValidationError,
    FairmonError,
    SchemaNotAtHeadError,
    SnapshotError,
    StoreError,
)
from fairmon_airflow.retry import ERR_FAIL_FAST, airflow_error, retry_policy


@pytest.mark.parametrize("exc", [StoreError("db:5432 unreachable"),
                                 AlertDeliveryError("rate limited", retryable=True)])
def test_retryable_errors_are_reraised_unchanged(exc: FairmonError) -> None:
    assert airflow_error(exc) is exc
    with pytest.raises(type(exc)) as info, retry_policy():
        raise exc
    assert info.value is exc


@pytest.mark.parametrize("exc", [DataValidationError("2 expectations failed", failed=[{"x": 1}]),
                                 ConfigError("spec.yaml: schedule.cron: bad"),
                                 SnapshotError("checksum mismatch"),
                                 SchemaNotAtHeadError("run fairmon db upgrade"),
                                 AlertDeliveryError("invalid_auth", retryable=False)])
def test_other_fairmon_errors_fail_fast(exc: FairmonError) -> None:
    with pytest.raises(AirflowFailException) as info, retry_policy():
        raise exc
    assert str(info.value) == ERR_FAIL_FAST.format(kind=type(exc).__name__, error=exc)
    assert str(info.value).startswith(type(exc).__name__ + ": ")
    assert info.value.__cause__ is exc


def test_unexpected_errors_keep_airflows_retries() -> None:
    with pytest.raises(ZeroDivisionError), retry_policy():
        1 / 0  # noqa: B018


def test_no_error_passes_through() -> None:
    with retry_policy():
        value = 42
    assert value == 42


def test_a_superseded_attempt_skips_instead_of_failing() -> None:
    """Session 24 (an on-call tryout): a manual `fairmon run` beside the scheduled DAG run made the older
    attempt's task fail, failing the DAG run and paging #oncall for a window the newer attempt computed."""
    from airflow.sdk.exceptions import AirflowSkipException

    from fairmon.errors import AttemptSupersededError

    exc = AttemptSupersededError("attempt b holds the window")
    with pytest.raises(AirflowSkipException) as info, retry_policy():
        raise exc
    assert "AttemptSupersededError: attempt b holds the window" in str(info.value) and info.value.__cause__ is exc
