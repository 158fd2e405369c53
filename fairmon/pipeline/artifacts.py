"""Intermediate data of one run, kept at ``execution.artifact_location`` keyed by monitor, window and attempt.

Steps hand each other *names* (small strings in XCom); the data lives here. The location is a local
directory or any fsspec URI (``s3://bucket/fairmon``, ``gs://...``, ``memory://...``), so Celery workers on
other hosts share it when it points at object storage.

Formats never execute code on load: DataFrames are Parquet (``pyarrow``, a dependency; text columns
come back as pandas' string dtype; an object column of mixed types is stored as text), numeric arrays
``.npz`` read with ``allow_pickle=False``, results JSON. There is no pickle: a ``data.pkl`` dropped into
the artifact location is never read (the frame is then missing).

Each attempt of a window has its own folder, ``<monitor>/<window>/<attempt_id>/`` (the attempt id the
store handed out when the attempt started, see :func:`fairmon.pipeline.runs.start_run`), so two
overlapping attempts (an Airflow zombie next to its retry, a backfill next to the schedule) never
read or delete each other's files. Artifacts written before attempts existed live directly under
``<monitor>/<window>/`` and are read there (``attempt_id=None``).
"""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import ConfigError, FairmonError

__all__ = ["ArtifactStore", "MissingArtifactError", "ERR_MISSING_ARTIFACT", "ERR_NO_PYARROW", "ERR_LOCATION",
           "ERR_ATTEMPT_ID"]

ERR_MISSING_ARTIFACT = (
    "artifact {name!r} of monitor {monitor!r} window {window} is missing at {uri}; run the step that "
    "writes it first (or re-run the whole window)"
)


ERR_NO_PYARROW = "artifact {name!r}: DataFrames are stored as Parquet, which needs pyarrow (pip install pyarrow)"
ERR_ATTEMPT_ID = "attempt id {value!r} is not a folder name (letters, digits, '-', '_' only)"
ERR_LOCATION = ("artifact location {location!r} (execution.artifact_location or FAIRMON_ARTIFACT_LOCATION) "
                "cannot be opened: {error}")
_ATTEMPT_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class MissingArtifactError(FairmonError):
    """An artifact a step reads is not there: the step that writes it did not run in this attempt.

    Never evidence about the stored window: a step failing on it keeps the window's persisted rows
    (:func:`fairmon.pipeline.runs.mark_failed`).
    """


class ArtifactStore:
    """Read/write the artifacts of one (monitor, window, attempt) under ``location``.

    Examples
    --------
    >>> import tempfile
    >>> a = ArtifactStore(tempfile.mkdtemp(), "demo", "2026-01-03T000000Z")
    >>> _ = a.put_json("summary", {"rows": 3})
    >>> a.get_json("summary")
    {'rows': 3}
    """

    def __init__(self, location: str | Path, monitor: str, window_key: str, attempt_id: str | None = None) -> None:
        import fsspec

        if attempt_id is not None and not _ATTEMPT_RE.match(attempt_id):
            raise FairmonError(ERR_ATTEMPT_ID.format(value=attempt_id))
        self.location = str(location)
        self.monitor = monitor
        self.window_key = window_key
        self.attempt_id = attempt_id
        window_base = f"{self.location.rstrip('/')}/{monitor}/{window_key}"
        base = window_base if attempt_id is None else f"{window_base}/{attempt_id}"
        try:
            self.fs, self.root = fsspec.core.url_to_fs(base)
        except (ImportError, ValueError) as exc:  # an fsspec backend not installed, an unknown protocol
            raise ConfigError(ERR_LOCATION.format(location=self.location, error=exc)) from exc
        self._window_root = fsspec.core.url_to_fs(window_base)[1]
        self.base_uri = base
        #: frames read in this process (see :meth:`get_frame`)
        self._frames: dict[str, pd.DataFrame] = {}

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
            raise MissingArtifactError(
                ERR_MISSING_ARTIFACT.format(
                    name=name, monitor=self.monitor, window=self.window_key, uri=self.uri(name, ext)
                )
            )
        with self.fs.open(path, "rb") as fh:
            return bytes(fh.read())

    def exists(self, name: str) -> bool:
        return any(self.fs.exists(self._path(name, e)) for e in ("json", "npz", "parquet", "bin"))

    def clear(self) -> None:
        """Remove every artifact of this attempt (a re-run starts clean)."""
        self._frames.clear()
        if self.fs.exists(self.root):
            self.fs.rm(self.root, recursive=True)

    def remove_other_attempts(self, keep: set[str]) -> list[str]:
        """Remove the folders of this window's other attempts except ``keep`` (and the flat files of
        pre-attempt runs); returns the attempt ids removed. Only a new attempt calls it, keeping the
        attempt it takes over from, which may still be running."""
        removed: list[str] = []
        if self.attempt_id is None or not self.fs.exists(self._window_root):
            return removed
        for entry in self.fs.ls(self._window_root, detail=True):
            path = str(entry["name"]).rstrip("/")
            leaf = path.rsplit("/", 1)[-1]
            if leaf == self.attempt_id or leaf in keep:
                continue
            if entry.get("type") == "directory":
                if _ATTEMPT_RE.match(leaf):
                    self.fs.rm(path, recursive=True)
                    removed.append(leaf)
            else:
                self.fs.rm(path)
        return removed

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
        """Parquet; an object column Parquet cannot hold (mixed types) is stored as text (missing kept)."""
        try:
            import pyarrow  # noqa: F401  # a dependency; probed for a clear error
        except ImportError as exc:
            raise FairmonError(ERR_NO_PYARROW.format(name=name)) from exc
        self._frames.pop(name, None)
        path = self._path(name, "parquet")
        self.fs.makedirs(self.root, exist_ok=True)
        tmp = f"{path}.tmp"
        try:
            with self.fs.open(tmp, "wb") as fh:  # streamed into the file: no second copy in memory
                frame.to_parquet(fh)
        except (TypeError, ValueError) as exc:  # e.g. an object column of mixed types
            logging.getLogger(__name__).info("artifact %s: mixed-type columns stored as text: %s", name, exc)
            with self.fs.open(tmp, "wb") as fh:
                _as_text(frame).to_parquet(fh)
        self.fs.mv(tmp, path)  # readers never see a half-written file
        return self.uri(name, "parquet")

    def get_frame(self, name: str) -> pd.DataFrame:
        """The frame ``put_frame`` wrote (Parquet only: a pickle beside it is never loaded).

        Read from the file once per store object and kept: later calls in the same process (every
        step of ``fairmon run``) get a shallow copy of the same frame without reading it again (pandas'
        copy-on-write: changing the copy never changes the kept frame). ``put_frame`` of the name and
        :meth:`clear` drop it; a step in another process (an Airflow task) reads the file.
        """
        kept = self._frames.get(name)
        if kept is None:
            path = self._path(name, "parquet")
            if not self.fs.exists(path):
                self._read(name, "parquet")  # raises MissingArtifactError naming the artifact
            with self.fs.open(path, "rb") as fh:
                kept = pd.read_parquet(fh)
            self._frames[name] = kept
        return kept.copy(deep=False)


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every object column of mixed value types as text (missing values kept missing)."""
    out = frame.copy()
    for col in out.columns:
        s = out[col]
        if s.dtype == object and len({type(v) for v in s.dropna()}) > 1:
            out[col] = s.map(lambda v: v if v is None or (isinstance(v, float) and v != v) else str(v))
    return out


def _json_default(obj: Any) -> Any:
    """numpy scalars/arrays and datetimes in results become plain JSON."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
