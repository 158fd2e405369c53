"""``fairmon alerts``: look after the Slack outbox — re-queue alerts that ended ``failed``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.store import Store, get_engine, require_head

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.store import Store

EPILOG = """examples:
  fairmon alerts retry --monitor demo                 re-queue demo's failed alerts
  fairmon alerts retry --monitor adult --json --db postgresql://fm@db:5432/fairmon

An alert ends 'failed' when Slack refused the message itself (invalid blocks, too long, ...); a bad
token or channel leaves alerts pending, not failed. Re-queued alerts go out with the monitor's next
run (fairmon run, the DAG), once each: the outbox still deduplicates by fingerprint and checks
Slack's history before re-posting.
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "alerts",
        help="manage the Slack alert outbox",
        description="Manage the alert outbox in the fairmon store: re-queue failed alerts so the "
        "monitor's next run delivers them.",
        epilog=EPILOG,
    )
    asub = p.add_subparsers(dest="alerts_command", metavar="ACTION")
    rt = add_command(
        asub,
        "retry",
        help="re-queue a monitor's failed alerts for its next run",
        description="Put every failed alert of the monitor back to pending (its last error kept).",
        epilog=EPILOG,
    )
    rt.add_argument("--monitor", required=True, help="monitor name (identity.name of its spec)")
    add_db_argument(rt)
    rt.add_argument("--json", action="store_true", help="machine-readable output")
    rt.set_defaults(func=run_retry)
    p.set_defaults(func=lambda args: _help(p))


def requeue_failed(store: Store, monitor: str) -> list[str]:
    """Move the monitor's ``failed`` alerts back to ``pending``; returns their fingerprints."""
    return [
        rec.fingerprint
        for rec in store.alerts(monitor)
        if rec.state == "failed" and store.outbox_transition(rec.fingerprint, "failed", "pending")
    ]


def run_retry(args: argparse.Namespace) -> int:
    engine = get_engine(args.db)
    require_head(engine)
    try:
        fps = requeue_failed(Store(engine), args.monitor)
    finally:
        engine.dispose()
    if args.json:
        print(json.dumps({"monitor": args.monitor, "requeued": fps}))
    else:
        print(f"{args.monitor}: {len(fps)} failed alert(s) re-queued; the monitor's next run sends them")
    return 0


def _help(parser: argparse.ArgumentParser) -> int:
    """Without a subcommand: the group's help, exit status 2."""
    parser.print_help()
    return 2
