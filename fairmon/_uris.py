"""URI schemes that name a service rather than a storage location (shared by config and registry).

>>> is_mlflow_uri("mlflow+http://127.0.0.1:5000"), is_mlflow_uri("s3://bucket/registry")
(True, False)
"""

from __future__ import annotations

__all__ = ["MLFLOW_SCHEMES", "is_mlflow_uri"]

#: ``model.registry_uri`` schemes of an MLflow tracking server: ``mlflow+http://HOST:PORT``, ``mlflow+https://HOST``
MLFLOW_SCHEMES: tuple[str, ...] = ("mlflow+http", "mlflow+https")


def is_mlflow_uri(uri: str) -> bool:
    """Whether ``uri`` names an MLflow tracking server (one of :data:`MLFLOW_SCHEMES`)."""
    scheme, sep, _ = uri.partition("://")
    return bool(sep) and scheme.lower() in MLFLOW_SCHEMES
