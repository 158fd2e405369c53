"""Paths and URIs written in a spec: ``${VAR}`` expansion, resolution against the spec folder, schemes.

Why here: every section with a location (registry, data pattern, reference data, suite, training
data, artifacts) shares one rule set, so a path means the same thing wherever it is written. A URI
must name a scheme fsspec knows (the library reads every location through fsspec); an unknown one
fails at load with the file and field, instead of as fsspec's bare ``ValueError`` inside a worker.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from fairmon._uris import is_mlflow_uri
from fairmon.config._messages import ERR_ENV_UNSET, ERR_URI_SCHEME, excerpt
from fairmon.errors import ConfigError

#: URI schemes a spec location may use: the storage protocols of fsspec (``fsspec.registry``; a test
#: keeps this a subset of it). A scheme whose fsspec package is missing on a worker (``s3fs`` for
#: ``s3://``) still fails there, at first use; the scheduler that loads the spec needs none of them.
KNOWN_URI_SCHEMES: frozenset[str] = frozenset({
    "abfs", "adl", "arrow_hdfs", "az", "blockcache", "box", "cached", "dbfs", "dropbox", "file",
    "filecache", "ftp", "gcs", "gdrive", "git", "github", "gs", "hdfs", "hf", "http", "https",
    "lakefs", "libarchive", "local", "memory", "oci", "ocilake", "oss", "reference", "s3", "s3a",
    "sftp", "simplecache", "smb", "ssh", "tar", "tos", "tosfs", "wandb", "webdav", "webhdfs", "zip",
})

VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def split_vars(text: str) -> list[str]:
    """``text`` split into [literal, var, literal, var, ..., literal] around ``${VAR}`` references."""
    out: list[str] = []
    pos = 0
    for m in VAR_RE.finditer(text):
        out += [text[pos : m.start()], m.group(0)]
        pos = m.end()
    out.append(text[pos:])
    return out


def format_window(pattern: str, start: dt.datetime, end: dt.datetime) -> str:
    parts = split_vars(pattern)
    return "".join(p if i % 2 else p.format(start=start, end=end) for i, p in enumerate(parts))


def resolve_path(
    value: str, *, base_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Resolve a path from a spec: expand ``${VAR}``, ``${VAR:-default}`` and ``$VAR`` (from ``env``,
    default ``os.environ``) and ``~``; keep URIs (``scheme://...``) as they are; join a relative path
    with ``base_dir`` (default: the current directory) and normalise it.

    Why: specs live in a monitors folder and point at data/registries relative to themselves, while
    deployments relocate everything with one environment variable.

    >>> resolve_path("${ROOT:-../data}/x.csv", base_dir="/srv/monitors", env={})
    '/srv/data/x.csv'
    >>> resolve_path("${ROOT}/x.csv", env={"ROOT": "memory://d"})
    'memory://d/x.csv'
    """
    env = os.environ if env is None else env
    expanded = expand_vars(value, env)
    if "://" in expanded:
        if is_mlflow_uri(expanded):  # a model registry server, not a storage location (model.registry_uri)
            return expanded
        problem = _scheme_problem(expanded, expanded)
        if problem is not None:
            raise ConfigError(problem)
        return expanded
    p = Path(expanded).expanduser()
    if not p.is_absolute():
        p = Path(base_dir if base_dir is not None else Path.cwd()) / p
    return os.path.normpath(p)


def expand_vars(value: str, env: Mapping[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in env:
            return env[name]
        if m.group(2) is not None:
            return m.group(2)
        raise ConfigError(ERR_ENV_UNSET.format(name=name, value=excerpt(value)))

    return VAR_RE.sub(repl, value)



def uri_schemes(value: str) -> list[str]:
    """The URI schemes in ``value`` (fsspec chains ``a::b://...`` count each link), lowercased.

    >>> uri_schemes("simplecache::s3://bucket/key"), uri_schemes("data/x.csv")
    (['s3'], [])
    """
    return [piece.split("://", 1)[0].lower() for piece in value.split("::") if "://" in piece]


def check_uri(value: str) -> str:
    """``value`` when every URI scheme written in it is known (the text before a ``${VAR}`` only:
    a variable's value is checked when :func:`resolve_path` expands it).

    Examples
    --------
    >>> check_uri("s3://bucket/models")
    's3://bucket/models'
    >>> check_uri("foo://bucket")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown URI scheme 'foo' in 'foo://bucket'; use a local path or one of: abfs, adl, ...
    """
    problem = _scheme_problem(split_vars(value)[0], value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _scheme_problem(text: str, value: str) -> str | None:
    unknown = [s for s in uri_schemes(text) if s not in KNOWN_URI_SCHEMES]
    if not unknown:
        return None
    known = ", ".join(sorted(KNOWN_URI_SCHEMES))
    return ERR_URI_SCHEME.format(scheme=excerpt(unknown[0], 40), value=excerpt(value), known=known)


#: a location field of a spec: a local path or a URI with a known scheme
SpecPath = Annotated[str, AfterValidator(check_uri)]
