"""A versioned model-snapshot registry on a local directory or any fsspec URL.

Layout (one folder per version; the metadata file is written last, so a version without it is an
unfinished write and is ignored)::

    {uri}/{name}/v1/model.joblib      # sklearn estimator (joblib pickle)   or
    {uri}/{name}/v1/model.pt          # torch: {"state_dict": ...} loaded with weights_only=True
    {uri}/{name}/v1/metadata.json     # framework, schema, sha256, status, metrics, ...

Versions are ``"v1"``, ``"v2"``, ... numbered by a monotonically increasing integer per model name;
``resolve`` also accepts ``"1"``/``1`` for ``"v1"``. ``"latest"`` is the newest version whose status is
``production``: registering a ``candidate`` never changes what ``latest`` means until it is promoted.

Trust model: a scikit-learn artifact is a pickle, and unpickling runs code. fairmon reads the artifact
bytes once, checks their sha256 against the registry's metadata and only then unpickles those same
bytes, so a file swapped in the store is refused before any of its code runs. The metadata itself is
trusted: whoever can write the registry can register a model, exactly as with any model registry.
Torch snapshots hold only tensors (``state_dict``) and are loaded with ``torch.load(weights_only=True)``;
the architecture is rebuilt from the module config (:func:`fairmon.registry.model.build_mlp`).

Concurrency: version folders are claimed with an exclusive ``makedirs`` (atomic on local disks and
``memory://``); on object stores, where folders are virtual, run one writer per model name.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from fairmon.errors import SnapshotError
from fairmon.registry.model import Model
from fairmon.schema import FeatureSchema

if TYPE_CHECKING:
    import fsspec

__all__ = [
    "Registry",
    "SnapshotInfo",
    "Status",
    "ERR_NO_MODEL",
    "ERR_NO_VERSION",
    "ERR_NO_PRODUCTION",
    "ERR_CHECKSUM",
    "ERR_SCHEMA_MISMATCH",
    "ERR_BAD_VERSION",
    "ERR_TORCH_MODULE",
]

Status = Literal["production", "candidate"]
_STATUSES = ("production", "candidate")
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
ERR_TORCH_MODULE = (
    "torch snapshots store a state_dict plus the module config; the module must be built by "
    "fairmon.registry.build_mlp (got {cls})"
)
ERR_BAD_METADATA = "snapshot metadata {path!r} is unreadable: {error}"

_VERSION_RE = re.compile(r"^v?(\d+)$")


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

    @property
    def feature_schema(self) -> FeatureSchema:
        return FeatureSchema.from_dict(self.schema)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: fields a metadata.json must have (the ones without a default)
_REQUIRED_INFO = frozenset(
    f.name for f in fields(SnapshotInfo) if f.default is MISSING and f.default_factory is MISSING
)


class Registry:
    """Versioned snapshots under ``uri`` (a local path or an fsspec URL such as ``memory://reg``).

    Example
    -------
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairmon.schema import FeatureSchema
    >>> df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    >>> schema = FeatureSchema.fit(df)
    >>> est = LogisticRegression().fit(schema.transform(df), [0, 0, 1, 1])
    >>> reg = Registry("memory://doctest-registry")
    >>> reg.register(Model(est, schema, framework="sklearn"), name="toy").version
    'v1'
    >>> reg.load("toy").predict(df).tolist()
    [0, 0, 1, 1]
    """

    def __init__(self, uri: str, **storage_options: Any) -> None:
        import fsspec

        self.uri = str(uri).rstrip("/") or str(uri)
        fs, root = fsspec.core.url_to_fs(self.uri, **storage_options)
        self.fs: fsspec.AbstractFileSystem = fs
        self.root = root.rstrip("/")

    def __repr__(self) -> str:
        return f"Registry({self.uri!r})"

    # ------------------------------------------------------------------ paths
    def _model_dir(self, name: str) -> str:
        _check_name(name)
        return f"{self.root}/{name}"

    def _version_dir(self, name: str, number: int) -> str:
        return f"{self._model_dir(name)}/v{number}"

    # ------------------------------------------------------------------ listing
    def names(self) -> list[str]:
        """Model names present in the registry."""
        if not self.fs.exists(self.root):
            return []
        out = []
        for p in self.fs.ls(self.root, detail=False):
            base = str(p).rstrip("/").rsplit("/", 1)[-1]
            if self.fs.isdir(p):
                out.append(base)
        return sorted(out)

    def _numbers(self, name: str) -> list[int]:
        """Version numbers present (including unfinished folders), ascending."""
        d = self._model_dir(name)
        if not self.fs.exists(d):
            return []
        nums = []
        for p in self.fs.ls(d, detail=False):
            m = re.match(r"^v(\d+)$", str(p).rstrip("/").rsplit("/", 1)[-1])
            if m:
                nums.append(int(m.group(1)))
        return sorted(nums)

    def versions(self, name: str) -> list[SnapshotInfo]:
        """Every complete version of ``name``, oldest first."""
        out = []
        for n in self._numbers(name):
            meta = f"{self._version_dir(name, n)}/{METADATA_FILE}"
            if self.fs.exists(meta):
                out.append(self._read_info(meta))
        return out

    # ------------------------------------------------------------------ register
    def register(
        self,
        model: Model,
        *,
        name: str,
        status: Status = "production",
        metrics: dict[str, Any] | None = None,
        valid_from: datetime | str | None = None,
        description: str = "",
    ) -> SnapshotInfo:
        """Store ``model`` as the next version of ``name`` and return its metadata.

        ``valid_from`` (optional) records from when the version serves traffic, so that a backfill can
        ask which version was live at a past time (``resolve(name, "latest", as_of=...)``).
        """
        if status not in _STATUSES:
            raise SnapshotError(f"status must be one of {_STATUSES}, got {status!r}")
        if not isinstance(model, Model):
            raise SnapshotError(f"register expects a fairmon.registry.Model, got {type(model).__name__}")
        blob, artifact, module_config, libs = _serialize(model)
        digest = hashlib.sha256(blob).hexdigest()
        self.fs.makedirs(self._model_dir(name), exist_ok=True)
        number = self._claim_version(name)
        vdir = self._version_dir(name, number)
        with self.fs.open(f"{vdir}/{artifact}", "wb") as fh:
            fh.write(blob)
        info = SnapshotInfo(
            name=name,
            version=f"v{number}",
            number=number,
            framework=model.framework,
            input=model.input,
            threshold=float(model.threshold),
            status=status,
            created=_utc_iso(datetime.now(UTC)),
            sha256=digest,
            artifact=artifact,
            uri=f"{self.uri}/{name}/v{number}",
            schema=model.schema.to_dict(),
            schema_fingerprint=model.schema.fingerprint,
            metrics=_jsonable(metrics or {}),
            module_config=module_config,
            valid_from=_utc_iso(valid_from) if valid_from is not None else None,
            description=description,
            library_versions=libs,
        )
        self._write_info(info)
        return info

    def _claim_version(self, name: str) -> int:
        number = (max(self._numbers(name)) if self._numbers(name) else 0) + 1
        for _ in range(100):
            try:
                self.fs.makedirs(self._version_dir(name, number), exist_ok=False)
                return number
            except FileExistsError:
                number += 1
        raise SnapshotError(f"could not claim a new version folder for {name!r} in {self.uri!r}")

    def _write_info(self, info: SnapshotInfo) -> None:
        path = f"{self._version_dir(info.name, info.number)}/{METADATA_FILE}"
        text = json.dumps(info.to_dict(), indent=2, sort_keys=True)
        with self.fs.open(path, "wb") as fh:
            fh.write(text.encode())

    def _read_info(self, path: str) -> SnapshotInfo:
        try:
            with self.fs.open(path, "rb") as fh:
                data = json.loads(fh.read().decode())
            missing = sorted(_REQUIRED_INFO - set(data))
            if missing:
                raise ValueError(f"missing field(s) {', '.join(missing)}")
            return SnapshotInfo(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise SnapshotError(ERR_BAD_METADATA.format(path=path, error=exc)) from exc

    # ------------------------------------------------------------------ resolve / promote
    def resolve(
        self, name: str, version: str | int = "latest", *, as_of: datetime | str | None = None
    ) -> SnapshotInfo:
        """Metadata of ``version`` of ``name``: ``"latest"`` (newest production) or a pinned one.

        With ``as_of``, ``"latest"`` means the newest production version whose ``valid_from`` is at or
        before ``as_of`` — the version that was live then. Time gating is opt-in: a version registered
        without ``valid_from`` counts as valid at any time (its ``created`` stamp is wall-clock time of
        the registration, which says nothing about the data windows it serves).
        """
        infos = self.versions(name)
        if not infos:
            if not self.fs.exists(self.root):
                raise SnapshotError(ERR_NO_REGISTRY.format(uri=self.uri, root=self.root))
            if name in self.names():
                folders = [f"v{n}" for n in self._numbers(name)] or "none"
                raise SnapshotError(ERR_NO_VERSIONS.format(name=name, uri=self.uri, folders=folders))
            raise SnapshotError(ERR_NO_MODEL.format(uri=self.uri, name=name, known=self.names()))
        if str(version) == "latest":
            prod = [i for i in infos if i.status == "production"]
            if as_of is not None:
                cutoff = _utc_iso(as_of)
                prod = [i for i in prod if i.valid_from is None or i.valid_from <= cutoff]
            if not prod:
                suffix = f" valid at {_utc_iso(as_of)}" if as_of is not None else ""
                raise SnapshotError(
                    ERR_NO_PRODUCTION.format(
                        name=name,
                        uri=self.uri,
                        as_of=suffix,
                        versions=[
                            f"{i.version}:{i.status}" + (f" valid from {i.valid_from}" if i.valid_from else "")
                            for i in infos
                        ],
                    )
                )
            return max(prod, key=lambda i: i.number)
        m = _VERSION_RE.match(str(version).strip())
        if not m:
            raise SnapshotError(ERR_BAD_VERSION.format(version=version))
        number = int(m.group(1))
        for i in infos:
            if i.number == number:
                return i
        raise SnapshotError(
            ERR_NO_VERSION.format(
                name=name, version=version, uri=self.uri, versions=[i.version for i in infos]
            )
        )

    def promote(self, name: str, version: str | int) -> SnapshotInfo:
        """Set a version's status to ``production`` (it becomes ``latest`` if it is the newest)."""
        return self._set_status(name, version, "production")

    def demote(self, name: str, version: str | int) -> SnapshotInfo:
        """Set a version's status back to ``candidate`` (e.g. to roll back ``latest``)."""
        return self._set_status(name, version, "candidate")

    def _set_status(self, name: str, version: str | int, status: Status) -> SnapshotInfo:
        info = self.resolve(name, version)
        new = SnapshotInfo(**{**info.to_dict(), "status": status})
        self._write_info(new)
        return new

    # ------------------------------------------------------------------ load
    def load(
        self,
        name: str,
        version: str | int = "latest",
        *,
        expected_schema: FeatureSchema | None = None,
        device: str | None = None,
        as_of: datetime | str | None = None,
    ) -> Model:
        """Load a verified snapshot as a :class:`Model`.

        The artifact's sha256 is checked before anything is deserialised; ``expected_schema`` (the
        monitor's view of the features) must match the snapshot's schema, else :class:`SnapshotError`
        names every difference.
        """
        info = self.resolve(name, version, as_of=as_of)
        schema = info.feature_schema
        if expected_schema is not None and expected_schema.fingerprint != info.schema_fingerprint:
            diff = expected_schema.diff(schema)
            if diff:
                raise SnapshotError(
                    ERR_SCHEMA_MISMATCH.format(name=name, version=info.version, diff="; ".join(diff))
                )
        path = f"{self._version_dir(name, info.number)}/{info.artifact}"
        try:
            with self.fs.open(path, "rb") as fh:
                blob = fh.read()
        except OSError as exc:
            raise SnapshotError(f"snapshot artifact {path!r} cannot be read: {exc}") from exc
        actual = hashlib.sha256(blob).hexdigest()
        if actual != info.sha256:
            raise SnapshotError(ERR_CHECKSUM.format(path=path, expected=info.sha256, actual=actual))
        estimator = _deserialize(info, blob, device)
        model = Model(
            estimator,
            schema,
            framework=info.framework,  # type: ignore[arg-type]
            input=info.input,  # type: ignore[arg-type]
            threshold=info.threshold,
            device=device,
        )
        if info.framework == "torch":
            model.to(device)
        return model

    def artifact_path(self, info: SnapshotInfo) -> str:
        """Filesystem path (within ``self.fs``) of a version's artifact."""
        return f"{self._version_dir(info.name, info.number)}/{info.artifact}"


# ---------------------------------------------------------------------- helpers
def _check_name(name: str) -> None:
    if not name or not re.match(r"^[A-Za-z0-9_.-]+$", name) or name in (".", ".."):
        raise SnapshotError(
            f"model name {name!r} must be non-empty and use only letters, digits, '_', '-', '.'"
        )


def _utc_iso(value: datetime | str) -> str:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _serialize(model: Model) -> tuple[bytes, str, dict[str, Any] | None, dict[str, str]]:
    buf = io.BytesIO()
    if model.framework == "sklearn":
        import joblib
        import sklearn

        joblib.dump(model.estimator, buf)
        return buf.getvalue(), "model.joblib", None, {"sklearn": sklearn.__version__}
    import torch

    module = model.estimator
    config_fn = getattr(module, "config", None)
    if type(module).__name__ != "MLP" or not callable(config_fn):
        raise SnapshotError(ERR_TORCH_MODULE.format(cls=type(module).__name__))
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    torch.save({"state_dict": state}, buf)
    config = {"builder": "build_mlp", **config_fn()}
    return buf.getvalue(), "model.pt", config, {"torch": torch.__version__}


def _deserialize(info: SnapshotInfo, blob: bytes, device: str | None) -> Any:
    if info.framework == "sklearn":
        import joblib

        # Safe only because the caller verified the sha256 of these exact bytes (see module doc).
        return joblib.load(io.BytesIO(blob))
    if info.framework == "torch":
        import torch

        from fairmon.registry.model import build_mlp

        cfg = info.module_config or {}
        if cfg.get("builder") != "build_mlp":
            raise SnapshotError(
                f"snapshot {info.name}:{info.version} has an unknown torch module config {cfg}"
            )
        module = build_mlp(int(cfg["n_inputs"]), tuple(int(h) for h in cfg.get("hidden", ())))
        payload = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
        module.load_state_dict(payload["state_dict"])
        return module
    raise SnapshotError(f"snapshot {info.name}:{info.version} has unknown framework {info.framework!r}")
