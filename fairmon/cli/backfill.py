"""``fairmon backfill``: many windows in order; findings are stored, alerts queued and sent only with
--notify (or the spec's ``alerts.notify_backfill: true``)."""

from __future__ import annotations

import argparse
import json

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.pipeline import backfill

EPILOG = """examples:
  fairmon backfill --monitor monitors/demo.yaml --start 2026-01-01 --end 2026-01-10
  fairmon backfill --monitor monitors/demo.yaml --start 2026-01-01 --end 2026-01-10 --notify --json
  fairmon backfill --monitor monitors/compas.yaml --start 2024-01-01 --end 2024-12-31 --status labels_pending

Windows run oldest first, each with the history of the windows before it. A failed or invalid window
does not stop the backfill.

Alerts: each window's runs, results and findings are stored (fairmon history, the findings table);
no alert is queued in the outbox (the alerts table) and nothing is posted to Slack, so a later live
run does not post these windows' alerts either. With --notify, or alerts.notify_backfill: true in
the spec, every window is treated like a live run: its alerts are queued in the outbox and posted
when FAIRMON_SLACK_TOKEN is set (without a token they stay pending for the monitor's next run).

--status re-runs only the windows stored with that status: e.g. labels_pending once the labels have
arrived (the label-based metrics are then computed), or failed.
Exit status: 0 when every window completed, 1 otherwise.
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "backfill",
        help="run the windows between two dates in order",
        description="Run the monitor for every scheduled window whose logical date lies in [START, END], "
        "oldest first. Findings are stored; alerts are queued in the outbox and sent only with --notify "
        "(or alerts.notify_backfill: true in the spec).",
        epilog=EPILOG,
    )
    p.add_argument("--monitor", required=True, metavar="SPEC", help="monitor spec YAML file")
    p.add_argument("--start", required=True, metavar="D1", help="first logical date (inclusive)")
    p.add_argument("--end", required=True, metavar="D2", help="last logical date (inclusive)")
    p.add_argument("--notify", action="store_true", default=None,
                   help="queue and send the windows' alerts (default: alerts.notify_backfill, false: "
                        "findings stored, no alert queued)")
    p.add_argument(
        "--status", action="append", metavar="STATUS",
        help="only the windows stored with this run status (repeatable), e.g. labels_pending or failed",
    )
    add_db_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document)")
    p.add_argument(
        "--take-over-monitor", action="store_true",
        help="let this spec file take the monitor name over from the file that owns it",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    def show(o: object) -> None:
        if not args.json:
            d = o.to_dict()  # type: ignore[attr-defined]
            err = f"  ({d['error']})" if d.get("error") else ""
            print(f"{d['window']['start']}  {d['status']:<14} {d['seconds']:7.1f}s{err}", flush=True)
            changed = d["steps"].get("resolve_window", {}).get("spec_changed")
            if changed:
                print(f"  {changed}", flush=True)

    outcomes = backfill(
        args.monitor, args.start, args.end, db_url=args.db, notify=args.notify, on_window=show, only_statuses=args.status,
        take_over_monitor=args.take_over_monitor
    )
    if args.json:
        print(json.dumps([o.to_dict() for o in outcomes], default=str))
    ok = all(o.status in ("succeeded", "labels_pending") for o in outcomes)
    return 0 if ok else 1
