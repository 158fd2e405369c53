"""fairmon: production fairness monitoring.

``import fairmon`` is cheap on purpose (a test proves it): torch, shap, lime, pymoo,
great_expectations and airflow load only inside the functions that need them. The package exports
the exception tree (:mod:`fairmon.errors`); the work lives in the subpackages (``fairmon.datasets``,
``fairmon.fairness``, ``fairmon.explain``, ``fairmon.feu``, ``fairmon.validation``, ...).

>>> import fairmon
>>> issubclass(fairmon.DatasetError, fairmon.FairmonError)
True
"""

from __future__ import annotations

from fairmon.errors import (
    AlertDeliveryError,
    ConfigError,
    DatasetError,
    DataValidationError,
    DeviceError,
    FairmonError,
    InsufficientDataError,
    MethodError,
    SchemaError,
    SchemaNotAtHeadError,
    SnapshotError,
    StoreError,
    ValidationEngineError,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "FairmonError",
    "ConfigError",
    "SchemaError",
    "DatasetError",
    "DataValidationError",
    "ValidationEngineError",
    "SnapshotError",
    "StoreError",
    "SchemaNotAtHeadError",
    "AlertDeliveryError",
    "MethodError",
    "InsufficientDataError",
    "DeviceError",
]
