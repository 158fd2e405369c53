"""``fairmon feu``: FEU retraining candidates for one window on demand, with or without drift."""

from __future__ import annotations

import argparse

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.cli.run import print_outcome
from fairmon.pipeline import feu_on_demand

EPILOG = """examples:
  fairmon feu --monitor monitors/demo.yaml --window 2026-01-03
  fairmon feu --monitor monitors/adult.yaml --window 2026-01-03 --db postgresql://fairmon@db/fairmon
  fairmon feu --monitor monitors/demo.yaml --window 2026-01-03 --no-notify --json

The window is the one `fairmon run --logical-date DATE` computes. The candidates are stored under the
window's run (the recommended one is saved in the model registry as a candidate, never deployed) and
posted once: in the thread of the window's drift alert, or as a message of their own when the window
has none. If the window's stored run or its artifacts are gone, the window is recomputed first.
Needs retraining.enabled: true; works with retraining.trigger manual or on_drift. In Airflow, trigger
the monitor's DAG with conf {"feu": true} instead. Exit status: 0 candidates stored, 1 failed,
2 configuration error (e.g. retraining disabled), 3 the recomputed window's data was invalid.
"""

#: exit status of a window that had to be recomputed and did not complete (as `fairmon run`)
EXIT_CODES = {"failed": 1, "data_invalid": 3}


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "feu",
        help="propose FEU retraining candidates for one window on demand",
        description="Run FEU (NSGA-II retraining candidates trading utility (balanced accuracy by default; AUC in paper mode) against DP and GESD) for one window "
        "of a monitor, whether or not its discrimination drifted, store the candidates and post them to "
        "Slack like the scheduled path does after a drift alert.",
        epilog=EPILOG,
    )
    p.add_argument("--monitor", required=True, metavar="SPEC", help="monitor spec YAML file")
    p.add_argument("--window", "--logical-date", required=True, dest="window", metavar="DATE",
                   help="the window's logical date (ISO date/datetime, as fairmon run --logical-date)")
    add_db_argument(p)
    p.add_argument("--no-notify", action="store_true", help="store the candidates but post nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def outcome_code(o: object) -> int:
    """Exit status: the window's failure first, else whether FEU stored candidates."""
    d = o.to_dict()  # type: ignore[attr-defined]
    if d["status"] in EXIT_CODES:
        return EXIT_CODES[d["status"]]
    return 0 if d["steps"].get("feu", {}).get("status") == "done" else 1


def run(args: argparse.Namespace) -> int:
    o = feu_on_demand(args.monitor, args.window, db_url=args.db, notify=not args.no_notify)
    print_outcome(o, as_json=args.json)
    return outcome_code(o)
