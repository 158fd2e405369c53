"""The argparse pieces every ``fairmon`` command repeats: the sub-command factory and ``--db``."""

from __future__ import annotations

import argparse
from typing import TypeAlias

__all__ = ["SubParsers", "add_command", "add_db_argument", "DB_HELP"]

#: what ``build_parser`` hands each command module's ``register``
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

DB_HELP = "database URL (default: FAIRMON_DATABASE_URL, else embedded Postgres)"


def add_command(sub: SubParsers, name: str, *, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A sub-command whose epilog (its examples) keeps its layout in ``--help``.

    Examples
    --------
    >>> sub = argparse.ArgumentParser(prog="fairmon").add_subparsers()
    >>> add_command(sub, "x", help="do x", description="Do x.", epilog="examples:\\n  fairmon x").prog
    'fairmon x'
    """
    return sub.add_parser(
        name, help=help, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """``--db URL``: the store a command reads or writes."""
    parser.add_argument("--db", metavar="URL", help=DB_HELP)
