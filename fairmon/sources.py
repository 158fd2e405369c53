"""Window data loaders: the rows of one monitoring window ``[start, end)`` from SQL or file partitions.

Why a module of its own: the DAG task, the CLI and the tests load a window the same way, and every
failure (missing partition, empty window, unreachable database, missing URL) becomes one
:class:`~fairmon.errors.DatasetError` / :class:`~fairmon.errors.ConfigError` that names the file or the
query instead of a pandas/SQLAlchemy traceback.

- **SQL**: the spec's query runs as a SQLAlchemy ``text()`` with ``:start`` and ``:end`` *bound* (never
  formatted into the SQL). The engine is passed in (the DAG builds it from the Airflow connection with
  ``PostgresHook(...).sqlalchemy_url``); without one, the URL comes from the environment variable the
  spec names (``data.sql.url_env``). On PostgreSQL the query runs under a ``statement_timeout`` of
  ``FAIRMON_SOURCE_STATEMENT_TIMEOUT_S`` seconds (default 600, ``0`` = none), so a runaway query is
  cancelled with a :class:`~fairmon.errors.DatasetError` naming the limit instead of holding a task.
- **Files**: the pattern is formatted with the window's ``start``/``end`` datetimes, ``${VAR}`` and
  ``~`` are expanded, and a relative path is resolved against ``base_dir`` (the spec file's folder when
  a :class:`~fairmon.config.MonitorSpec` is passed). Local paths and fsspec URLs (``memory://``,
  ``s3://`` with its extra installed) work. CSV always; Parquet needs ``pyarrow`` (or ``fastparquet``).

Example
-------
>>> import datetime as dt, pandas as pd, tempfile, pathlib
>>> from fairmon.config import FilesSource
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"x": [1, 2]}).to_csv(d / "2026-01-05.csv", index=False)
>>> load_window(FilesSource(pattern="{start:%Y-%m-%d}.csv"), dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6),
...             base_dir=d)["x"].tolist()
[1, 2]
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from fairmon._codes import TEXT_CATEGORIES
from fairmon._sql_query import (
    DEFAULT_SOURCE_STATEMENT_TIMEOUT_S,
    ERR_NO_URL,
    ERR_QUERY_FAILED,
    ERR_QUERY_TIMEOUT,
    ERR_TIMEOUT_VALUE,
    _inner_query,
    _run_query,
    _short_query,
    source_statement_timeout_s,
)
from fairmon.config import (
    DataSource,
    FilesSource,
    MonitorSpec,
    SqlSource,
    resolve_path,
)
from fairmon.errors import ConfigError, DatasetError
from fairmon.readiness import ERR_UNREACHABLE, file_exists, ready_sql, sql_window_ready, storage_failure
from fairmon.rules_sql import quote_identifier

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

__all__ = [
    "load_window",
    "load_window_counts",
    "window_counts_sql",
    "COUNT_COLUMN",
    "load_file",
    "file_format",
    "describe_window_source",
    "window_path",
    "schedule_local",
    "ERR_FILE_MISSING",
    "ERR_EMPTY_FILE",
    "ERR_EMPTY_QUERY",
    "ERR_NO_URL",
    "ERR_QUERY_FAILED",
    "ERR_READ_FAILED",
    "ERR_STORAGE_FAILED",
    "ERR_NO_PARQUET",
    "ERR_NOT_FOUND",
    "ERR_UNREACHABLE",
    "file_exists",
    "ready_sql",
    "sql_window_ready",
    "source_statement_timeout_s",
    "DEFAULT_SOURCE_STATEMENT_TIMEOUT_S",
    "ERR_QUERY_TIMEOUT",
    "ERR_TIMEOUT_VALUE",
]

#: the row-count column of :func:`load_window_counts`
COUNT_COLUMN = "fairmon_rows"
ERR_COUNT_COLUMN = "column {col!r} is reserved for the row counts of the database push-down; rename it in the query"
ERR_FILE_MISSING = "window [{start}, {end}): data file not found: {path}"
ERR_EMPTY_FILE = "window [{start}, {end}): data file has no rows: {path}"
ERR_EMPTY_QUERY = "window [{start}, {end}): query returned no rows: {query}"
ERR_READ_FAILED = "cannot read {fmt} data file {path}: {error}"
ERR_STORAGE_FAILED = "cannot read {fmt} data file {path}: the storage failed, not the data ({error}){retry}"
ERR_NOT_FOUND = "data file not found: {path}"
ERR_NO_PARQUET = "cannot read Parquet file {path}: install pyarrow (pip install pyarrow) or use format: csv"


def window_path(
    source: FilesSource,
    start: dt.datetime,
    end: dt.datetime,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The resolved partition path of the window (``${VAR}``, ``~`` expanded; relative → ``base_dir``).

    >>> window_path(FilesSource(pattern="d/{start:%Y%m%d}.csv"), dt.datetime(2026, 2, 1),
    ...             dt.datetime(2026, 2, 2), base_dir="/data")
    '/data/d/20260201.csv'
    """
    return resolve_path(source.path_for(start, end), base_dir=base_dir, env=env)


def schedule_local(spec: MonitorSpec, start: dt.datetime, end: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The window's bounds on the wall clock of ``schedule.timezone`` (the same instants), as a file
    pattern formats them: a partition of a Berlin schedule's day is named by that local day, not by
    the UTC date its start falls on (the day before). Naive bounds are returned as they are.

    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]},
    ...     "schedule": {"start_date": "2026-01-01", "timezone": "Europe/Berlin"}})
    >>> start = dt.datetime(2026, 1, 2, 23, tzinfo=dt.UTC)
    >>> window_path(spec.data.files, *schedule_local(spec, start, start + dt.timedelta(days=1)), base_dir="/data")
    '/data/d/2026-01-03.csv'
    """
    if start.tzinfo is None or end.tzinfo is None:
        return start, end
    tz = ZoneInfo(spec.schedule.timezone)
    return start.astimezone(tz), end.astimezone(tz)


def describe_window_source(spec: MonitorSpec, start: dt.datetime, end: dt.datetime) -> str:
    """Where the rows of the window come from, for error messages: the partition path or the query."""
    if spec.data.files is not None:
        return window_path(spec.data.files, *schedule_local(spec, start, end), base_dir=spec.base_dir)
    assert spec.data.sql is not None
    return f"query: {_short_query(spec.data.sql.query)}"


def file_format(path: str, declared: str | None = None) -> str:
    """The format a data file is read in: ``declared`` when given, else by its ending, case-insensitively
    (``.parquet`` / ``.pq`` are Parquet, anything else CSV). One rule for every reader of a spec's files.

    >>> file_format("ref.csv"), file_format("REF.PARQUET"), file_format("train.data", "parquet")
    ('csv', 'parquet', 'parquet')
    """
    if declared:
        return str(declared)
    return "parquet" if path.lower().endswith((".parquet", ".pq")) else "csv"


def load_file(path: str, fmt: str, *, columns: Sequence[str] | None = None,
              text_as_categories: bool = False) -> pd.DataFrame:
    """Read one CSV/Parquet file (local or fsspec URL); every read error is a DatasetError naming the file.

    An empty CSV reads as an empty frame (the caller decides whether that is an error). ``columns``
    reads only those columns (Parquet column projection; CSV ``usecols``) when the file has every one
    of them, in the file's order; a file lacking any of them is read whole, so a check for missing
    columns can name what the file holds.

    ``text_as_categories`` (Parquet): the file's text columns are read through Arrow's dictionary
    decoding and arrive as :class:`pandas.Categorical` (categories sorted, only those present: what
    ``astype("category")`` of the text column gives), without a string per row; the frame's
    ``attrs[TEXT_CATEGORIES]`` names them (:func:`fairmon.pipeline.frames.as_texts` gives the texts
    back). A CSV is read as written either way.

    >>> load_file("/nonexistent/2026-02-01.csv", "csv")
    Traceback (most recent call last):
    ...
    fairmon.errors.DatasetError: data file not found: /nonexistent/2026-02-01.csv
    """
    if fmt == "parquet" and not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
        raise DatasetError(ERR_NO_PARQUET.format(path=path))
    try:
        if fmt == "csv":
            wanted = _projection(path, fmt, columns) if columns is not None else None
            return pd.read_csv(path) if wanted is None else pd.read_csv(path, usecols=lambda c: c in wanted)
        if not text_as_categories or importlib.util.find_spec("pyarrow") is None:
            wanted = _projection(path, fmt, columns) if columns is not None else None
            return pd.read_parquet(path, columns=wanted)
        return _read_parquet_categories(path, columns)
    except FileNotFoundError as exc:
        raise _data_problem(DatasetError(ERR_NOT_FOUND.format(path=path)), "file_exists") from exc
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except Exception as exc:  # noqa: BLE001 - parser/IO errors of many libraries → one clear error
        raise _read_failure(exc, fmt, path) from exc


def _read_failure(exc: Exception, fmt: str, path: str) -> DatasetError:
    """A file that could not be read: the data's problem (``file_readable``: the window is
    ``data_invalid``), or the storage's (:func:`~fairmon.readiness.storage_failure`: a plain failure,
    retryable when transient — a dropped connection must not be reported, and alerted, as bad data)."""
    storage = storage_failure(exc)
    if storage is None:
        return _data_problem(DatasetError(ERR_READ_FAILED.format(fmt=fmt, path=path, error=exc)), "file_readable")
    err = DatasetError(ERR_STORAGE_FAILED.format(fmt=fmt, path=path, error=f"{type(exc).__name__}: {exc}",
                                                 retry="; retryable" if storage else ""))
    err.retryable = storage
    return err


def _read_parquet_categories(path: str, columns: Sequence[str] | None) -> pd.DataFrame:
    """:func:`load_file` of a Parquet file with its text columns dictionary-decoded into categoricals."""
    import pyarrow as pa

    schema = _parquet_schema(path)
    have = list(schema.names)
    wanted = [c for c in have if c in set(columns)] if columns is not None and set(columns) <= set(have) else None
    text = [f.name for f in schema if (wanted is None or f.name in wanted)
            and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))]
    # self_destruct: Arrow frees each column once pandas holds it (a smaller peak than table + frame)
    frame = pd.read_parquet(path, columns=wanted, engine="pyarrow", read_dictionary=text or None,
                            to_pandas_kwargs={"self_destruct": True})
    for col in text:
        s = frame[col]
        if not isinstance(s.dtype, pd.CategoricalDtype):
            continue
        codes = s.cat.codes.to_numpy()
        present = np.bincount(codes[codes >= 0], minlength=len(s.cat.categories)) > 0  # O(n), no sort
        if not present.all():  # a dictionary can hold texts no row has
            s = s.cat.remove_categories(s.cat.categories[~present])
        frame[col] = s.cat.set_categories(pd.Index(sorted(s.cat.categories), dtype="str"))
    done = {c: "str" for c in text if isinstance(frame[c].dtype, pd.CategoricalDtype)}  # pandas>=3 reads text as str
    if done:
        frame.attrs[TEXT_CATEGORIES] = {**frame.attrs.get(TEXT_CATEGORIES, {}), **done}
    return frame


def _parquet_schema(path: str) -> Any:
    """The Arrow schema in a Parquet file's footer (local path or fsspec URL)."""
    import pyarrow.parquet as pq

    if "://" in path:
        import fsspec

        with fsspec.open(path, "rb") as fh:
            return pq.read_schema(fh)
    return pq.read_schema(path)


def _projection(path: str, fmt: str, columns: Sequence[str]) -> list[str] | None:
    """The file's columns among ``columns`` in file order, or None (read everything) when the file
    lacks one of them. Reads only the header (CSV) or the footer's schema (Parquet)."""
    if fmt == "csv":
        try:
            have = [str(c) for c in pd.read_csv(path, nrows=0).columns]
        except pd.errors.EmptyDataError:
            return None
    else:
        have = list(_parquet_schema(path).names)
    wanted = set(columns)
    if not wanted <= set(have):
        return None
    return [c for c in have if c in wanted]


def _data_problem(err: DatasetError, check: str) -> DatasetError:
    """Mark ``err`` as a problem of the window's data (``err.data_problem``: the failed check), so the
    pipeline records the window ``data_invalid`` with one data alert rather than ``failed``."""
    err.data_problem = check  # type: ignore[attr-defined]
    return err


def _load_files(
    source: FilesSource,
    start: dt.datetime,
    end: dt.datetime,
    *,
    base_dir: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
    allow_empty: bool,
    columns: Sequence[str] | None = None,
    text_as_categories: bool = False,
) -> pd.DataFrame:
    path = window_path(source, start, end, base_dir=base_dir, env=env)
    if not file_exists(path):
        raise _data_problem(DatasetError(ERR_FILE_MISSING.format(start=start, end=end, path=path)), "file_exists")
    frame = load_file(path, source.format or "csv", columns=columns, text_as_categories=text_as_categories)
    if len(frame) == 0 and not allow_empty:
        raise _data_problem(DatasetError(ERR_EMPTY_FILE.format(start=start, end=end, path=path)), "file_not_empty")
    return frame


def _load_sql(
    source: SqlSource,
    start: dt.datetime,
    end: dt.datetime,
    *,
    engine: Engine | str | None,
    env: Mapping[str, str] | None,
    allow_empty: bool,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    sql = source.query
    if columns is not None:  # a select list over the window's query, when the query has every column
        inner = _inner_query(source)
        try:  # the projection is an optimisation: a query that cannot be a subquery is run as written
            names = [str(c) for c in _run_query(source, f"SELECT * FROM ({inner}) AS fairmon_window LIMIT 0", start,
                                                end, engine=engine, env=env, shown=source.query).columns]
        except DatasetError as exc:
            log.info("SQL source: the query is read whole (as a subquery it failed: %s)", exc)
            names = []
        if names and set(columns) <= set(names) and len(set(names)) == len(names):
            keep = ", ".join(quote_identifier(c) for c in names if c in set(columns))
            sql = f"SELECT {keep} FROM ({inner}) AS fairmon_window"
    frame = _run_query(source, sql, start, end, engine=engine, env=env, shown=source.query)
    if len(frame) == 0 and not allow_empty:
        raise _data_problem(DatasetError(ERR_EMPTY_QUERY.format(start=start, end=end, query=_short_query(source.query))),
                            "query_not_empty")
    return frame


def load_window_counts(
    source: SqlSource,
    start: dt.datetime,
    end: dt.datetime,
    columns: Sequence[str],
    *,
    engine: Engine | str | None = None,
    env: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The distinct value combinations of ``columns`` in the window and how many rows have each,
    counted in the database (``GROUP BY`` over the window's query): only the counts leave it (the other
    steps still load the rows; the counts are a second read of the query, so a source still being
    written can differ from the pulled rows).

    Returns a frame with ``columns`` and :data:`COUNT_COLUMN` (NULLs form their own combination);
    :func:`fairmon.fairness.outcome.outcome_metrics` takes it with ``row_counts``.

    Raises
    ------
    DatasetError
        The query fails or the window has no rows.

    Examples
    --------
    >>> from fairmon.config import SqlSource
    >>> src = SqlSource(query="SELECT * FROM t WHERE ts >= :start AND ts < :end")
    >>> print(window_counts_sql(src, ["sex", "decision"]))
    SELECT "sex", "decision", COUNT(*) AS "fairmon_rows" FROM (SELECT * FROM t WHERE ts >= :start AND ts < :end) AS fairmon_window GROUP BY "sex", "decision"
    """
    if COUNT_COLUMN in columns:
        raise ConfigError(ERR_COUNT_COLUMN.format(col=COUNT_COLUMN))
    counts = _run_query(source, window_counts_sql(source, columns), start, end, engine=engine, env=env)
    if len(counts) == 0:  # as an empty pulled window: data_invalid, not failed
        raise _data_problem(DatasetError(ERR_EMPTY_QUERY.format(start=start, end=end, query=_short_query(source.query))),
                            "query_not_empty")
    counts[COUNT_COLUMN] = counts[COUNT_COLUMN].astype("int64")
    return counts


def window_counts_sql(source: SqlSource, columns: Sequence[str]) -> str:
    """The ``GROUP BY`` query of :func:`load_window_counts` (identifiers double-quoted)."""
    cols = ", ".join(quote_identifier(c) for c in columns)
    inner = _inner_query(source)
    return (f"SELECT {cols}, COUNT(*) AS {quote_identifier(COUNT_COLUMN)} FROM ({inner}) AS fairmon_window "
            f"GROUP BY {cols}")


def load_window(
    source: MonitorSpec | DataSource | SqlSource | FilesSource,
    start: dt.datetime,
    end: dt.datetime,
    *,
    engine: Engine | str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    allow_empty: bool = False,
    columns: Sequence[str] | None = None,
    text_as_categories: bool = False,
) -> pd.DataFrame:
    """Load the rows of the window ``[start, end)`` from a spec's data source.

    Parameters
    ----------
    source : MonitorSpec, DataSource, SqlSource or FilesSource
        With a ``MonitorSpec``, relative file paths resolve against the spec file's folder.
    start, end : datetime
        The window bounds (bound as ``:start``/``:end`` in SQL; formatted into a file pattern, with a
        ``MonitorSpec`` on the wall clock of its ``schedule.timezone``: :func:`schedule_local`).
    engine : sqlalchemy Engine or URL, optional
        For SQL sources; default: the URL in the environment variable ``data.sql.url_env``.
    base_dir : path, optional
        Folder for relative file patterns (overrides the spec's folder); default the cwd.
    env : mapping, optional
        Environment for ``${VAR}`` expansion and the SQL URL (default ``os.environ``).
    allow_empty : bool
        Return an empty frame instead of raising :class:`DatasetError` for a window with no rows.
    columns : sequence of str, optional
        Read only these columns (the ones the monitor uses) when the source has all of them: Parquet
        column projection, CSV ``usecols``, a SQL select list over the window's query. A source lacking
        one of them is read whole (so the missing-column check names what it holds).
    text_as_categories : bool
        A Parquet file's text columns arrive as categoricals, decoded from the file's dictionaries
        (:func:`load_file`); other sources are read as stored.

    Returns
    -------
    pandas.DataFrame
        The window's rows, columns as stored (validation checks them against the suite).

    Raises
    ------
    DatasetError
        Missing/unreadable file, empty window, failing query (``retryable`` for connection errors).
    ConfigError
        A SQL source without an engine or URL.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "2026-02-01.csv").write_text("a,b\\n1,2\\n")
    >>> src = FilesSource(pattern="{start:%Y-%m-%d}.csv")
    >>> load_window(src, dt.datetime(2026, 2, 1), dt.datetime(2026, 2, 2), base_dir=folder).shape
    (1, 2)
    """
    if isinstance(source, MonitorSpec):
        if base_dir is None:
            base_dir = source.base_dir
        if source.data.files is not None:  # a pattern names the schedule's local day
            start, end = schedule_local(source, start, end)
        source = source.data
    if isinstance(source, DataSource):
        source = source.sql if source.sql is not None else source.files  # type: ignore[assignment]
    if isinstance(source, SqlSource):
        return _load_sql(source, start, end, engine=engine, env=env, allow_empty=allow_empty, columns=columns)
    if isinstance(source, FilesSource):
        return _load_files(source, start, end, base_dir=base_dir, env=env, allow_empty=allow_empty, columns=columns,
                           text_as_categories=text_as_categories)
    raise TypeError(f"load_window needs a MonitorSpec or data source, got {type(source).__name__}")
