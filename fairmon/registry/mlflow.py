"""MLflow Model Registry as a model source: pull, verify, cache; FEU candidates pushed back as versions.

A spec names the server as ``model.registry_uri: mlflow+http://HOST:PORT`` and the model as
``model.name`` with ``model.version``: ``latest`` (the newest version not tagged as a fairmon
candidate), a number (``3`` / ``v3``) or an alias (``@champion``, MLflow's ``models:/name@alias``).

How a version is pulled (once per worker; later runs read the local cache, a folder
:class:`~fairmon.registry.Registry` keeping MLflow's version numbers):

1. its artifacts are listed and downloaded through the server's artifact proxy;
2. **verified**: the sha256 of every file is compared with the digests fairmon recorded in the model
   version's tag ``fairmon.sha256`` at the first pull (trust on first use, the same check on every
   worker); a changed, added or missing file is refused naming the file, before anything is loaded;
3. imported: a model fairmon pushed (``metadata.json`` + artifact) is copied as is (its own sha256 is
   checked again); a scikit-learn model logged with ``mlflow.sklearn`` is loaded from **skops**
   (MLflow 3's default format, which instantiates only trusted types: the default skops list plus the
   ``skops_trusted_types`` the author recorded in ``MLmodel``) or, for older ``pickle`` /
   ``cloudpickle`` models, unpickled only after step 2; then registered in the cache with fairmon's
   agreement check on ``model.reference`` (:func:`fairmon.registry._import.register_estimator`: the
   schema, the raw/encoded input mode and the agreement rate come from there).

Status: a version tagged ``fairmon.status = candidate`` is a candidate, every other one production.
FEU candidates are registered back as new MLflow versions (a run holding the fairmon snapshot, tag
``fairmon.status = candidate``, alias ``fairmon-candidate``): never given a production alias.

Example
-------
>>> MlflowRegistry.handles("mlflow+http://127.0.0.1:5000"), MlflowRegistry.handles("registry")
(True, False)
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pandas as pd
import yaml

from fairmon._uris import is_mlflow_uri
from fairmon.errors import SnapshotError
from fairmon.registry._import import register_estimator
from fairmon.registry._mlflow_rest import MlflowRest, artifact_path, parse_tracking_uri
from fairmon.registry._snapshot import METADATA_FILE, Status, info_from_json, version_number
from fairmon.registry.model import Model
from fairmon.registry.registry import Registry, SnapshotInfo
from fairmon.schema import FeatureSchema

__all__ = ["MlflowRegistry", "TAG_DIGEST", "TAG_STATUS", "CANDIDATE_ALIAS", "import_model_uri", "parse_model_uri"]

TAG_DIGEST = "fairmon.sha256"
TAG_STATUS = "fairmon.status"
CANDIDATE_ALIAS = "fairmon-candidate"
_FOLDER = "fairmon-model"

ERR_TAMPERED = (
    "MLflow model {name} version {number} changed since fairmon first pulled it ({files}); refusing to "
    "load it. Register the new model as a new version instead of overwriting artifacts"
)
ERR_NO_REFERENCE = (
    "MLflow model {name} version {number} is a scikit-learn model: fairmon needs model.reference (a CSV "
    "of typical input rows) to fit the feature schema and check its predictions"
)
ERR_FLAVOR = "MLflow model {name} version {number} has no sklearn flavor in MLmodel (flavors: {flavors})"
ERR_FORMAT = "MLflow model {name} version {number}: unsupported sklearn serialization_format {fmt!r}"
ERR_UNTRUSTED = (
    "MLflow model {name} version {number}: {file} holds types skops does not trust by default: {types}; "
    "list them in skops_trusted_types when logging the model if you trust them"
)
ERR_LOAD = "MLflow model {name} version {number}: {file} cannot be loaded: {error}"
ERR_MODEL_URI = "not an MLflow model URI {uri!r}: use models:/NAME/VERSION or models:/NAME@ALIAS"


def parse_model_uri(uri: str) -> tuple[str, str]:
    """(name, version policy) of ``models:/NAME/VERSION`` or ``models:/NAME@ALIAS``.

    >>> parse_model_uri("models:/credit@production"), parse_model_uri("models:/credit/3")
    (('credit', '@production'), ('credit', '3'))
    """
    rest = uri[len("models:/"):].strip("/") if uri.startswith("models:/") else ""
    if "@" in rest:
        name, alias = rest.split("@", 1)
        if name and alias and "/" not in rest:
            return name, f"@{alias}"
    elif rest.count("/") == 1 and rest.split("/")[1].isdigit():
        name, number = rest.split("/")
        return name, number
    raise SnapshotError(ERR_MODEL_URI.format(uri=uri))


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: hashlib.sha256(blob).hexdigest() for rel, blob in sorted(files.items())}


def _recorded(tags: dict[str, str], name: str, number: int) -> dict[str, str] | None:
    """The per-file digests of the version's ``fairmon.sha256`` tag (None before the first pull)."""
    if TAG_DIGEST not in tags:
        return None
    try:
        out = json.loads(tags[TAG_DIGEST])
    except ValueError:
        out = None
    if not isinstance(out, dict):
        raise SnapshotError(ERR_TAMPERED.format(name=name, number=number, files=f"tag {TAG_DIGEST} is not a digest record"))
    return {str(k): str(v) for k, v in out.items()}


def _changes(recorded: dict[str, str], now: dict[str, str]) -> str:
    out = [f"{f} changed" for f in sorted(recorded.keys() & now.keys()) if recorded[f] != now[f]]
    out += [f"{f} added" for f in sorted(now.keys() - recorded.keys())]
    out += [f"{f} missing" for f in sorted(recorded.keys() - now.keys())]
    return ", ".join(out)


class MlflowRegistry(Registry):
    """An MLflow server's registered models, mirrored into a verified local cache (``cache_uri``).

    ``reference`` (a path to a CSV or a callable returning the frame) and ``label`` are what
    scikit-learn models are imported against; ``timeout`` bounds each HTTP call.
    """

    def __init__(
        self,
        uri: str,
        *,
        cache_uri: str,
        reference: str | Callable[[], pd.DataFrame] | None = None,
        label: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(cache_uri)
        self.mlflow_uri = uri
        self.rest = MlflowRest(parse_tracking_uri(uri), timeout=timeout)
        self._reference = reference
        self.label = label

    @staticmethod
    def handles(uri: str) -> bool:
        """Whether ``uri`` names an MLflow server (``mlflow+http://`` / ``mlflow+https://``)."""
        return is_mlflow_uri(uri)

    def __repr__(self) -> str:
        return f"MlflowRegistry({self.mlflow_uri!r}, cache={self.uri!r})"

    # ------------------------------------------------------------------ MLflow side
    def _model_version(self, name: str, number: int) -> dict[str, Any]:
        mv: dict[str, Any] = self.rest.get("model-versions/get", name=name, version=str(number))["model_version"]
        return mv

    def _numbers_in_mlflow(self, name: str) -> list[int]:
        found = self.rest.get("model-versions/search", filter=f"name='{name}'", max_results="10000")
        return sorted(int(mv["version"]) for mv in found.get("model_versions", []))

    @staticmethod
    def _tags(mv: dict[str, Any]) -> dict[str, str]:
        return {str(t["key"]): str(t["value"]) for t in mv.get("tags", [])}

    def _set_tag(self, name: str, number: int, key: str, value: str) -> None:
        self.rest.post("model-versions/set-tag", {"name": name, "version": str(number), "key": key, "value": value})

    # ------------------------------------------------------------------ listing / resolving
    def names(self) -> list[str]:
        found = self.rest.get("registered-models/search", max_results="1000")
        return sorted(str(m["name"]) for m in found.get("registered_models", []))

    def versions(self, name: str) -> list[SnapshotInfo]:
        """Every version of ``name`` in MLflow, pulled (and verified) into the cache, oldest first."""
        return [self.pull(name, n) for n in self._numbers_in_mlflow(name)]

    def resolve(
        self, name: str, version: str | int = "latest", *, as_of: datetime | str | None = None
    ) -> SnapshotInfo:
        """``latest`` (newest non-candidate, ``valid_from`` gated by ``as_of``), ``N`` / ``vN`` or ``@alias``."""
        text = str(version)
        if text.startswith("@"):
            mv = self.rest.get("registered-models/alias", name=name, alias=text[1:])["model_version"]
            return self.pull(name, int(mv["version"]))
        if text == "latest":
            self.versions(name)
            return super().resolve(name, "latest", as_of=as_of)
        return self.pull(name, version_number(text))

    def load(
        self,
        name: str,
        version: str | int = "latest",
        *,
        expected_schema: FeatureSchema | None = None,
        device: str | None = None,
        as_of: datetime | str | None = None,
    ) -> Model:
        info = self.resolve(name, version, as_of=as_of)
        return super().load(name, info.version, expected_schema=expected_schema, device=device)

    def _set_status(self, name: str, version: str | int, status: Status) -> SnapshotInfo:
        info = self.resolve(name, version)
        self._set_tag(name, info.number, TAG_STATUS, status)
        return super()._set_status(name, info.version, status)

    # ------------------------------------------------------------------ pull
    def _cached(self, name: str, number: int) -> SnapshotInfo | None:
        meta = f"{self._version_dir(name, number)}/{METADATA_FILE}"
        if self.fs.exists(meta):
            return self._read_info(meta)
        if self.fs.exists(self._version_dir(name, number)):  # an interrupted pull: start it again
            self.fs.rm(self._version_dir(name, number), recursive=True)
        return None

    def pull(self, name: str, number: int) -> SnapshotInfo:
        """Version ``number`` of ``name`` in the cache: downloaded, verified and imported once."""
        mv = self._model_version(name, number)
        tags = self._tags(mv)
        status: Status = "candidate" if tags.get(TAG_STATUS) == "candidate" else "production"
        cached = self._cached(name, number)
        if cached is not None:
            recorded = _recorded(tags, name, number)
            if recorded is not None and recorded != cached.metrics.get("mlflow", {}).get("files"):
                raise SnapshotError(ERR_TAMPERED.format(name=name, number=number, files="its recorded digests differ from the cached copy's"))
            return cached if cached.status == status else super()._set_status(name, cached.version, status)
        path = artifact_path(self.rest.get("model-versions/get-download-uri", name=name, version=str(number))["artifact_uri"])
        files = {rel: self.rest.download(f"{path}/{rel}") for rel, _ in self.rest.list_files(path)}
        digests = _digests(files)
        recorded = _recorded(tags, name, number)
        if recorded is not None:
            if recorded != digests:
                raise SnapshotError(ERR_TAMPERED.format(name=name, number=number, files=_changes(recorded, digests)))
        else:
            self._set_tag(name, number, TAG_DIGEST, json.dumps(digests, sort_keys=True))
        source = {"uri": f"models:/{name}/{number}", "server": self.rest.host, "run_id": mv.get("run_id"),
                  "files": digests}
        if METADATA_FILE in files:
            return self._import_fairmon(name, number, files, status, source)
        return self._import_sklearn(name, number, files, status, source, valid_from=tags.get("fairmon.valid_from"))

    def _import_fairmon(self, name: str, number: int, files: dict[str, bytes], status: Status,
                        source: dict[str, Any]) -> SnapshotInfo:
        info = info_from_json(files[METADATA_FILE], f"models:/{name}/{number}/{METADATA_FILE}")
        blob = files.get(info.artifact, b"")
        if hashlib.sha256(blob).hexdigest() != info.sha256:
            raise SnapshotError(ERR_TAMPERED.format(name=name, number=number, files=f"{info.artifact} does not match metadata.json"))
        vdir = self._version_dir(name, self._claim_exact(name, number))
        with self.fs.open(f"{vdir}/{info.artifact}", "wb") as fh:
            fh.write(blob)
        new = SnapshotInfo(**{**info.to_dict(), "name": name, "version": f"v{number}", "number": number,
                              "status": status, "metrics": {**info.metrics, "mlflow": source}})
        self._write_info(new)
        return new

    def _load_sklearn(self, name: str, number: int, files: dict[str, bytes]) -> Any:
        mlmodel = yaml.safe_load(files.get("MLmodel", b"")) or {}
        flavor = (mlmodel.get("flavors") or {}).get("sklearn")
        if not flavor:
            raise SnapshotError(ERR_FLAVOR.format(name=name, number=number, flavors=sorted(mlmodel.get("flavors") or {})))
        rel, fmt = str(flavor.get("pickled_model", "model.pkl")), str(flavor.get("serialization_format", "pickle"))
        blob = files.get(rel)
        if blob is None:
            raise SnapshotError(ERR_LOAD.format(name=name, number=number, file=rel, error="not among the artifacts"))
        try:
            if fmt == "skops":
                import skops.io as sio

                trusted = [str(t) for t in flavor.get("skops_trusted_types") or []]
                untrusted = [t for t in sio.get_untrusted_types(data=blob) if t not in trusted]
                if untrusted:
                    raise SnapshotError(ERR_UNTRUSTED.format(name=name, number=number, file=rel, types=untrusted))
                return sio.loads(blob, trusted=trusted or None)
            if fmt in ("pickle", "cloudpickle"):  # verified against the recorded digests above
                return pickle.load(io.BytesIO(blob))  # noqa: S301 - digest-verified, see module docstring
        except SnapshotError:
            raise
        except Exception as exc:  # noqa: BLE001 - library load errors become SnapshotError at the boundary
            raise SnapshotError(ERR_LOAD.format(name=name, number=number, file=rel, error=exc)) from exc
        raise SnapshotError(ERR_FORMAT.format(name=name, number=number, fmt=fmt))

    def _import_sklearn(self, name: str, number: int, files: dict[str, bytes], status: Status,
                        source: dict[str, Any], *, valid_from: str | None) -> SnapshotInfo:
        if self._reference is None:
            raise SnapshotError(ERR_NO_REFERENCE.format(name=name, number=number))
        reference = self._reference() if callable(self._reference) else pd.read_csv(self._reference)
        estimator = self._load_sklearn(name, number, files)
        info, _ = register_estimator(estimator, registry=self, name=name, reference=reference, label=self.label,
                                     status=status, number=number,
                                     description=f"pulled from models:/{name}/{number} on {self.rest.host}")
        new = SnapshotInfo(**{**info.to_dict(), "valid_from": valid_from or info.valid_from,
                              "metrics": {**info.metrics, "mlflow": source}})
        self._write_info(new)
        return new

    # ------------------------------------------------------------------ push (FEU candidates)
    def _new_version(
        self, name: str, *, status: Status, description: str
    ) -> tuple[int, Callable[[SnapshotInfo], SnapshotInfo] | None]:
        """:meth:`register` without a ``number``: a new MLflow version of ``name`` holding the fairmon
        snapshot (a run's ``fairmon-model`` folder), its number claimed in the cache.

        A ``candidate`` also gets the ``fairmon-candidate`` alias; fairmon never sets a production alias.
        With a ``number`` (the cache import path, :func:`register_estimator`) :meth:`register` claims
        MLflow's number in the cache only.
        """
        run = self.rest.post("runs/create", {"experiment_id": "0", "run_name": f"fairmon {status} {name}",
                                             "start_time": int(time.time() * 1000),
                                             "tags": [{"key": "fairmon.source", "value": "fairmon"}]})["run"]
        run_id, root = run["info"]["run_id"], str(run["info"]["artifact_uri"])
        try:
            self.rest.post("registered-models/create", {"name": name})
        except SnapshotError as exc:
            if "RESOURCE_ALREADY_EXISTS" not in str(exc):
                raise
        mv = self.rest.post("model-versions/create", {
            "name": name, "source": f"{root}/{_FOLDER}", "run_id": run_id, "description": description,
            "tags": [{"key": TAG_STATUS, "value": status}]})["model_version"]
        n = int(mv["version"])
        return self._claim_exact(name, n), lambda info: self._publish(info, run_id=run_id, root=root)

    def _publish(self, info: SnapshotInfo, *, run_id: str, root: str) -> SnapshotInfo:
        """Upload a written version's files to its MLflow run, record their digests, alias a candidate."""
        name, n = info.name, info.number
        files = {}
        for rel in (info.artifact, METADATA_FILE):
            with self.fs.open(f"{self._version_dir(name, n)}/{rel}", "rb") as fh:
                files[rel] = fh.read()
            self.rest.upload(f"{artifact_path(root)}/{_FOLDER}/{rel}", files[rel])
        digests = _digests(files)
        self._set_tag(name, n, TAG_DIGEST, json.dumps(digests, sort_keys=True))
        if info.status == "candidate":
            self.rest.post("registered-models/alias", {"name": name, "alias": CANDIDATE_ALIAS, "version": str(n)})
        self.rest.post("runs/update", {"run_id": run_id, "status": "FINISHED", "end_time": int(time.time() * 1000)})
        new = SnapshotInfo(**{**info.to_dict(), "metrics": {**info.metrics, "mlflow": {
            "uri": f"models:/{name}/{n}", "server": self.rest.host, "run_id": run_id, "files": digests}}})
        self._write_info(new)
        return new

def import_model_uri(
    model_uri: str,
    *,
    tracking_uri: str,
    registry: Registry,
    name: str,
    reference: pd.DataFrame,
    label: str | None = None,
    status: Status = "production",
) -> tuple[SnapshotInfo, dict[str, Any] | None]:
    """Copy an MLflow model version (``models:/NAME@ALIAS`` / ``models:/NAME/N``) into a folder registry.

    The version is pulled and verified exactly as a monitor would (a scratch cache; the digests are
    recorded in MLflow at the first pull), checked against ``reference`` when it is a scikit-learn
    model, and registered as the next version of ``name``; its ``metrics["mlflow"]`` names the source.
    Returns the new version's metadata and the registration check (None for a fairmon snapshot).
    """
    import tempfile

    src_name, version = parse_model_uri(model_uri)
    with tempfile.TemporaryDirectory(prefix="fairmon-mlflow-") as scratch:
        source = MlflowRegistry(tracking_uri, cache_uri=scratch, reference=lambda: reference, label=label)
        pulled = source.resolve(src_name, version)
        model = source.load(src_name, pulled.version)
    info = registry.register(model, name=name, status=status, metrics=pulled.metrics,
                             description=f"imported from {model_uri} on {source.rest.host}")
    check = pulled.metrics.get("registration_check")
    return info, check if isinstance(check, dict) else None
