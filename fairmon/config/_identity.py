"""The ``identity`` and ``model`` sections: who the monitor is and which model it watches."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, field_validator

from fairmon._uris import is_mlflow_uri
from fairmon.config._messages import ERR_NAME, excerpt
from fairmon.config._parsers import ColumnName, SpecSection, version_str
from fairmon.config._paths import SpecPath, check_uri

__all__ = ["Identity", "ModelSource"]

_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class Identity(SpecSection):
    """Who the monitor is: ``name`` is used in DAG ids, file paths and store keys, so it is restricted."""

    name: str
    owner: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(ERR_NAME.format(value=excerpt(v)))
        return v


def _registry_uri(value: str) -> str:
    """A folder / fsspec registry location, or an MLflow tracking server (``mlflow+http(s)://``)."""
    return value if is_mlflow_uri(value) else check_uri(value)


class ModelSource(SpecSection):
    """Where the production model comes from: a registry URI, the model name in it, a version policy.

    ``registry_uri`` is fairmon's folder registry (a path or fsspec URL) or an MLflow tracking server
    (``mlflow+http://HOST:PORT``; see :mod:`fairmon.registry.mlflow`). ``name`` defaults to
    ``identity.name``; ``version`` is ``"latest"`` (the newest ``production`` snapshot at run time), a
    pinned version (``v3`` / ``3``) or, for MLflow, an alias (``@champion``). MLflow only:
    ``reference`` (CSV of typical input rows) and ``label`` are what a scikit-learn model logged with
    ``mlflow.sklearn`` is imported and checked against; ``cache`` is where pulled versions are kept
    (default ``.fairmon-cache/mlflow`` beside the spec).
    """

    registry_uri: Annotated[str, Field(min_length=1), AfterValidator(_registry_uri)]
    name: str | None = None
    version: Annotated[str, BeforeValidator(version_str), Field(min_length=1)] = "latest"
    reference: SpecPath | None = None
    label: ColumnName | None = None
    cache: SpecPath | None = None

    @field_validator("version")
    @classmethod
    def _policy(cls, v: str) -> str:
        if v != "latest" and not re.match(r"^(v?\d+|@[A-Za-z0-9_-]{1,255})$", v):
            raise ValueError(
                f"must be 'latest', a pinned version like 'v3' (or 3) or an MLflow alias like '@champion', got {excerpt(v)!r}"
            )
        return v

    @property
    def is_mlflow(self) -> bool:
        """Whether the model lives in an MLflow Model Registry."""
        return is_mlflow_uri(self.registry_uri)

