"""Readiness: whether a window's data is there yet (the late-data check of
:mod:`fairmon.pipeline.late` and the Airflow sensor): a file partition exists, or a SQL source has rows
at or after the window's end (or its ``ready_query`` says so).

The SQL checks run through the same query runner as the window's pull (:mod:`fairmon._sql_query`).
These names are also importable from :mod:`fairmon.sources`.
"""

from __future__ import annotations

import datetime as dt
import errno
import socket
import urllib.error
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fairmon._sql_query import _inner_query, _run_query
from fairmon.config import SqlSource
from fairmon.errors import DatasetError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["ERR_UNREACHABLE", "file_exists", "ready_sql", "sql_window_ready", "storage_failure"]

ERR_UNREACHABLE = "cannot reach data file {path}: {error}"

#: errnos of a storage that may answer on a later attempt (a network filesystem or object store hiccup)
_TRANSIENT_ERRNOS = frozenset({
    errno.EIO, errno.EAGAIN, errno.EBUSY, errno.ETIMEDOUT, errno.ECONNRESET, errno.ECONNREFUSED,
    errno.ECONNABORTED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENETDOWN, errno.EPIPE, errno.ESTALE,
})
#: top-level packages whose exceptions are a remote store's (HTTP status, connection), not a file's
#: contents (urllib: pandas reads http:// URLs with it)
_REMOTE_PACKAGES = frozenset({"aiohttp", "requests", "urllib", "urllib3", "botocore", "aiobotocore", "google", "azure",
                              "http"})


def storage_failure(exc: BaseException) -> bool | None:
    """Whether ``exc`` reading a data file is the storage's fault and worth retrying: ``True`` a
    transient one (a dropped connection, a timeout, an I/O error of a network filesystem, a remote
    store's client error), ``False`` one a retry will not fix (permission denied, a directory where the
    file should be), ``None`` not the storage's: the file's contents (a parser's error; pyarrow reports
    a corrupt Parquet footer as an ``OSError`` without an errno).

    The difference matters: a problem of the data makes the window ``data_invalid`` with a data alert
    and no retry; a storage outage must be retried, and never be reported as bad data.

    >>> storage_failure(ConnectionResetError("connection reset by peer"))
    True
    >>> storage_failure(PermissionError(13, "Permission denied"))
    False
    >>> storage_failure(OSError("Couldn't deserialize thrift")) is None  # a corrupt Parquet file
    True
    >>> storage_failure(ValueError("Error tokenizing data")) is None
    True
    >>> import urllib.error
    >>> storage_failure(urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")))  # http:// via pandas
    True
    >>> [storage_failure(urllib.error.HTTPError("http://x/d.csv", code, "", {}, None)) for code in (503, 403)]
    [True, False]
    >>> import socket
    >>> reasons = [socket.gaierror(socket.EAI_AGAIN, "Temporary failure"),
    ...            socket.gaierror(socket.EAI_NONAME, "Name not known"), "unknown url type: htp"]
    >>> [storage_failure(urllib.error.URLError(r)) for r in reasons]
    [True, False, False]
    """
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    if isinstance(exc, socket.gaierror):  # DNS: a server that did not answer in time, or a name that is not
        return exc.errno == socket.EAI_AGAIN
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        # no answer from the server: its reason decides (a refused connection, a DNS failure); a text
        # reason is the URL's own fault ("unknown url type")
        return storage_failure(exc.reason) is True if isinstance(exc.reason, BaseException) else False
    status = _http_status(exc)
    if status is not None:  # a server answered: it may be busy (5xx, 408, 429); anything else will not pass
        return status >= 500 or status in (408, 429)
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno in _TRANSIENT_ERRNOS
    if type(exc).__module__.split(".")[0] in _REMOTE_PACKAGES:
        return True  # a remote client's error without a status: the connection, a timeout
    return None


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status of a remote client's error (urllib, aiohttp, requests), None without one."""
    if type(exc).__module__.split(".")[0] not in _REMOTE_PACKAGES:
        return None
    response = getattr(exc, "response", None)
    meta = response.get("ResponseMetadata", {}) if isinstance(response, Mapping) else {}  # botocore ClientError
    for value in (getattr(exc, "code", None), getattr(exc, "status", None), getattr(response, "status_code", None),
                  meta.get("HTTPStatusCode") if isinstance(meta, Mapping) else None):
        if isinstance(value, int) and 100 <= value < 600:
            return value
    return None


def file_exists(path: str) -> bool:
    """Whether a data file exists (local path or fsspec URL); an unreachable store is a DatasetError.

    >>> file_exists("/nonexistent/2026-02-01.csv")
    False
    """
    if "://" not in path:
        return Path(path).is_file()
    import fsspec  # heavy: only for URLs

    try:
        fs, p = fsspec.core.url_to_fs(path)
        return bool(fs.exists(p))
    except (OSError, ValueError, ImportError) as exc:  # unreachable store, unknown protocol, no backend
        err = DatasetError(ERR_UNREACHABLE.format(path=path, error=f"{type(exc).__name__}: {exc}"))
        err.retryable = storage_failure(exc) is True  # an outage may pass; a bad URL or backend will not
        raise err from exc


def ready_sql(source: SqlSource) -> str:
    """The readiness query of a SQL source: ``ready_query``, else ``SELECT 1`` over ``query`` (which
    :func:`sql_window_ready` runs from the window's end on).

    Examples
    --------
    >>> import pandas as pd

from fairmon._sql_query import _inner_query, _run_query
from fairmon.config import SqlSource
    >>> print(ready_sql(SqlSource(query="SELECT * FROM t WHERE ts >= :start AND ts < :end;")))
    SELECT 1 FROM (SELECT * FROM t WHERE ts >= :start AND ts < :end) AS fairmon_ready LIMIT 1
    """
    if source.ready_query is not None:
        return source.ready_query
    return f"SELECT 1 FROM ({_inner_query(source)}) AS fairmon_ready LIMIT 1"


def sql_window_ready(
    source: SqlSource,
    start: dt.datetime,
    end: dt.datetime,
    *,
    engine: Engine | str | None = None,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Whether the rows of the window ``[start, end)`` of a SQL source are there (the late-data check).

    With ``ready_query``: it runs with the window's ``:start``/``:end`` and the window is ready when
    its first row's first value is true (not NULL, false or 0); no row is not ready. Without it: the
    source has rows at or after the window's end, i.e. ``query`` returns a row for
    ``[end, max(end, now) + (end - start))`` (a gap in the source, such as a weekend, does not block). Either runs under the source's statement timeout
    (:func:`fairmon.sources.source_statement_timeout_s`); a failure is a :class:`~fairmon.errors.DatasetError` as for
    the window's query (``retryable`` for a timeout or a lost connection).
    """
    if source.ready_query is not None:
        got = _run_query(source, source.ready_query, start, end, engine=engine, env=env)
    else:
        horizon = max(end, dt.datetime.now(end.tzinfo or dt.UTC)) + (end - start)  # gaps (weekends) do not block
        got = _run_query(source, ready_sql(source), end, horizon, engine=engine, env=env)
    if len(got) == 0 or got.shape[1] == 0:
        return False
    first = got.iat[0, 0]
    return bool(first) if not pd.isna(first) else False
