"""``fairmon report``: rebuild run reports (static HTML) from the store."""

from __future__ import annotations

import argparse
import json
import posixpath
import sys
from pathlib import Path

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.config import load_spec
from fairmon.report.write import rebuild_reports, report_location
from fairmon.store import Store, get_engine, require_head

EPILOG = """examples:
  fairmon report --monitor demo --output demo-output/reports        every window of the demo
  fairmon report --monitor demo --window 2026-01-07 --output demo-output/reports
  fairmon report --monitor adult --spec monitors/adult.yaml --db postgresql://fm@db/fairmon --json

Reports are written at <output>/<monitor>/<YYYY-MM-DD>.html, the path the Slack alerts link to
(alerts.report_base_url + the same path), plus <output>/<monitor>/index.html. Default output:
FAIRMON_REPORT_LOCATION, else the 'reports' folder next to the spec's artifact_location (--spec),
else ~/.fairmon/reports (beside the default artifact_location; FAIRMON_HOME moves only the
embedded database).
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "report",
        help="rebuild the HTML run reports of a monitor from the store",
        description="Render the static HTML report of one or more windows of a monitor (summary, drift "
        "findings, outcome metrics with CIs, the RUMIE tree and rules, GESD, OpenXAI, trends, FEU "
        "candidates) from what the store holds, and write it where the alerts link to.",
        epilog=EPILOG,
    )
    p.add_argument("--monitor", required=True, help="monitor name (identity.name of its spec)")
    p.add_argument(
        "--window", action="append", metavar="DATE", dest="windows",
        help="window start, e.g. 2026-01-07 (repeatable; default: every window of the monitor)",
    )
    p.add_argument("--output", metavar="DIR", help="report folder or fsspec URI (see below for the default)")
    p.add_argument("--spec", metavar="PATH", help="monitor spec: default output next to its artifact_location")
    add_db_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable list of the written reports")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec = None
    if args.spec:
        spec = load_spec(args.spec)
    location = args.output or report_location(spec)
    engine = get_engine(args.db)
    try:
        require_head(engine)
        store = Store(engine)
        written = rebuild_reports(
            store, args.monitor, args.windows, location=location,
            rumie_method=spec.rumie.method if spec is not None else None,
            allowed_ranges=spec.drift.allowed_ranges if spec is not None else None,
            spec_path=str(Path(args.spec).resolve()) if args.spec else None,
        )
    finally:
        engine.dispose()
    index = posixpath.dirname(written[0].path) + "/index.html" if written else None
    if args.json:
        json.dump({"reports": [w.to_dict() for w in written], "index": index}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for w in written:
        print(f"{w.window_start:%Y-%m-%d}  {w.status:<12} {w.path}  ({w.bytes / 1024:.0f} KB)")
    print(f"{len(written)} report(s); index {index}")
    return 0
