"""``fairmon run``: one monitoring window, the same steps the Airflow DAG runs."""

from __future__ import annotations

import argparse
import json

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.pipeline import run_window

EPILOG = """examples:
  fairmon run --monitor monitors/demo.yaml --logical-date 2026-01-03
  fairmon run --monitor monitors/adult.yaml --logical-date 2026-01-03 --db postgresql://fairmon@db/fairmon
  fairmon run --monitor monitors/demo.yaml --logical-date 2026-01-03 --no-notify --json

The window is the schedule interval that starts at the latest cron tick at or before the logical date,
in the schedule's timezone (for a daily cron at midnight UTC, 2026-01-03 means [2026-01-03, 2026-01-04);
for adult's 03:00 New York cron it means [2026-01-02T08:00Z, 2026-01-03T08:00Z)). Exit status: 0 succeeded, 1 failed, 3 data_invalid.
A monitor name belongs to the spec file that first ran it; another file with the same identity.name
is refused (exit 1, both files named) unless --take-over-monitor says the move is intended.
"""

EXIT_CODES = {"succeeded": 0, "labels_pending": 0, "failed": 1, "data_invalid": 3}


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "run",
        help="run one monitoring window without Airflow",
        description="Run every pipeline step of one window of a monitor (pull snapshot and data, validate, "
        "predict, outcome metrics, RUMIE, GESD/OpenXAI, persist, drift, diagnose (why disfavored, model or data), "
        "report, alert, FEU on drift).",
        epilog=EPILOG,
    )
    p.add_argument("--monitor", required=True, metavar="SPEC", help="monitor spec YAML file")
    p.add_argument("--logical-date", required=True, metavar="DATE", help="ISO date/datetime of the window")
    add_db_argument(p)
    p.add_argument("--no-notify", action="store_true",
                   help="store the findings but queue and send no alert (as a backfill without --notify)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--take-over-monitor", action="store_true",
        help="let this spec file take the monitor name over from the file that owns it (a second file with "
        "the same identity.name is refused otherwise)",
    )
    p.set_defaults(func=run)


def _num(v: object) -> str:
    return "n/a" if not isinstance(v, int | float) else f"{v:.3f}"


def print_outcome(o: object, *, as_json: bool) -> None:
    d = o.to_dict()  # type: ignore[attr-defined]
    if as_json:
        print(json.dumps(d, default=str))
        return
    w = d["window"]
    print(f"{d['monitor']} [{w['start']} .. {w['end']}): {d['status']} in {d['seconds']:.1f}s")
    if d.get("error"):
        print(f"  error: {d['error']}")
    changed = d["steps"].get("resolve_window", {}).get("spec_changed")
    if changed:
        print(f"  {changed}")
    for step, res in d["steps"].items():
        shown = {k: v for k, v in res.items() if k not in ("seconds", "monitor", "start", "end", "front",
                                                           "recommendation")}
        text = json.dumps(shown, default=str)
        print(f"  {step:<15} {res.get('seconds', 0):>7.2f}s  {text if len(text) <= 100 else text[:99] + '…'}")
    feu = d["steps"].get("feu", {})
    if feu.get("status") == "done":  # what a reader acts on: the verdict and the front, not step timings
        print(f"FEU: {feu.get('recommendation') or 'no verdict recorded'}")
        for i, c in enumerate(feu.get("front") or []):
            mark = "  <- recommended" + (f" [{c['registry_version']}]" if c.get("registry_version") else "") \
                if c.get("selected") else ("  (outside the constraints)" if c.get("feasible") is False else "")
            print(f"  #{i + 1}: AUC {_num(c.get('auc'))}, bal. acc. {_num(c.get('balanced_accuracy'))}, positive rate "
                  f"{_num(c.get('selection_rate'))}, DP {_num(c.get('dp'))}, GESD {_num(c.get('gesd'))} (test){mark}")


def run(args: argparse.Namespace) -> int:
    o = run_window(args.monitor, args.logical_date, db_url=args.db, notify=not args.no_notify,
                   take_over_monitor=args.take_over_monitor)
    print_outcome(o, as_json=args.json)
    return EXIT_CODES.get(o.status, 1)
