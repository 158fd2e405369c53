"""Running a SQL source's queries: the window's query and the queries over it (projection, readiness,
the outcome push-down), with ``:start``/``:end`` bound, under the source's statement timeout, every
failure one :class:`~fairmon.errors.DatasetError` naming the query (:mod:`fairmon.sources`,
:mod:`fairmon.readiness`)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd
import sqlalchemy as sa

from fairmon._sqlstate import QUERY_CANCELED
from fairmon.config import ENV_SOURCE_STATEMENT_TIMEOUT_S, SqlSource
from fairmon.errors import ConfigError, DatasetError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = [
    "DEFAULT_SOURCE_STATEMENT_TIMEOUT_S", "ERR_NO_URL", "ERR_QUERY_FAILED", "ERR_QUERY_TIMEOUT", "ERR_TIMEOUT_VALUE",
    "source_statement_timeout_s",
]

ERR_NO_URL = (
    "no database for the SQL source: pass an engine (Airflow connection {conn!r}) or set the environment "
    "variable {env} to a SQLAlchemy URL"
)
ERR_QUERY_FAILED = "window [{start}, {end}): query failed on {url}: {error} (query: {query})"
ERR_QUERY_TIMEOUT = (
    "window [{start}, {end}): query on {url} ran longer than {seconds:g} s and was cancelled "
    "(the limit is {env}; 0 = no limit) (query: {query})"
)
ERR_TIMEOUT_VALUE = "{env}: expected a number of seconds >= 0 (0 = no limit), got {value!r}"
#: longest window query of a SQL source (seconds) when ``FAIRMON_SOURCE_STATEMENT_TIMEOUT_S`` is unset
DEFAULT_SOURCE_STATEMENT_TIMEOUT_S = 600.0

def source_statement_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """Seconds a window query may run (``FAIRMON_SOURCE_STATEMENT_TIMEOUT_S``; ``0`` = no limit).

    >>> source_statement_timeout_s({}), source_statement_timeout_s({"FAIRMON_SOURCE_STATEMENT_TIMEOUT_S": "30"})
    (600.0, 30.0)
    """
    raw = (os.environ if env is None else env).get(ENV_SOURCE_STATEMENT_TIMEOUT_S)
    if raw is None or not str(raw).strip():
        return DEFAULT_SOURCE_STATEMENT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        raise ConfigError(ERR_TIMEOUT_VALUE.format(env=ENV_SOURCE_STATEMENT_TIMEOUT_S, value=raw)) from None
    if not 0 <= seconds < float("inf"):
        raise ConfigError(ERR_TIMEOUT_VALUE.format(env=ENV_SOURCE_STATEMENT_TIMEOUT_S, value=raw))
    return seconds


def _short_query(query: str) -> str:
    text = " ".join(query.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _run_query(
    source: SqlSource,
    sql: str,
    start: dt.datetime,
    end: dt.datetime,
    *,
    engine: Engine | str | None,
    env: Mapping[str, str] | None,
    shown: str | None = None,
) -> pd.DataFrame:
    """Run ``sql`` (the window's query or a query over it) with ``:start``/``:end`` bound; errors name
    ``shown`` (default ``sql``)."""
    env = os.environ if env is None else env
    own = False
    if engine is None:
        url = env.get(source.url_env)
        if not url:
            raise ConfigError(ERR_NO_URL.format(conn=source.connection, env=source.url_env))
        engine, own = sa.create_engine(url), True
    elif isinstance(engine, str):
        engine, own = sa.create_engine(engine), True
    query = _short_query(sql if shown is None else shown)
    timeout_s = source_statement_timeout_s(env)
    try:
        with engine.connect() as conn, conn.begin():
            if timeout_s > 0 and conn.dialect.name == "postgresql":  # for this transaction only
                conn.execute(sa.select(sa.func.set_config("statement_timeout", f"{round(timeout_s * 1000)}ms", True)))
            return pd.read_sql_query(sa.text(sql), conn, params={"start": start, "end": end})
    except (sa.exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
        # pandas wraps SQLAlchemy's error in its own DatabaseError
        cause = exc.__cause__ if isinstance(exc, pd.errors.DatabaseError) and exc.__cause__ else exc
        safe_url = engine.url.render_as_string(hide_password=True)
        if getattr(getattr(cause, "orig", None), "pgcode", None) == QUERY_CANCELED:
            err = DatasetError(ERR_QUERY_TIMEOUT.format(start=start, end=end, url=safe_url, seconds=timeout_s,
                                                        env=ENV_SOURCE_STATEMENT_TIMEOUT_S, query=query))
            err.retryable = True  # the source may be less loaded on the next attempt
            raise err from None
        err = DatasetError(
            ERR_QUERY_FAILED.format(start=start, end=end, url=safe_url, error=_first_line(cause), query=query)
        )
        # connection problems may go away; a broken query will not
        err.retryable = isinstance(cause, sa.exc.OperationalError | sa.exc.InterfaceError)
        raise err from None
    finally:
        if own:
            engine.dispose()


def _inner_query(source: SqlSource) -> str:
    """The window's query as a subquery: no trailing semicolon, and a newline after a last line that holds
    a ``--`` comment, so the comment cannot swallow the closing parenthesis.

    Examples
    --------
    >>> from fairmon.config import SqlSource
    >>> _inner_query(SqlSource(query="SELECT * FROM t WHERE ts >= :start AND ts < :end -- daily;"))
    'SELECT * FROM t WHERE ts >= :start AND ts < :end -- daily\\n'
    """
    query = source.query.strip().rstrip(";").strip()
    return query + "\n" if "--" in query.splitlines()[-1] else query


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
