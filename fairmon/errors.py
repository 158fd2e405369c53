"""The one exception tree of fairmon.

Every error a user can cause or meet in production derives from :class:`FairmonError`, so the CLI
prints one clear line for it and the DAG can decide retry vs fail-fast by type. Adapters translate
third-party errors into these with ``raise ... from exc``.

The tree::

    FairmonError
    ├── ConfigError              a spec or setting is invalid
    ├── SchemaError              a frame does not match a feature schema
    ├── DatasetError             a data file is missing, unreadable or fails its checksum
    ├── DataValidationError      a window failed its validation suite (``.failed``)
    ├── ValidationEngineError    Great Expectations could not run a suite (the data was not judged)
    ├── SnapshotError            a model snapshot is missing or tampered with
    ├── StoreError               the store cannot be reached or written (retryable)
    │   ├── SchemaNotAtHeadError the database schema is not at the migration head
    │   └── AttemptSupersededError a newer attempt of the window took it over (this one must stop)
    ├── AlertDeliveryError       an alert could not be delivered
    ├── MethodError              a method got arguments it cannot work with
    │   └── InsufficientDataError
    └── DeviceError              the requested compute device is not available

>>> from fairmon.errors import DatasetError, FairmonError
>>> try:
...     raise DatasetError("adult.data: not found")
... except FairmonError as exc:
...     print(type(exc).__name__, exc.retryable)
DatasetError False
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "FairmonError",
    "ConfigError",
    "SchemaError",
    "DatasetError",
    "DataValidationError",
    "ValidationEngineError",
    "SnapshotError",
    "StoreError",
    "SchemaNotAtHeadError",
    "AttemptSupersededError",
    "AlertDeliveryError",
    "MethodError",
    "InsufficientDataError",
    "DeviceError",
]


class FairmonError(Exception):
    """Base class of every error fairmon raises on purpose."""

    #: whether retrying the same call later may succeed (network, lock, outage)
    retryable: bool = False


class ConfigError(FairmonError):
    """A monitor spec or setting is invalid; the message names file, field path and problem."""


class SchemaError(FairmonError):
    """A DataFrame does not match a feature schema (missing column, unseen category, NaN, ...)."""


class DatasetError(FairmonError):
    """A dataset file is missing, unreadable, fails its checksum, or cannot be downloaded."""


class DataValidationError(FairmonError):
    """A window's data failed its validation suite; carries the failed expectations."""

    def __init__(self, message: str, failed: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.failed = list(failed or [])


class ValidationEngineError(FairmonError):
    """Great Expectations failed while running a suite (library or environment error).

    Deliberately not a :class:`DataValidationError`: the window's data was not judged, so the run must
    not be recorded as ``data_invalid``.
    """


class SnapshotError(FairmonError):
    """A model snapshot is missing, tampered with, or does not match the expected schema."""


class StoreError(FairmonError):
    """The store cannot be reached or written; messages name the host, never the password."""

    retryable = True


class SchemaNotAtHeadError(StoreError):
    """The database schema is not at the migration head; run ``fairmon db upgrade``."""

    retryable = False


class AttemptSupersededError(StoreError):
    """A newer attempt of the same window started (took over the window's run): this attempt's
    steps stop without writing anything, and a retry of them cannot succeed."""

    retryable = False


class AlertDeliveryError(FairmonError):
    """An alert could not be delivered (Slack error, auth, unknown channel).

    ``configuration`` marks errors about the token or channel rather than the message: the alert
    itself is fine and goes out once the configuration is fixed.
    """

    def __init__(self, message: str, *, retryable: bool = False, configuration: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.configuration = configuration


class MethodError(FairmonError):
    """A method got arguments it cannot work with (bad k, alpha > beta, shape mismatch, ...)."""


class InsufficientDataError(MethodError):
    """Too few rows (or group members) for the requested computation."""


class DeviceError(FairmonError):
    """The requested compute device is not available (e.g. ``cuda`` without a GPU)."""
