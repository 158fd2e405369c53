"""``fairmon history``: a metric's time series for one monitor, from the store."""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.errors import ConfigError, StoreError
from fairmon.store import Store, get_engine

EPILOG = """examples:
  fairmon history --monitor demo --metric dp_difference --attribute sex --since 90d
  fairmon history --monitor adult --metric selection_rate --attribute sex --group Female --format csv
  fairmon history --monitor compas --metric dp_difference --since 2026-01-01 --json --db postgres://fm@db/fairmon

Columns: window_start, status, attribute, group_key, value, ci_low, ci_high, n, rolling_mean_7 (mean of
the last 7 windows of the series). Same data as the metric_series view (see sql/README.md).
"""

ERR_SINCE = "--since {value!r}: use a date (2026-01-31), a timestamp, or a relative span like 90d / 12w"
ERR_NO_ROWS = "no {metric!r} values for monitor {monitor!r}{filters}; series there: {series}"
ERR_BEFORE_SINCE = "; its latest window starts {latest}, before --since ({since}): widen --since or leave it out"
ERR_NO_MONITOR = "no monitor {monitor!r} in the store; monitors: {known}"
ERR_NO_METRIC = "monitor {monitor!r} has no metric {metric!r}; its metrics: {known}"
#: appended when the asked metric is RUMIE's (an alert names rumie_honest_dscore): it is evidence, not a metric row
HINT_RUMIE = ("; RUMIE's DScore, honest DScore and rules are per-window evidence, not metrics: "
              "psql -f sql/queries/rumie_rule_changes.sql (view rumie_rule_changes), or table evidence")
COLUMNS = (
    "window_start",
    "status",
    "attribute",
    "group_key",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "rolling_mean_7",
)


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "history",
        help="print a metric's time series for a monitor",
        description="Print one metric of one monitor over time (value, CI, 7-window rolling mean) from "
        "the fairmon store, as a table, CSV or JSON.",
        epilog=EPILOG,
    )
    p.add_argument("--monitor", required=True, help="monitor name (identity.name of its spec)")
    p.add_argument("--metric", required=True, help="metric name, e.g. dp_difference, selection_rate")
    p.add_argument("--attribute", help="protected attribute, e.g. sex (default: all)")
    p.add_argument("--group", help="group value, e.g. Female; '' for attribute-level metrics (default: all)")
    p.add_argument("--since", help="start: a date/timestamp (UTC) or a span back from now, e.g. 90d, 12w")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--json", action="store_true", help="same as --format json")
    add_db_argument(p)
    p.set_defaults(func=run)


def parse_since(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """``90d`` / ``12w`` / ``36h`` back from now, or an ISO date/timestamp (naive = UTC)."""
    if value is None:
        return None

    m = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", value)
    if m:
        unit = {"h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        return (now or datetime.now(UTC)) - timedelta(**{unit: int(m.group(1))})
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ConfigError(ERR_SINCE.format(value=value)) from None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4f}"
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M") if (v.hour or v.minute) else v.strftime("%Y-%m-%d")
    return str(v)


def _explain_empty(store: Any, monitor: str, metric: str) -> None:
    """An empty answer because the monitor or the metric does not exist says so (and lists what does)."""
    err = None
    if monitor not in store.monitors():
        err = StoreError(ERR_NO_MONITOR.format(monitor=monitor, known=", ".join(store.monitors()) or "none"))
    else:
        metrics = sorted({m for m, _, _ in store.series(monitor)})
        if metric not in metrics:
            err = StoreError(ERR_NO_METRIC.format(monitor=monitor, metric=metric, known=", ".join(metrics) or "none")
                             + (HINT_RUMIE if metric.startswith("rumie") or "dscore" in metric else ""))
    if err is not None:
        err.retryable = False
        raise err


def _when(t: datetime) -> str:
    """A date, or a timestamp when it is not midnight (``--since 90d`` counts from now)."""
    return t.date().isoformat() if (t.hour, t.minute, t.second) == (0, 0, 0) else t.isoformat(timespec="minutes")


def run(args: argparse.Namespace) -> int:
    fmt = "json" if args.json else args.format
    since = parse_since(args.since)
    store = Store(get_engine(args.db))
    rows = store.history(args.monitor, args.metric, attribute=args.attribute, group=args.group, since=since)
    if not rows:
        _explain_empty(store, args.monitor, args.metric)
        series = store.series(args.monitor, args.metric)
        filters = "".join(
            f", {k}={v!r}"
            for k, v in (("attribute", args.attribute), ("group", args.group), ("since", args.since))
            if v is not None
        )
        shown = ", ".join(f"{a or '-'}/{g or '-'}" for _, a, g in series) or "none"
        message = ERR_NO_ROWS.format(metric=args.metric, monitor=args.monitor, filters=filters, series=shown)
        if since is not None:  # the series exists but ends before --since: say so (a demo's windows are in 2026-01)
            older = store.history(args.monitor, args.metric, attribute=args.attribute, group=args.group)
            latest = max((r["window_start"] for r in older), default=None)
            if latest is not None and latest < since:
                message += ERR_BEFORE_SINCE.format(latest=_when(latest), since=_when(since))
        err = StoreError(message)
        err.retryable = False
        raise err
    out = sys.stdout
    if fmt == "json":
        json.dump(
            [{c: (r[c].isoformat() if isinstance(r[c], datetime) else r[c]) for c in COLUMNS} for r in rows],
            out,
            indent=1,
        )
        out.write("\n")
    elif fmt == "csv":
        w = csv.writer(out)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow(
                [
                    r[c].isoformat() if isinstance(r[c], datetime) else ("" if r[c] is None else r[c])
                    for c in COLUMNS
                ]
            )
    else:
        table = [[_fmt(r[c]) for c in COLUMNS] for r in rows]
        widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(COLUMNS)]
        out.write(f"{args.monitor} · {args.metric}\n")
        out.write("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)).rstrip() + "\n")
        for row in table:
            out.write("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
    return 0
