"""Retry or fail fast: how a :class:`~fairmon.errors.FairmonError` becomes an Airflow task outcome.

A transient error (``retryable=True``: a store outage, a Slack rate limit) is re-raised unchanged, so
Airflow spends the task's retries on it. Any other ``FairmonError`` (a batch that fails validation, a
bad spec, a tampered snapshot) cannot succeed on a retry: it becomes ``AirflowFailException``, which
fails the task at once. Exceptions outside the tree are unexpected and keep Airflow's retries too.
An :class:`~fairmon.errors.AttemptSupersededError` (a newer attempt of the same window took the run
over: a manual ``fairmon run`` beside the scheduled run) *skips* the task — and, by the default trigger
rule, the rest of this DAG run — instead of failing it: the window is computed by the newer attempt, and
a failed run with a pipeline-error page for a window that succeeded would be a false alarm.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from fairmon.errors import AttemptSupersededError, FairmonError

__all__ = ["airflow_error", "retry_policy", "ERR_FAIL_FAST"]

#: the fail-fast message starts with the error's type, which the failure callback reads
ERR_FAIL_FAST = "{kind}: {error}"


def airflow_error(exc: FairmonError) -> BaseException:
    """The exception the task should raise for ``exc``: itself when retryable, else a fail-fast one.

    Examples
    --------
    >>> from fairmon.errors import DataValidationError, StoreError
    >>> transient = StoreError("store at db:5432 unreachable")
    >>> airflow_error(transient) is transient
    True
    >>> err = airflow_error(DataValidationError("2 expectations failed"))
    >>> type(err).__name__, str(err)
    ('AirflowFailException', 'DataValidationError: 2 expectations failed')
    >>> from fairmon.errors import AttemptSupersededError
    >>> type(airflow_error(AttemptSupersededError("attempt b holds the window"))).__name__
    'AirflowSkipException'
    """
    if isinstance(exc, AttemptSupersededError):
        return AirflowSkipException(f"{type(exc).__name__}: {exc}")
    if exc.retryable:
        return exc
    return AirflowFailException(ERR_FAIL_FAST.format(kind=type(exc).__name__, error=exc))


@contextmanager
def retry_policy() -> Iterator[None]:
    """Run a step under the policy: retryable errors propagate, other ``FairmonError`` fail fast.

    Examples
    --------
    >>> from fairmon.errors import ConfigError
    >>> try:
    ...     with retry_policy():
    ...         raise ConfigError("monitors/demo.yaml: schedule.cron: not a cron expression")
    ... except AirflowFailException as exc:
    ...     print(exc, "| cause:", type(exc.__cause__).__name__)
    ConfigError: monitors/demo.yaml: schedule.cron: not a cron expression | cause: ConfigError
    """
    try:
        yield
    except FairmonError as exc:
        mapped = airflow_error(exc)
        if mapped is exc:
            raise
        raise mapped from exc
