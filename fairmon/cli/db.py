"""``fairmon db``: apply migrations, show the schema status, grant the read-only analyst role."""

from __future__ import annotations

import argparse
import json

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.store.admin import grant_readonly, schema_status
from fairmon.store.engine import describe_url, get_engine
from fairmon.store.migrations import current_version, require_head, upgrade

EPILOG = """examples:
  fairmon db upgrade                              migrate the embedded database (no URL configured)
  fairmon db upgrade --db postgresql://fm@db:5432/fairmon
  FAIRMON_DATABASE_URL=postgres://fm@db/fairmon fairmon db status --json
  fairmon db grant-readonly --role fairmon_analyst  then: GRANT fairmon_analyst TO alice;

The database is --db, else FAIRMON_DATABASE_URL, else the embedded PostgreSQL under
$FAIRMON_HOME/pgdata (default ~/.fairmon/pgdata). fairmon never creates tables implicitly: every
other command refuses a database that is not at the migration head.
"""


def _add_db(p: argparse.ArgumentParser) -> None:
    add_db_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "db",
        help="database migrations and roles",
        description="Manage the fairmon database: versioned SQL migrations (sql/migrations) and the "
        "read-only analyst role.",
        epilog=EPILOG,
    )
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION")
    up = add_command(
        dsub,
        "upgrade",
        help="apply pending migrations (idempotent)",
        description="Apply every pending migration in order, each in its own transaction.",
        epilog=EPILOG,
    )
    _add_db(up)
    up.set_defaults(func=run_upgrade)
    st = add_command(
        dsub,
        "status",
        help="show current vs head version (exit 1 when not at head)",
        description="Show the database's migration version, the code's head and pending migrations. "
        "Exits 1 when the database is not at head (for deployment checks).",
        epilog=EPILOG,
    )
    _add_db(st)
    st.set_defaults(func=run_status)
    gr = add_command(
        dsub,
        "grant-readonly",
        help="create/grant the read-only analyst role",
        description="Create the role if missing (NOLOGIN) and grant it SELECT on every table and view, "
        "including tables added by later migrations. Idempotent. Grant the role to login users.",
        epilog=EPILOG,
    )
    _add_db(gr)
    gr.add_argument("--role", default="fairmon_analyst", help="role name (default: fairmon_analyst)")
    gr.set_defaults(func=run_grant)
    p.set_defaults(func=lambda args: _help(p))


def run_upgrade(args: argparse.Namespace) -> int:
    engine = get_engine(args.db)
    applied = upgrade(engine)
    version = current_version(engine)
    where = describe_url(engine.url)
    if args.json:
        print(json.dumps({"database": where, "applied": applied, "version": version}))
    elif applied:
        print(
            f"{where}: applied migrations {', '.join(f'{v:04d}' for v in applied)}; now at version {version}"
        )
    else:
        print(f"{where}: already at version {version} (nothing to apply)")
    return 0


def run_status(args: argparse.Namespace) -> int:
    status = schema_status(get_engine(args.db))
    if args.json:
        print(json.dumps(status))
    else:
        state = "at head" if status["at_head"] else "NOT at head: run `fairmon db upgrade`"
        print(
            f"{status['database']}: version {status['current_version']}, code head {status['head_version']} ({state})"
        )
        for m in status["pending"]:
            print(f"  pending {m['version']:04d} {m['name']}")
    return 0 if status["at_head"] else 1


def run_grant(args: argparse.Namespace) -> int:
    engine = get_engine(args.db)
    require_head(engine)
    grant_readonly(engine, args.role)
    where = describe_url(engine.url)
    if args.json:
        print(json.dumps({"database": where, "role": args.role, "granted": "SELECT"}))
    else:
        print(f"{where}: role {args.role} can read every fairmon table and view (SELECT only)")
    return 0


def _help(parser: argparse.ArgumentParser) -> int:
    """Without a subcommand: the group's help, exit status 2."""
    parser.print_help()
    return 2
