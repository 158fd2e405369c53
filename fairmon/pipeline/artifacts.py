"""Intermediate data of one run, kept at ``execution.artifact_location`` keyed by monitor and window.

Steps hand each other *names* (small strings in XCom); the data lives here. The location is a local
directory or any fsspec URI (``s3://bucket/fairmon``, ``gs://...``, ``memory://...``), so Celery workers on
other hosts share it when it points at object storage.

Formats: DataFrames are written as Parquet when ``pyarrow`` is importable (text columns come back as
pandas' string dtype) and as pickle otherwise or when a frame is not Parquet-representable (an object
column of mixed types); pickle round-trips pandas dtypes exactly, and this module only ever reads what
it wrote under the deployment's own artifact location. Numeric arrays are ``.npz``; results are JSON.
Re-running a window overwrites its artifacts (:meth:`ArtifactStore.clear` drops stale ones first).
"""

from __future__ import annotations

import io
import json
import logging
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import FairmonError

__all__ = ["ArtifactStore", "frame_format", "ERR_MISSING_ARTIFACT"]

ERR_MISSING_ARTIFACT = (
    "artifact {name!r} of monitor {monitor!r} window {window} is missing at {uri}; run the step that "
    "writes it first (or re-run the whole window)"
)


def frame_format() -> str:
    """``"parquet"`` when pyarrow is available, else ``"pickle"``."""
    try:
        import pyarrow  # noqa: F401  # an optional extra: probed lazily
    except ImportError:
        return "pickle"
    return "parquet"


class ArtifactStore:
    """Read/write the artifacts of one (monitor, window) under ``location``.

    Examples
    --------
    >>> import tempfile
    >>> a = ArtifactStore(tempfile.mkdtemp(), "demo", "2026-01-03T000000Z")
    >>> _ = a.put_json("summary", {"rows": 3})
    >>> a.get_json("summary")
    {'rows': 3}
    """

    def __init__(self, location: str | Path, monitor: str, window_key: str) -> None:
        import fsspec

        self.location = str(location)
        self.monitor = monitor
        self.window_key = window_key
        base = f"{self.location.rstrip('/')}/{monitor}/{window_key}"
        self.fs, self.root = fsspec.core.url_to_fs(base)
        self.base_uri = base

    # -- paths -----------------------------------------------------------------------------------
    def _path(self, name: str, ext: str) -> str:
        return f"{self.root}/{name}.{ext}"

    def uri(self, name: str, ext: str) -> str:
        return f"{self.base_uri}/{name}.{ext}"

    def _write(self, path: str, data: bytes) -> None:
        self.fs.makedirs(self.root, exist_ok=True)
        tmp = f"{path}.tmp"
        with self.fs.open(tmp, "wb") as fh:
            fh.write(data)
        self.fs.mv(tmp, path)  # readers never see a half-written file

    def _read(self, name: str, ext: str) -> bytes:
        path = self._path(name, ext)
        if not self.fs.exists(path):
            raise FairmonError(
                ERR_MISSING_ARTIFACT.format(
                    name=name, monitor=self.monitor, window=self.window_key, uri=self.uri(name, ext)
                )
            )
        with self.fs.open(path, "rb") as fh:
            return bytes(fh.read())

    def exists(self, name: str) -> bool:
        return any(self.fs.exists(self._path(name, e)) for e in ("json", "npz", "parquet", "pkl", "bin"))

    def clear(self) -> None:
        """Remove every artifact of this window (a re-run starts clean)."""
        if self.fs.exists(self.root):
            self.fs.rm(self.root, recursive=True)

    # -- typed helpers ---------------------------------------------------------------------------
    def put_json(self, name: str, obj: Any) -> str:
        self._write(self._path(name, "json"), json.dumps(obj, default=_json_default, indent=1).encode())
        return self.uri(name, "json")

    def get_json(self, name: str) -> Any:
        return json.loads(self._read(name, "json"))

    def put_bytes(self, name: str, data: bytes, *, ext: str = "bin") -> str:
        self._write(self._path(name, ext), data)
        return self.uri(name, ext)

    def get_bytes(self, name: str, *, ext: str = "bin") -> bytes:
        return self._read(name, ext)

    def put_arrays(self, name: str, **arrays: np.ndarray) -> str:
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        self._write(self._path(name, "npz"), buf.getvalue())
        return self.uri(name, "npz")

    def get_arrays(self, name: str) -> dict[str, np.ndarray]:
        with np.load(io.BytesIO(self._read(name, "npz")), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    def put_frame(self, name: str, frame: pd.DataFrame) -> str:
        """Parquet when pyarrow is available and the frame is Parquet-representable, else pickle."""
        if frame_format() == "parquet":
            buf = io.BytesIO()
            try:
                frame.to_parquet(buf)
            except (TypeError, ValueError, ImportError) as exc:  # e.g. an object column of mixed types

                logging.getLogger(__name__).info("artifact %s stored as pickle: %s", name, exc)
            else:
                self._remove(name, "pkl")
                self._write(self._path(name, "parquet"), buf.getvalue())
                return self.uri(name, "parquet")
        self._remove(name, "parquet")
        self._write(self._path(name, "pkl"), pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL))
        return self.uri(name, "pkl")

    def _remove(self, name: str, ext: str) -> None:
        path = self._path(name, ext)
        if self.fs.exists(path):
            self.fs.rm(path)

    def get_frame(self, name: str) -> pd.DataFrame:
        if self.fs.exists(self._path(name, "parquet")):
            return pd.read_parquet(io.BytesIO(self._read(name, "parquet")))
        return pickle.loads(self._read(name, "pkl"))  # noqa: S301 - written by put_frame only


def _json_default(obj: Any) -> Any:
    """numpy scalars/arrays and datetimes in results become plain JSON."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
