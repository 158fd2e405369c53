"""Engine factory: one place that turns ``--db`` / ``FAIRMON_DATABASE_URL`` / nothing into an engine.

Why one factory: every entry point (CLI, Airflow task, demo, tests) must resolve the database the same
way, normalise the URL forms that other tools hand out (Airflow's ``Connection.get_uri()`` gives
``postgres://``, which SQLAlchemy rejects), and report connection problems as a retryable
:class:`~fairmon.errors.StoreError` that names the host and database but never the password.

Resolution order: explicit URL → ``FAIRMON_DATABASE_URL`` → an embedded PostgreSQL (``pgserver``) whose
data directory lives under ``$FAIRMON_HOME/pgdata`` (default ``~/.fairmon/pgdata``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Engine

from fairmon.config import ENV_DATABASE_URL, ENV_HOME
from fairmon.errors import StoreError

__all__ = [
    "ENV_DATABASE_URL",
    "ENV_HOME",
    "ERR_CONNECT",
    "ERR_BAD_URL",
    "ERR_EMBEDDED",
    "ERR_DB",
    "RETRYABLE_SQLSTATE_CLASSES",
    "get_engine",
    "normalize_url",
    "describe_url",
    "embedded_url",
    "stop_embedded",
    "fairmon_home",
    "translate_errors",
    "ping",
]

log = logging.getLogger(__name__)


ERR_CONNECT = "cannot reach the fairmon database {where}: {reason}"
ERR_BAD_URL = "invalid database URL {url!r}: {reason} (expected postgresql://user@host:port/database)"
ERR_EMBEDDED = "cannot start the embedded PostgreSQL in {path}: {reason}"
ERR_DB = "database error on {where}: {reason}"
#: SQLSTATE classes after which a retry may succeed
RETRYABLE_SQLSTATE_CLASSES = ("08", "40", "53", "57")

_ENGINES: dict[str, Engine] = {}
_SERVERS: dict[str, Any] = {}  # keep pgserver handles alive for the process lifetime
_LOCK = threading.Lock()

T = TypeVar("T")


def fairmon_home() -> Path:
    """``$FAIRMON_HOME`` or ``~/.fairmon``: where the embedded database and local state live."""
    return Path(os.environ.get(ENV_HOME) or Path.home() / ".fairmon").expanduser()


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL and pin the psycopg2 driver.

    ``postgres://`` (Airflow, Heroku) and ``postgresql://`` become ``postgresql+psycopg2://``; other
    drivers are refused because fairmon's SQL is PostgreSQL's.

    Examples
    --------
    >>> normalize_url("postgres://u:pw@db:5432/fm").render_as_string(hide_password=True)
    'postgresql+psycopg2://u:***@db:5432/fm'
    """
    try:
        parsed = sa.make_url(url) if isinstance(url, str) else url
    except (sa_exc.ArgumentError, ValueError):
        err = StoreError(ERR_BAD_URL.format(url=_mask_password_text(str(url)), reason="cannot parse it"))
        err.retryable = False
        raise err from None
    backend = parsed.drivername.split("+", 1)[0]
    if backend not in ("postgres", "postgresql"):
        err = StoreError(
            ERR_BAD_URL.format(
                url=parsed.render_as_string(hide_password=True), reason=f"unsupported backend {backend!r}"
            )
        )
        err.retryable = False
        raise err
    return parsed.set(drivername="postgresql+psycopg2")


def _mask_password_text(text: str) -> str:
    # "scheme://user:secret@host" → "scheme://user:***@host" for unparsable strings
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", text)


def describe_url(url: str | URL) -> str:
    """``host:port/database (user u)`` for messages and logs — never the password.

    Examples
    --------
    >>> describe_url("postgresql://fm:secret@db.example:5433/fairmon")
    'db.example:5433/fairmon (user fm)'
    """
    u = sa.make_url(url) if isinstance(url, str) else url
    host = u.host or u.query.get("host") or "localhost"
    if isinstance(host, tuple):
        host = host[0]
    port = f":{u.port}" if u.port else ""
    user = f" (user {u.username})" if u.username else ""
    return f"{host}{port}/{u.database or ''}{user}"


def embedded_url(path: str | Path | None = None, *, database: str = "fairmon") -> str:
    """Start (or reuse) the embedded PostgreSQL and return a URL to its ``fairmon`` database.

    The server is ``pgserver``'s PostgreSQL binary listening on a Unix socket in the data directory,
    shared by every process that asks for the same directory and stopped when the last one exits.
    """
    pgdata = Path(path) if path is not None else fairmon_home() / "pgdata"
    key = str(pgdata.resolve())
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None:
            try:
                with warnings.catch_warnings():  # platformdirs: "XDG_RUNTIME_DIR is not set" (harmless)
                    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
                    import pgserver

                    pgdata.mkdir(parents=True, exist_ok=True)
                    server = pgserver.get_server(pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
            except Exception as exc:  # noqa: BLE001 - any start-up failure becomes one clear error
                raise StoreError(ERR_EMBEDDED.format(path=pgdata, reason=exc)) from exc
            _SERVERS[key] = server
    admin = normalize_url(server.get_uri())
    eng = sa.create_engine(admin, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as conn:
            exists = conn.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :d"), {"d": database}
            ).scalar()
            if not exists:
                try:
                    conn.execute(sa.text(f'CREATE DATABASE "{database}"'))
                except sa_exc.ProgrammingError:  # created concurrently by another process
                    pass
    except sa_exc.DBAPIError as exc:
        raise _connect_error(admin, exc) from exc
    finally:
        eng.dispose()
    return admin.set(database=database).render_as_string(hide_password=False)


def stop_embedded(path: str | Path | None = None) -> bool:
    """Stop this process's handle on the embedded server (the server stops when no process uses it).

    Disposes cached engines that point at it. Returns whether a server handle was held.
    """
    pgdata = Path(path) if path is not None else fairmon_home() / "pgdata"
    key = str(pgdata.resolve())
    with _LOCK:
        server = _SERVERS.pop(key, None)
        for url_key in list(_ENGINES):
            host = sa.make_url(url_key).query.get("host")
            if host is not None and str(Path(str(host)).resolve()) == key:
                _ENGINES.pop(url_key).dispose()
    if server is None:
        return False
    server.cleanup()
    return True


def get_engine(db_url: str | URL | None = None, *, check: bool = True, echo: bool = False) -> Engine:
    """The fairmon engine: explicit URL, else ``FAIRMON_DATABASE_URL``, else the embedded database.

    Engines are cached per URL (one pool per process). ``pool_pre_ping`` replaces connections that a
    database restart or an idle timeout killed. Sessions run in UTC so timestamps read back compare
    equal to what was written.

    Parameters
    ----------
    db_url
        Database URL (``postgres://``, ``postgresql://`` or ``postgresql+psycopg2://``).
    check
        Connect once now, so a wrong host or a database that is down fails here as a retryable
        :class:`StoreError` naming ``host:port/database`` rather than deep inside a task.

    Examples
    --------
    >>> engine = get_engine("postgresql://postgres@127.0.0.1:5432/postgres")  # doctest: +SKIP
    >>> from fairmon.store import upgrade, Store
    >>> upgrade(engine); store = Store(engine)  # doctest: +SKIP
    """
    raw = db_url if db_url is not None else os.environ.get(ENV_DATABASE_URL) or None
    if raw is None:
        raw = embedded_url()
    url = normalize_url(raw)
    key = url.render_as_string(hide_password=False)
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = sa.create_engine(
                url,
                pool_pre_ping=True,
                pool_size=5,
                max_overflow=5,
                echo=echo,
                connect_args={"options": "-c timezone=UTC", "connect_timeout": 10},
            )
            _ENGINES[key] = engine
    if check:
        ping(engine)
    return engine


def ping(engine: Engine) -> None:
    """Run ``SELECT 1``; a failure becomes a retryable :class:`StoreError` naming the host."""
    with translate_errors(engine):
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


def _connect_error(url: URL, exc: BaseException) -> StoreError:
    reason = _first_line(exc)
    if url.password:
        reason = reason.replace(str(url.password), "***")
    err = StoreError(ERR_CONNECT.format(where=describe_url(url), reason=reason))
    err.retryable = True
    return err


@contextmanager
def translate_errors(engine: Engine) -> Iterator[None]:
    """Turn SQLAlchemy/psycopg2 errors into :class:`StoreError` (connection problems retryable).

    The original exception is chained with ``from None`` for connection errors because psycopg2's
    connection errors can echo parts of the DSN; the message keeps the reason's first line.
    """
    try:
        yield
    except StoreError:
        raise
    except sa_exc.DBAPIError as exc:
        pgcode = getattr(getattr(exc, "orig", None), "pgcode", None)
        if pgcode is None and isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError)):
            raise _connect_error(engine.url, exc) from None  # no SQLSTATE: the connection itself failed
        reason = _first_line(exc)
        if engine.url.password:
            reason = reason.replace(str(engine.url.password), "***")
        err = StoreError(ERR_DB.format(where=describe_url(engine.url), reason=reason))
        # connection lost (08), serialization failure / deadlock (40), server resources (53),
        # shutdown or statement timeout (57): trying again later may succeed
        err.retryable = bool(pgcode) and str(pgcode)[:2] in RETRYABLE_SQLSTATE_CLASSES
        raise err from exc


def run_translated(engine: Engine, fn: Callable[[], T]) -> T:
    """Call ``fn`` inside :func:`translate_errors`."""
    with translate_errors(engine):
        return fn()
