"""The ``fairmon`` command line.

Each subcommand lives in its own module under ``fairmon.cli`` and exposes ``register(subparsers)``;
:data:`COMMAND_MODULES` lists them in the order ``--help`` shows them. Heavy imports happen inside the
command functions so ``fairmon --help`` stays fast. A :class:`~fairmon.errors.FairmonError` prints one
line and exits 2 (``--debug`` shows the traceback); any other exception is a bug and exits 1 with a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from fairmon._logs import NOISY_LOGGERS, QuietThirdParty, quiet_third_party  # noqa: F401 - re-exported (tests, callers)
from fairmon.errors import FairmonError

__all__ = ["main", "build_parser", "COMMAND_MODULES"]

#: subcommand modules, in help order; each defines ``register(subparsers)``
COMMAND_MODULES: tuple[str, ...] = ("demo", "run", "backfill", "feu", "report", "version", "db", "history", "audit", "alerts", "spec", "model", "init")

EPILOG = """examples:
  fairmon demo                         run the demo monitoring cycle (embedded Postgres)
  fairmon db upgrade --db URL          apply the SQL migrations to a database
  fairmon feu --monitor monitors/demo.yaml --window 2026-01-03   FEU retraining candidates on demand
  fairmon report --monitor demo --output demo-output/reports   rebuild the demo's HTML run reports
  fairmon version
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairmon",
        description="Production fairness monitoring: outcome fairness, RUMIE evidence, explanation "
        "fairness (GESD, OpenXAI) and FEU retraining candidates, stored in Postgres.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"fairmon.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not args.debug:  # third-party INFO chatter (~180 GX lines per window) buries fairmon's own lines
        quiet_third_party()
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except FairmonError as exc:
        if args.debug:
            raise
        print(f"fairmon: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fairmon: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
