"""Saving and loading a validation suite as pretty JSON (a local path or an fsspec URL)."""

from __future__ import annotations

import json
import os
from typing import Any

from fairmon.errors import ConfigError
from fairmon.validation._suite import ERR_SUITE_FORMAT, ERR_SUITE_MISSING, Suite

__all__ = ["save_suite", "load_suite"]


def _open(path: str, mode: str) -> Any:
    if "://" in path:
        import fsspec

        return fsspec.open(path, mode, encoding="utf-8").open()
    return open(path, mode, encoding="utf-8")


def save_suite(suite: Suite, path: str | os.PathLike[str]) -> str:
    """Write the suite as pretty JSON (local path or fsspec URL); returns the path.

    Why pretty JSON: suites are reviewed in pull requests and diffed between revisions.
    """
    p = os.fspath(path)
    if "://" not in p:
        os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
        tmp = p + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(suite.to_dict(), fh, indent=2, sort_keys=True, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, p)  # atomic: a concurrent reader never sees half a suite
        return p
    with _open(p, "w") as fh:
        json.dump(suite.to_dict(), fh, indent=2, sort_keys=True, allow_nan=False)
    return p


def _exists(path: str) -> bool:
    if "://" not in path:
        return os.path.isfile(path)
    import fsspec

    fs, q = fsspec.core.url_to_fs(path)
    return bool(fs.exists(q))


def load_suite(path: str | os.PathLike[str]) -> Suite:
    """Read a suite written by :func:`save_suite`; a missing, foreign or hand-edited file → ConfigError."""
    p = os.fspath(path)
    if not _exists(p):
        raise ConfigError(ERR_SUITE_MISSING.format(path=p))
    try:
        with _open(p, "r") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ConfigError(ERR_SUITE_FORMAT.format(path=p, problem=f"invalid JSON: {exc}")) from exc
    if not isinstance(data, dict):
        raise ConfigError(ERR_SUITE_FORMAT.format(path=p, problem="top level is not an object"))
    return Suite.from_dict(data, source=p)
