"""Versioned SQL migrations: ``sql/migrations/NNNN_description.sql`` applied in order, one transaction each.

Why plain SQL files: the schema is the product's interface to analysts (tables, views, the read-only
role), so it is written and reviewed as SQL, not derived from ORM models — and fairmon never falls back to
``create_all``. Each applied file is recorded in ``schema_migrations`` with its sha256; editing an applied
file is an error (write a new migration instead). A session-level advisory lock serialises concurrent
upgrades (two Airflow tasks starting at once). :func:`require_head` makes every writer refuse a database
that is behind (or ahead of) the code.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from fairmon.config import ENV_SQL_DIR
from fairmon.errors import SchemaNotAtHeadError, StoreError
from fairmon.store.engine import translate_errors

__all__ = [
    "ENV_SQL_DIR",
    "ERR_NOT_AT_HEAD",
    "ERR_CHECKSUM",
    "ERR_FILENAME",
    "ERR_DUPLICATE",
    "ERR_MIGRATION_FAILED",
    "Migration",
    "migrations_dir",
    "discover",
    "head_version",
    "current_version",
    "applied_migrations",
    "upgrade",
    "require_head",
]


ERR_NOT_AT_HEAD = "database at version {current}, code expects {head}; run `fairmon db upgrade`"
ERR_CHECKSUM = (
    "migration {version:04d} ({name}) was changed after it was applied (checksum {applied} in the "
    "database, {found} on disk); never edit an applied migration, add a new one"
)
ERR_FILENAME = "migration file name {name!r} does not match NNNN_description.sql"
ERR_DUPLICATE = "two migration files share version {version:04d}: {a} and {b}"
ERR_MIGRATION_FAILED = "migration {version:04d} ({name}) failed and was rolled back: {reason}"
ERR_MISSING_FILE = "database has migration {version:04d} ({name}) applied but no such file is in {directory}"

#: advisory-lock key (any constant bigint; "fairmon" in ASCII)
LOCK_KEY = 0x666169726D6F6E
_FILE_RE = re.compile(r"^(\d{4})_([a-z0-9][a-z0-9_]*)\.sql$")

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    """One migration file: version, description, SQL text and its sha256."""

    version: int
    name: str
    path: Path
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def migrations_dir() -> Path:
    """``$FAIRMON_SQL_DIR/migrations`` or the repository's ``sql/migrations``."""
    base = os.environ.get(ENV_SQL_DIR)
    if base:
        return Path(base) / "migrations"
    return Path(__file__).resolve().parents[2] / "sql" / "migrations"


def discover(directory: str | Path | None = None) -> list[Migration]:
    """Migration files in version order.

    Examples
    --------
    >>> [m.version for m in discover()][:2]
    [1, 2]
    """
    d = Path(directory) if directory is not None else migrations_dir()
    if not d.is_dir():
        raise StoreError(f"migrations directory not found: {d} (set {ENV_SQL_DIR})")
    found: dict[int, Migration] = {}
    for path in sorted(d.glob("*.sql")):
        m = _FILE_RE.match(path.name)
        if not m:
            raise StoreError(ERR_FILENAME.format(name=path.name))
        version = int(m.group(1))
        if version in found:
            raise StoreError(ERR_DUPLICATE.format(version=version, a=found[version].path.name, b=path.name))
        found[version] = Migration(version, m.group(2), path, path.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


def head_version(directory: str | Path | None = None) -> int:
    """Highest migration version the code ships (0 when there are none)."""
    ms = discover(directory)
    return ms[-1].version if ms else 0


def _has_table(conn: Connection) -> bool:
    return bool(conn.execute(sa.text("SELECT to_regclass('public.schema_migrations') IS NOT NULL")).scalar())


def applied_migrations(engine: Engine) -> list[tuple[int, str, str]]:
    """``(version, name, checksum)`` of every applied migration, in order ([] on an empty database)."""
    with translate_errors(engine), engine.connect() as conn:
        if not _has_table(conn):
            return []
        return _read_applied(conn)


def _read_applied(conn: Connection) -> list[tuple[int, str, str]]:
    rows = conn.execute(sa.text("SELECT version, name, checksum FROM schema_migrations ORDER BY version"))
    return [(int(r["version"]), str(r["name"]), str(r["checksum"])) for r in rows.mappings()]


def current_version(engine: Engine) -> int:
    """Version the database is at (0 = never migrated)."""
    rows = applied_migrations(engine)
    return rows[-1][0] if rows else 0


def _verify(applied: list[tuple[int, str, str]], files: list[Migration], directory: Path) -> None:
    by_version = {m.version: m for m in files}
    for version, name, checksum in applied:
        m = by_version.get(version)
        if m is None:
            if version <= (files[-1].version if files else 0):
                raise StoreError(ERR_MISSING_FILE.format(version=version, name=name, directory=directory))
            continue  # database is ahead of the code: require_head reports it
        if m.checksum != checksum:
            err = StoreError(
                ERR_CHECKSUM.format(version=version, name=name, applied=checksum[:12], found=m.checksum[:12])
            )
            err.retryable = False
            raise err


def upgrade(engine: Engine, *, directory: str | Path | None = None) -> list[int]:
    """Apply every pending migration, each in its own transaction; returns the versions applied.

    A second call is a no-op (returns ``[]``). Concurrent callers serialise on an advisory lock, so
    the loser sees the winner's work and applies nothing.

    Examples
    --------
    >>> from fairmon.store import get_engine, upgrade  # doctest: +SKIP
    >>> upgrade(get_engine("postgresql://postgres@127.0.0.1/fm"))  # doctest: +SKIP
    [1, 2, 3, 4, 5, 6]
    """
    d = Path(directory) if directory is not None else migrations_dir()
    files = discover(d)
    done: list[int] = []
    with translate_errors(engine), engine.connect() as conn:
        conn.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": LOCK_KEY})
        conn.commit()
        try:
            with conn.begin():
                conn.execute(sa.text(_CREATE_TABLE))
            applied = _read_applied(conn)
            conn.commit()
            _verify(applied, files, d)
            have = {v for v, _, _ in applied}
            for m in files:
                if m.version in have:
                    continue
                try:
                    with conn.begin():
                        # raw DBAPI cursor: the file is a multi-statement script without bind parameters
                        cur = conn.connection.cursor()
                        try:
                            cur.execute(m.sql)
                        finally:
                            cur.close()
                        conn.execute(
                            sa.text(
                                "INSERT INTO schema_migrations (version, name, checksum) VALUES (:v, :n, :c)"
                            ),
                            {"v": m.version, "n": m.name, "c": m.checksum},
                        )
                except sa.exc.DBAPIError as exc:
                    raise _failed(m, exc) from exc
                except Exception as exc:
                    if type(exc).__module__.startswith("psycopg2"):
                        raise _failed(m, exc) from exc
                    raise
                done.append(m.version)
        finally:
            try:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
                conn.commit()
            except Exception:  # noqa: BLE001 - the lock dies with the session anyway
                pass
    return done


def _failed(m: Migration, exc: BaseException) -> StoreError:
    orig = getattr(exc, "orig", exc)
    reason = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    err = StoreError(ERR_MIGRATION_FAILED.format(version=m.version, name=m.name, reason=reason))
    err.retryable = False
    return err


def require_head(engine: Engine, *, directory: str | Path | None = None) -> int:
    """Refuse a database whose schema is not exactly at the code's head.

    Raises :class:`~fairmon.errors.SchemaNotAtHeadError` (``database at version X, code expects Y;
    run `fairmon db upgrade```) — fairmon never creates or alters tables implicitly. Also verifies the
    checksums of applied migrations. Returns the version.
    """
    d = Path(directory) if directory is not None else migrations_dir()
    files = discover(d)
    head = files[-1].version if files else 0
    applied = applied_migrations(engine)
    current = applied[-1][0] if applied else 0
    if current != head:
        raise SchemaNotAtHeadError(ERR_NOT_AT_HEAD.format(current=current, head=head))
    _verify(applied, files, d)
    return current
