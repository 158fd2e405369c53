"""``fairmon version``: print the installed version."""

from __future__ import annotations

import argparse
import json

from fairmon import __version__
from fairmon.cli._args import SubParsers, add_command


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "version",
        help="print the fairmon version",
        description="Print the installed fairmon version.",
        epilog="examples:\n  fairmon version\n  fairmon version --json",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(json.dumps({"version": __version__}) if args.json else f"fairmon {__version__}")
    return 0
