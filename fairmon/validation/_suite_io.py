"""Saving and loading a validation suite as pretty JSON (a local path or an fsspec URL)."""

from __future__ import annotations

import json
import os
from typing import Any

from fairmon.errors import ConfigError
from fairmon.validation._suite import ERR_SUITE_FORMAT, ERR_SUITE_MISSING, Suite

__all__ = ["save_suite", "load_suite", "ERR_SUITE_IO"]

ERR_SUITE_IO = "{path}: cannot {action} the validation suite file: {error}"


def _open(path: str, mode: str) -> Any:
    if "://" in path:
        import fsspec  # heavy: only for URLs

        return fsspec.open(path, mode, encoding="utf-8").open()
    return open(path, mode, encoding="utf-8")


def save_suite(suite: Suite, path: str | os.PathLike[str]) -> str:
    """Write the suite as pretty JSON (local path or fsspec URL); returns the path.

    Why pretty JSON: suites are reviewed in pull requests and diffed between revisions. A file that
    cannot be written (permissions, unknown URL protocol, unreachable bucket) is a
    :class:`~fairmon.errors.ConfigError` naming the path.

    >>> import tempfile, pathlib
    >>> from fairmon.validation import Suite, load_suite
    >>> s = Suite(name="demo", expectations=(), columns={}, params={}, reference={})
    >>> path = save_suite(s, pathlib.Path(tempfile.mkdtemp()) / "suite.json")
    >>> load_suite(path) == s
    True
    """
    p = os.fspath(path)
    try:
        return _save(suite, p)
    except OSError as exc:
        raise ConfigError(ERR_SUITE_IO.format(path=p, action="write", error=exc)) from exc
    except (ValueError, ImportError) as exc:  # fsspec: unknown protocol / backend not installed
        raise ConfigError(ERR_SUITE_IO.format(path=p, action="write", error=exc)) from exc


def _save(suite: Suite, p: str) -> str:
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
    import fsspec  # heavy: only for URLs

    try:
        fs, q = fsspec.core.url_to_fs(path)
        return bool(fs.exists(q))
    except (OSError, ValueError, ImportError) as exc:  # unreachable store, unknown protocol, no backend
        raise ConfigError(ERR_SUITE_IO.format(path=path, action="find", error=exc)) from exc


def load_suite(path: str | os.PathLike[str]) -> Suite:
    """Read a suite written by :func:`save_suite`; a missing, foreign or hand-edited file → ConfigError.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> s = Suite(name="demo", expectations=(), columns={}, params={}, reference={})
    >>> load_suite(save_suite(s, pathlib.Path(tempfile.mkdtemp()) / "suite.json")).name
    'demo'
    """
    p = os.fspath(path)
    if not _exists(p):
        raise ConfigError(ERR_SUITE_MISSING.format(path=p))
    try:
        with _open(p, "r") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ConfigError(ERR_SUITE_FORMAT.format(path=p, problem=f"invalid JSON: {exc}")) from exc
    except (OSError, ValueError, ImportError) as exc:  # unreadable file, fsspec protocol/backend errors
        raise ConfigError(ERR_SUITE_IO.format(path=p, action="read", error=exc)) from exc
    if not isinstance(data, dict):
        raise ConfigError(ERR_SUITE_FORMAT.format(path=p, problem="top level is not an object"))
    return Suite.from_dict(data, source=p)
