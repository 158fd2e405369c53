"""fairmon: production fairness monitoring.

``import fairmon`` is cheap on purpose (a test proves it): torch, shap, lime, pymoo,
great_expectations and airflow load only inside the functions that need them.
"""

from __future__ import annotations

from fairmon.errors import (
    AlertDeliveryError,
    ConfigError,
    DataValidationError,
    FairmonError,
    MethodError,
    SchemaError,
    SnapshotError,
    StoreError,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "FairmonError",
    "ConfigError",
    "SchemaError",
    "DataValidationError",
    "SnapshotError",
    "StoreError",
    "AlertDeliveryError",
    "MethodError",
]
