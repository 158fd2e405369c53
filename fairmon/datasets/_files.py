"""Where dataset files come from: the data directory, the download cache, the official URLs.

Resolution order for a file ``key`` such as ``"adult/adult.data"``:

1. ``data_dir() / key`` — ``FAIRMON_DATA_DIR``, default ``../shared/datasets`` beside the repository
   (the CI and this environment). Files found there are used as they are (no checksum: a user may
   keep a local variant, and the loaders handle the official quirks themselves).
2. ``cache_dir() / key`` — ``FAIRMON_CACHE_DIR``, default ``~/.cache/fairmon/datasets``; only files that
   passed their checksum are ever written there.
3. Download from the official location (:data:`FILES`), normalise, check the sha256, then store in the
   cache atomically. No network (or an HTTP error) → one :class:`~fairmon.errors.DatasetError` that
   names the file, the URL and how to provide the file instead; a checksum mismatch → a
   ``DatasetError`` with both hashes.

Checksums are the full sha256 of the shared copies listed in ``datasets/SOURCES.md``. Where the
shared copy is byte-identical to the official file (adult.data and german.data per SOURCES.md, the
ProPublica and GESD CSVs at their pinned commits) the checksum is over the downloaded bytes. The
official ``adult.test`` starts with a banner line (``|1x3 Cross validator``) that the shared copy
lacks: its checksum is over the file *after* the banner line is removed (the normalisation the
loader applies anyway). These official-byte equalities come from SOURCES.md and could not be
re-verified from this offline environment.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fairmon.errors import DatasetError

__all__ = [
    "DataFile",
    "FILES",
    "data_dir",
    "cache_dir",
    "dataset_path",
    "read_dataset_csv",
    "read_dataset_text",
    "strip_banner",
    "ERR_READ",
    "ERR_CACHE",
    "ERR_DOWNLOAD",
    "ERR_CHECKSUM",
    "ERR_UNKNOWN_FILE",
]

ERR_DOWNLOAD = (
    "dataset file {file!r} is not in the data directory {data_dir} or the cache {cache_dir}, and "
    "downloading it from {url} failed ({error}); set FAIRMON_DATA_DIR to a folder that holds {file!r} "
    "or allow network access"
)
ERR_CHECKSUM = (
    "dataset file {file!r} downloaded from {url} failed its checksum: expected sha256 {expected}, got "
    "{actual}; the file was not stored"
)
ERR_UNKNOWN_FILE = "unknown dataset file {file!r}; known files: {known}"
ERR_READ = "cannot read dataset file {file!r} at {path}: {error}"
ERR_CACHE = "cannot store downloaded dataset file {file!r} in the cache {cache_dir}: {error}"

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
PROPUBLICA = "https://raw.githubusercontent.com/propublica/compas-analysis/master"
GESD_REPO = "https://raw.githubusercontent.com/horlahsunbo/GESD/0a7162bbb51b5ccb2bed802bf65216da59d8682d"


def strip_banner(data: bytes) -> bytes:
    """Drop a leading ``|...`` banner line (the official adult.test starts with one)."""
    if data.startswith(b"|"):
        nl = data.find(b"\n")
        return b"" if nl < 0 else data[nl + 1 :]
    return data


@dataclass(frozen=True)
class DataFile:
    """One dataset file: its key under the data directory, official URL and checksum."""

    key: str
    url: str
    sha256: str
    normalize: Callable[[bytes], bytes] | None = None


FILES: dict[str, DataFile] = {
    f.key: f
    for f in (
        DataFile(
            "adult/adult.data",
            f"{UCI}/adult/adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
        ),
        DataFile(
            "adult/adult.test",
            f"{UCI}/adult/adult.test",
            "72567b94f5c1a6f8501377dd80f93892c3848ff071cf91ba47e00b0785a28074",
            normalize=strip_banner,
        ),
        DataFile(
            "german/german.data",
            f"{UCI}/statlog/german/german.data",
            "e2bc10785808eeb5e30462f0805edb73a672f295bc671dec0bca6e2fb5c8e1ca",
        ),
        DataFile(
            "compas/compas-scores-two-years.csv",
            f"{PROPUBLICA}/compas-scores-two-years.csv",
            "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
        ),
        DataFile(
            "gesd/german.csv",
            f"{GESD_REPO}/german.csv",
            "49cc549b1ca3f1650e3bdcd8cfce62313c763abfbcbf785d32b07fb76ae078ca",
        ),
        DataFile(
            "gesd/bail.csv",
            f"{GESD_REPO}/bail.csv",
            "11a7c62be2b7aed7cb069624789755d5f57acc8b69580564e2401b084e2d5faf",
        ),
        DataFile(
            "gesd/math.csv",
            f"{GESD_REPO}/math.csv",
            "00be96f83f3f108975287f516723965b70a11e3ee784fee986c9fa30caa243da",
        ),
        DataFile(
            "gesd/por.csv",
            f"{GESD_REPO}/por.csv",
            "73762522271c86d7767f523e3b060c13af514b09ea5e367b075fe66c57f4935b",
        ),
    )
}


def data_dir() -> Path:
    """The dataset folder: ``FAIRMON_DATA_DIR``, else ``../shared/datasets`` beside the repository.

    >>> isinstance(data_dir(), Path)
    True
    """
    env = os.environ.get("FAIRMON_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[3] / "shared" / "datasets"


def cache_dir() -> Path:
    """Where verified downloads are kept: ``FAIRMON_CACHE_DIR``, else ``~/.cache/fairmon/datasets``.

    Examples
    --------
    >>> isinstance(cache_dir(), Path)
    True
    """
    env = os.environ.get("FAIRMON_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "fairmon" / "datasets"


def _fetch(url: str, timeout: float = 60.0) -> bytes:
    """Download ``url`` (tests replace this function to simulate having no network)."""
    import urllib.request

    req = urllib.request.Request(url, headers={"User-Agent": "fairmon-datasets"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - fixed https URLs
        return bytes(resp.read())


def dataset_path(key: str, *, download: bool = True) -> Path:
    """Local path of dataset file ``key``, downloading and verifying it when needed.

    Examples
    --------
    >>> dataset_path("gesd/math.csv").name  # from FAIRMON_DATA_DIR
    'math.csv'
    """
    if key not in FILES:
        raise DatasetError(ERR_UNKNOWN_FILE.format(file=key, known=sorted(FILES)))
    local = data_dir() / key
    if local.is_file():
        return local
    cached = cache_dir() / key
    if cached.is_file():
        return cached
    spec = FILES[key]
    if not download:
        raise DatasetError(
            ERR_DOWNLOAD.format(
                file=key, data_dir=data_dir(), cache_dir=cache_dir(), url=spec.url, error="downloads disabled"
            )
        )
    try:
        blob = _fetch(spec.url)
    except Exception as exc:  # noqa: BLE001 - any transport failure becomes one clear error
        raise DatasetError(
            ERR_DOWNLOAD.format(
                file=key,
                data_dir=data_dir(),
                cache_dir=cache_dir(),
                url=spec.url,
                error=f"{type(exc).__name__}: {exc}",
            )
        ) from exc
    if spec.normalize is not None:
        blob = spec.normalize(blob)
    actual = hashlib.sha256(blob).hexdigest()
    if actual != spec.sha256:
        raise DatasetError(ERR_CHECKSUM.format(file=key, url=spec.url, expected=spec.sha256, actual=actual))
    try:
        _store(blob, cached)
    except OSError as exc:  # read-only or full cache folder
        raise DatasetError(ERR_CACHE.format(file=key, cache_dir=cache_dir(), error=exc)) from exc
    return cached


def _store(blob: bytes, cached: Path) -> None:
    cached.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, cached)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_dataset_csv(key: str, **read_csv: Any) -> pd.DataFrame:
    """``pandas.read_csv`` of dataset file ``key``; unreadable or malformed files are a DatasetError.

    >>> read_dataset_csv("no/such.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairmon.errors.DatasetError: unknown dataset file 'no/such.csv'; known files: [...]
    """
    path = dataset_path(key)
    try:
        return pd.read_csv(path, **read_csv)
    except (OSError, ValueError) as exc:  # ValueError covers pandas' ParserError and UnicodeDecodeError
        raise DatasetError(ERR_READ.format(file=key, path=path, error=f"{type(exc).__name__}: {exc}")) from exc


def read_dataset_text(key: str) -> str:
    """The UTF-8 text of dataset file ``key``; an unreadable or non-UTF-8 file is a DatasetError."""
    path = dataset_path(key)
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(ERR_READ.format(file=key, path=path, error=f"{type(exc).__name__}: {exc}")) from exc
