"""Where a task finds its store, its Slack token and a SQL source: Airflow connections, else env.

Resolved inside task processes only, never at parse time. A deployment names the connections
``fairmon_db`` (Postgres store) and ``fairmon_slack`` (bot token in the password field); a local run
without them falls back to ``FAIRMON_DATABASE_URL`` / ``FAIRMON_SLACK_TOKEN``, exactly as the CLI reads
them. A SQL data source uses the connection its spec names (``data.sql.connection``); without one, the
pipeline reads the spec's ``data.sql.url_env``.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from fairmon.config import ENV_DATABASE_URL, ENV_DB_CONN_ID, ENV_SLACK_CONN_ID, ENV_SLACK_TOKEN, load_spec

__all__ = ["DB_CONN_ID", "SLACK_CONN_ID", "db_url", "slack_token", "source_url", "asource_url"]

log = logging.getLogger(__name__)

#: Airflow connection ids (override with env for a deployment that names them differently)
DB_CONN_ID = os.environ.get(ENV_DB_CONN_ID, "fairmon_db")
SLACK_CONN_ID = os.environ.get(ENV_SLACK_CONN_ID, "fairmon_slack")
_POSTGRES_TYPES = ("postgres", "postgresql")


def _postgres_url(conn_id: str, connection: Any = None) -> str:
    """The SQLAlchemy URL of a Postgres connection (``connection``: already fetched, no lookup)."""
    # airflow provider: imported only inside a running task (it pulls SQLAlchemy and psycopg2)
    from airflow.providers.postgres.hooks.postgres import PostgresHook

    hook = PostgresHook(postgres_conn_id=conn_id, **({} if connection is None else {"connection": connection}))
    return str(hook.sqlalchemy_url.render_as_string(hide_password=False))


def _url_of(conn_id: str, conn: Any) -> str:
    return _postgres_url(conn_id, conn) if conn.conn_type in _POSTGRES_TYPES else str(conn.get_uri())


def db_url() -> str | None:
    """The store URL from the ``fairmon_db`` connection, else ``FAIRMON_DATABASE_URL`` (None: embedded).

    Examples
    --------
    Without a ``fairmon_db`` connection (a local run), the environment's URL:

    >>> os.environ["FAIRMON_DATABASE_URL"] = "postgresql+psycopg2://u@db/fairmon"  # doctest: +SKIP
    >>> db_url()  # doctest: +SKIP
    'postgresql+psycopg2://u@db/fairmon'
    """
    try:
        return _postgres_url(DB_CONN_ID)
    except Exception as exc:  # noqa: BLE001 - connection not defined: a local run
        log.info("connection %r not usable (%s); using %s", DB_CONN_ID, type(exc).__name__, ENV_DATABASE_URL)
        return os.environ.get(ENV_DATABASE_URL)


def slack_token() -> str | None:
    """The bot token from the ``fairmon_slack`` connection's password, else ``FAIRMON_SLACK_TOKEN``.

    Examples
    --------
    >>> os.environ["FAIRMON_SLACK_TOKEN"] = "xoxb-local"  # doctest: +SKIP
    >>> slack_token()  # no fairmon_slack connection: the environment's token  # doctest: +SKIP
    'xoxb-local'
    """
    try:
        from airflow.sdk import BaseHook  # airflow: only the glue package imports it

        token = BaseHook.get_connection(SLACK_CONN_ID).password
        if token:
            return str(token)
    except Exception:  # noqa: BLE001 - connection not defined: a local run
        pass
    return os.environ.get(ENV_SLACK_TOKEN) or None


def source_url(spec_path: str) -> str | None:
    """A SQL data source's URL from the connection the spec names (None: a file source, or use env).

    For a task process. The triggerer must not look connections up synchronously (Airflow 3 routes
    the lookup through its supervisor, which a sync call from a trigger cannot reach reliably): it uses
    :func:`asource_url`.

    Examples
    --------
    >>> source_url("monitors/demo.yaml") is None  # a file source  # doctest: +SKIP
    True
    """
    conn_id = _source_connection_id(spec_path)
    if conn_id is None:
        return None
    try:
        from airflow.sdk import BaseHook  # airflow: only the glue package imports it

        conn = BaseHook.get_connection(conn_id)
    except Exception:  # noqa: BLE001 - not defined in Airflow: the pipeline reads data.sql.url_env
        return None
    return _url_of(conn_id, conn)


async def asource_url(spec_path: str) -> str | None:
    """:func:`source_url` for a trigger: the connection is fetched with the SDK's async lookup.

    Examples
    --------
    >>> import asyncio
    >>> asyncio.run(asource_url("monitors/demo.yaml")) is None  # a file source  # doctest: +SKIP
    True
    """
    conn_id = _source_connection_id(spec_path)
    if conn_id is None:
        return None
    try:
        from airflow.sdk import BaseHook

        conn = await BaseHook.aget_connection(conn_id)
    except Exception:  # noqa: BLE001 - not defined in Airflow: the pipeline reads data.sql.url_env
        return None
    return _url_of(conn_id, conn)


def _source_connection_id(spec_path: str) -> str | None:
    spec = load_spec(spec_path)
    return None if spec.data.sql is None else spec.data.sql.connection
