"""Readiness: whether a window's data is there yet (the late-data check of
:mod:`fairmon.pipeline.late` and the Airflow sensor): a file partition exists, or a SQL source has rows
at or after the window's end (or its ``ready_query`` says so).

The SQL checks run through the same query runner as the window's pull (:mod:`fairmon._sql_query`).
These names are also importable from :mod:`fairmon.sources`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fairmon._sql_query import _inner_query, _run_query
from fairmon.config import SqlSource
from fairmon.errors import DatasetError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["ERR_UNREACHABLE", "file_exists", "ready_sql", "sql_window_ready"]

ERR_UNREACHABLE = "cannot reach data file {path}: {error}"


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
        raise DatasetError(ERR_UNREACHABLE.format(path=path, error=f"{type(exc).__name__}: {exc}")) from exc


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
