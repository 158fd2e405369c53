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
a torch file holding anything else is refused as tampered, naming the file (see
:mod:`fairmon.registry._codec`, which also maps every other library load error to
:class:`~fairmon.errors.SnapshotError`).

Concurrency: version folders are claimed with an exclusive ``makedirs`` (atomic on local disks and
``memory://``); on object stores, where folders are virtual, run one writer per model name.

The module holds the :class:`Registry`; what a version is (:class:`SnapshotInfo`, the messages) lives in
:mod:`fairmon.registry._snapshot` and the artifact formats in :mod:`fairmon.registry._codec`; the names
below are re-exported here because callers import them from this module.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from fairmon.errors import SnapshotError
from fairmon.registry._codec import (
    ERR_ARTIFACT_LOAD,
    ERR_TORCH_MODULE,
    ERR_TORCH_UNSAFE,
    deserialize,
    serialize,
)
from fairmon.registry._snapshot import (
    ERR_BAD_METADATA,
    ERR_BAD_STATUS,
    ERR_BAD_VERSION,
    ERR_CHECKSUM,
    ERR_NO_MODEL,
    ERR_NO_PRODUCTION,
    ERR_NO_REGISTRY,
    ERR_NO_VERSION,
    ERR_NO_VERSIONS,
    ERR_SCHEMA_MISMATCH,
    METADATA_FILE,
    STATUSES,
    SnapshotInfo,
    Status,
    check_name,
    info_from_json,
    info_to_json,
    jsonable,
    utc_iso,
    version_number,
)
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
    "ERR_TORCH_UNSAFE",
    "ERR_ARTIFACT_LOAD",
    "ERR_UNREADABLE",
    "ERR_CLAIM",
    "ERR_NOT_A_MODEL",
]

ERR_UNREADABLE = "snapshot artifact {path!r} cannot be read: {error}"
ERR_CLAIM = "could not claim a new version folder for {name!r} in {uri!r}"
ERR_NOT_A_MODEL = "register expects a fairmon.registry.Model, got {cls}"
_VERSION_DIR_RE = re.compile(r"^v(\d+)$")


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
        import fsspec  # heavy (plugins, optional cloud SDKs): only when a registry is opened

        self.uri = str(uri).rstrip("/") or str(uri)
        fs, root = fsspec.core.url_to_fs(self.uri, **storage_options)
        self.fs: fsspec.AbstractFileSystem = fs
        self.root = root.rstrip("/")

    def __repr__(self) -> str:
        return f"Registry({self.uri!r})"

    # ------------------------------------------------------------------ paths
    def _model_dir(self, name: str) -> str:
        check_name(name)
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
            m = _VERSION_DIR_RE.match(str(p).rstrip("/").rsplit("/", 1)[-1])
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
        number: int | None = None,
    ) -> SnapshotInfo:
        """Store ``model`` as the next version of ``name`` and return its metadata.

        ``valid_from`` (optional) records from when the version serves traffic, so that a backfill can
        ask which version was live at a past time (``resolve(name, "latest", as_of=...)``). ``number``
        claims exactly that version (a mirror of another registry keeps its numbers); it must be free.
        """
        if status not in STATUSES:
            raise SnapshotError(ERR_BAD_STATUS.format(statuses=STATUSES, status=status))
        if not isinstance(model, Model):
            raise SnapshotError(ERR_NOT_A_MODEL.format(cls=type(model).__name__))
        blob, artifact, module_config, libs = serialize(model)
        digest = hashlib.sha256(blob).hexdigest()
        self.fs.makedirs(self._model_dir(name), exist_ok=True)
        publish: Callable[[SnapshotInfo], SnapshotInfo] | None = None
        if number is None:
            number, publish = self._new_version(name, status=status, description=description)
        else:
            number = self._claim_exact(name, number)
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
            created=utc_iso(datetime.now(UTC)),
            sha256=digest,
            artifact=artifact,
            uri=f"{self.uri}/{name}/v{number}",
            schema=model.schema.to_dict(),
            schema_fingerprint=model.schema.fingerprint,
            metrics=jsonable(metrics or {}),
            module_config=module_config,
            valid_from=utc_iso(valid_from) if valid_from is not None else None,
            description=description,
            library_versions=libs,
            group_thresholds=None if model.group_thresholds is None else {
                "columns": list(model.group_columns), "thresholds": dict(model.group_thresholds)},
        )
        self._write_info(info)
        return info if publish is None else publish(info)

    def _new_version(
        self, name: str, *, status: Status, description: str
    ) -> tuple[int, Callable[[SnapshotInfo], SnapshotInfo] | None]:
        """The number of a new version of ``name`` (its folder claimed), and what :meth:`register` does
        with the written version's metadata (None: nothing; a registry that mirrors another publishes it)."""
        return self._claim_version(name), None

    def _claim_version(self, name: str) -> int:
        number = (max(self._numbers(name)) if self._numbers(name) else 0) + 1
        for _ in range(100):
            try:
                self.fs.makedirs(self._version_dir(name, number), exist_ok=False)
                return number
            except FileExistsError:
                number += 1
        raise SnapshotError(ERR_CLAIM.format(name=name, uri=self.uri))

    def _claim_exact(self, name: str, number: int) -> int:
        try:
            self.fs.makedirs(self._version_dir(name, number), exist_ok=False)
        except FileExistsError as exc:
            raise SnapshotError(ERR_CLAIM.format(name=f"{name} v{number}", uri=self.uri)) from exc
        return number

    def _write_info(self, info: SnapshotInfo) -> None:
        path = f"{self._version_dir(info.name, info.number)}/{METADATA_FILE}"
        with self.fs.open(path, "wb") as fh:
            fh.write(info_to_json(info))

    def _read_info(self, path: str) -> SnapshotInfo:
        try:
            with self.fs.open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise SnapshotError(ERR_BAD_METADATA.format(path=path, error=exc)) from exc
        return info_from_json(raw, path)

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
                cutoff = utc_iso(as_of)
                prod = [i for i in prod if i.valid_from is None or i.valid_from <= cutoff]
            if not prod:
                suffix = f" valid at {utc_iso(as_of)}" if as_of is not None else ""
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
        number = version_number(version)
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
            raise SnapshotError(ERR_UNREADABLE.format(path=path, error=exc)) from exc
        actual = hashlib.sha256(blob).hexdigest()
        if actual != info.sha256:
            raise SnapshotError(ERR_CHECKSUM.format(path=path, expected=info.sha256, actual=actual))
        estimator = deserialize(info, blob, path)
        model = Model(
            estimator,
            schema,
            framework=info.framework,  # type: ignore[arg-type]
            input=info.input,  # type: ignore[arg-type]
            threshold=info.threshold,
            device=device,
            group_thresholds=None if info.group_thresholds is None else info.group_thresholds["thresholds"],
            group_columns=() if info.group_thresholds is None else info.group_thresholds["columns"],
        )
        if info.framework == "torch":
            model.to(device)
        return model

    def artifact_path(self, info: SnapshotInfo) -> str:
        """Filesystem path (within ``self.fs``) of a version's artifact."""
        return f"{self._version_dir(info.name, info.number)}/{info.artifact}"
