"""What a registered version is: :class:`SnapshotInfo` (the ``metadata.json``), its names and messages.

Versions are ``"v1"``, ``"v2"``, ... numbered by a monotonically increasing integer per model name;
``"1"``/``1`` also mean ``"v1"``. Timestamps are stored as UTC ISO strings with microseconds, so they
compare as text.

Examples
--------
>>> version_number("v3"), version_number(3), version_number(" 12 ")
(3, 3, 12)
>>> utc_iso("2026-01-05")
'2026-01-05T00:00:00.000000+00:00'
"""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal

from fairmon.errors import SnapshotError
from fairmon.schema import FeatureSchema

__all__ = [
    "SnapshotInfo",
    "Status",
    "STATUSES",
    "METADATA_FILE",
    "FORMAT_VERSION",
    "ERR_NO_MODEL",
    "ERR_NO_REGISTRY",
    "ERR_NO_VERSIONS",
    "ERR_NO_VERSION",
    "ERR_NO_PRODUCTION",
    "ERR_CHECKSUM",
    "ERR_SCHEMA_MISMATCH",
    "ERR_BAD_VERSION",
    "ERR_BAD_METADATA",
    "ERR_BAD_NAME",
    "ERR_BAD_STATUS",
    "check_name",
    "version_number",
    "utc_iso",
    "jsonable",
    "info_from_json",
    "info_to_json",
]

Status = Literal["production", "candidate"]
STATUSES: tuple[Status, ...] = ("production", "candidate")
METADATA_FILE = "metadata.json"
FORMAT_VERSION = 1

ERR_NO_MODEL = "registry {uri!r} has no model named {name!r}; known models: {known}"
ERR_NO_REGISTRY = "registry {uri!r} does not exist (no folder {root!r}); check model.registry_uri"
ERR_NO_VERSIONS = (
    "model {name!r} in registry {uri!r} has no complete version (a version folder needs its "
    "metadata.json; found folders: {folders})"
)
ERR_NO_VERSION = "model {name!r} has no version {version!r} in registry {uri!r}; versions: {versions}"
ERR_NO_PRODUCTION = (
    "model {name!r} in registry {uri!r} has no version with status 'production'{as_of} "
    "(versions: {versions}); promote one or pin a version"
)
ERR_CHECKSUM = (
    "snapshot artifact {path!r} failed its checksum: expected sha256 {expected}, file has {actual}; "
    "refusing to load it (it was modified after registration)"
)
ERR_SCHEMA_MISMATCH = (
    "snapshot {name}:{version} does not match the expected feature schema "
    "(first = expected, second = snapshot): {diff}"
)
ERR_BAD_VERSION = "bad version {version!r}; expected 'latest', 'v<N>' or '<N>'"
ERR_BAD_METADATA = "snapshot metadata {path!r} is unreadable: {error}"
ERR_BAD_NAME = "model name {name!r} must be non-empty and use only letters, digits, '_', '-', '.'"
ERR_BAD_STATUS = "status must be one of {statuses}, got {status!r}"

_VERSION_RE = re.compile(r"^v?(\d+)$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class SnapshotInfo:
    """Metadata of one registered model version (the parsed ``metadata.json``)."""

    name: str
    version: str
    number: int
    framework: str
    input: str
    threshold: float
    status: str
    created: str
    sha256: str
    artifact: str
    uri: str
    schema: dict[str, Any]
    schema_fingerprint: str
    metrics: dict[str, Any] = field(default_factory=dict)
    module_config: dict[str, Any] | None = None
    valid_from: str | None = None
    description: str = ""
    library_versions: dict[str, str] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION
    #: ``{"columns": [...], "thresholds": {group: threshold}}`` of a model deciding with group-specific
    #: thresholds (FEU's opt-in ``group_thresholds``; None: the single ``threshold``)
    group_thresholds: dict[str, Any] | None = None

    @property
    def feature_schema(self) -> FeatureSchema:
        return FeatureSchema.from_dict(self.schema)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: fields a metadata.json must have (the ones without a default)
_REQUIRED_INFO = frozenset(
    f.name for f in fields(SnapshotInfo) if f.default is MISSING and f.default_factory is MISSING
)


def info_to_json(info: SnapshotInfo) -> bytes:
    """The ``metadata.json`` bytes of ``info`` (sorted keys, so diffs of a registry stay readable)."""
    return json.dumps(info.to_dict(), indent=2, sort_keys=True).encode()


def info_from_json(raw: bytes, path: str) -> SnapshotInfo:
    """Parse ``metadata.json``; :class:`SnapshotError` naming ``path`` when it is not one."""
    try:
        data = json.loads(raw.decode())
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        missing = sorted(_REQUIRED_INFO - set(data))
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        return SnapshotInfo(**data)
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise SnapshotError(ERR_BAD_METADATA.format(path=path, error=exc)) from exc


def check_name(name: str) -> None:
    """Refuse model names that could escape the registry folder or break a path."""
    if not name or not _NAME_RE.match(name) or name in (".", ".."):
        raise SnapshotError(ERR_BAD_NAME.format(name=name))


def version_number(version: str | int) -> int:
    """The integer of a pinned version (``"v3"``, ``"3"`` or ``3``)."""
    m = _VERSION_RE.match(str(version).strip())
    if not m:
        raise SnapshotError(ERR_BAD_VERSION.format(version=version))
    return int(m.group(1))


def utc_iso(value: datetime | str) -> str:
    """``value`` as a UTC ISO string with microseconds (naive times are taken as UTC)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values (numpy scalars via ``.item()``, anything else as text).

    >>> import numpy as np
    >>> jsonable({"auc": np.float64(0.5)})
    {'auc': 0.5}
    """
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
