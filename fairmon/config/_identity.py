"""The ``identity`` and ``model`` sections: who the monitor is and which model it watches."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, Field, field_validator

from fairmon.config._messages import ERR_NAME, excerpt
from fairmon.config._parsers import SpecSection, version_str
from fairmon.config._paths import SpecPath

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


class ModelSource(SpecSection):
    """Where the production model comes from: a registry URI, the model name in it, a version policy.

    ``name`` defaults to ``identity.name``; ``version`` is ``"latest"`` (the newest ``production``
    snapshot at run time) or a pinned version string.
    """

    registry_uri: Annotated[SpecPath, Field(min_length=1)]
    name: str | None = None
    version: Annotated[str, BeforeValidator(version_str), Field(min_length=1)] = "latest"

    @field_validator("version")
    @classmethod
    def _policy(cls, v: str) -> str:
        if v != "latest" and not re.match(r"^v?\d+$", v):
            raise ValueError(f"must be 'latest' or a pinned version like 'v3' (or 3), got {excerpt(v)!r}")
        return v

