"""Database administration used by ``fairmon db``: schema status and the read-only analyst role."""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from fairmon.store.engine import describe_url, translate_errors
from fairmon.store.migrations import applied_migrations, discover
from fairmon.store.records import RecordError

__all__ = ["ANALYST_ROLE", "ERR_ROLE_NAME", "grant_readonly", "schema_status"]

#: default read-only role (NOLOGIN; grant it to analysts' login users: ``GRANT fairmon_analyst TO alice``)
ANALYST_ROLE = "fairmon_analyst"
ERR_ROLE_NAME = "invalid role name {name!r}: use lowercase letters, digits and underscores"
_ROLE_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def grant_readonly(engine: Engine, role: str = ANALYST_ROLE) -> None:
    """Create ``role`` if missing and grant it SELECT on every table and view (now and future).

    Idempotent; needs a user allowed to create roles (or an existing role). The same function the
    ``0005_analyst_role`` migration runs.

    Examples
    --------
    >>> grant_readonly(get_engine(), "fairmon_analyst")  # doctest: +SKIP
    """
    if not _ROLE_RE.match(role):
        raise RecordError(ERR_ROLE_NAME.format(name=role))
    with translate_errors(engine), engine.begin() as conn:
        conn.execute(sa.text("SELECT fairmon_grant_readonly(:r)"), {"r": role})


def schema_status(engine: Engine) -> dict[str, Any]:
    """Where the database is: URL (no password), current and head versions, pending migrations."""
    files = discover()
    applied = applied_migrations(engine)
    have = {v for v, _, _ in applied}
    current = applied[-1][0] if applied else 0
    head = files[-1].version if files else 0
    return {
        "database": describe_url(engine.url),
        "current_version": current,
        "head_version": head,
        "at_head": current == head,
        "applied": [{"version": v, "name": n} for v, n, _ in applied],
        "pending": [{"version": m.version, "name": m.name} for m in files if m.version not in have],
    }
