"""False alarms of the drift decision with many small groups (stationary windows; issue 18).

A max − min over many noisy group rates is biased upward, so a percentile interval of a disparity can
lie wholly outside the allowed range by noise alone ("whole interval above the allowed maximum").
This scenario measures how often the drift policy at the **default settings of the spec**
(:func:`fairmon.drift.settings_from_spec`, as in ``run.py``) notifies on windows in which nothing
changes: every window draws ``--rows`` rows with the same 12 ``region`` groups (1.2 %–30 % of the
rows; the smallest about 60 rows at 5,000 rows) and ``sex``, with *identical* true rates in every
group (selection rate 0.40, TPR 0.70, FPR 0.15, base rate 0.5), so every disparity is 0 and
``dp_ratio`` is 1 in every window. Outcome metrics with labels, both attributes and their
intersection (24 groups, the smallest about 30 rows) → :class:`fairmon.drift.WindowSummary` → the
policy (:func:`fairmon.drift.replay`). No RUMIE evidence (nothing to mine in exchangeable groups).
Both disparity interval methods are run on the same windows: ``simultaneous`` (the default) and the
old ``percentile``. A window is a false alarm when it notifies a finding that is not a resolution.
Goal: ≤ 1 % of windows.

Usage::

    python benchmarks/alert_quality/small_groups.py            # the committed run (200 windows)
    python benchmarks/alert_quality/small_groups.py --smoke    # seconds, for CI
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _meta import write_results  # noqa: E402

MONITOR = "alert-quality-small-groups"
REGION_SHARES = (0.30, 0.16, 0.12, 0.09, 0.07, 0.06, 0.05, 0.04, 0.035, 0.03, 0.023, 0.012)


def _window(rng: np.random.Generator, n_rows: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    sizes = np.floor(np.asarray(REGION_SHARES) / sum(REGION_SHARES) * n_rows).astype(int)
    sizes[0] += n_rows - sizes.sum()
    region = np.repeat([f"r{i:02d}" for i in range(len(sizes))], sizes).astype(object)
    sex = np.where(rng.random(n_rows) < 0.5, "F", "M").astype(object)
    y = rng.random(n_rows) < 0.5
    pred = np.where(y, rng.random(n_rows) < 0.70, rng.random(n_rows) < 0.15)
    return pred.astype(float), y.astype(float), {"sex": sex, "region": region}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from fairmon.drift import WindowSummary, replay, settings_from_spec
    from fairmon.fairness.outcome import outcome_metrics

    settings = settings_from_spec()
    rng = np.random.default_rng(args.seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    summaries: dict[str, list[Any]] = {"simultaneous": [], "percentile": []}
    t0 = time.perf_counter()
    for w in range(args.windows):
        pred, y, sens = _window(rng, args.rows)
        for method, out in summaries.items():
            res = outcome_metrics(pred, sensitive_features=sens, y_true=y, n_bootstrap=args.bootstrap,
                                  disparity_ci=method, random_state=w)  # type: ignore[arg-type]
            out.append(WindowSummary.build(MONITOR, start + timedelta(days=w), start + timedelta(days=w + 1),
                                           outcome=res, model_version="m1"))
    result: dict[str, Any] = {"seconds": time.perf_counter() - t0}
    for method, summ in summaries.items():
        decisions = replay(summ, **settings.kwargs())
        alarms, kinds = 0, Counter()
        for fs in decisions:
            alerts = [f for f in fs if f.notify and f.status != "resolved"]
            alarms += bool(alerts)
            kinds.update(f"{f.kind}:{f.key}" for f in alerts)
        result[method] = {"false_alarm_windows": alarms, "rate": alarms / max(1, len(summ)),
                          "kinds": dict(kinds.most_common(8))}
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny run for CI (seconds); targets not asserted")
    p.add_argument("--windows", type=int, default=200)
    p.add_argument("--rows", type=int, default=5000)
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE / "results")
    args = p.parse_args(argv)
    if args.smoke:
        args.windows, args.bootstrap = 8, 100
    res = run(args)
    rows = [
        {"disparity_ci": method, "windows": args.windows, "false_alarm_windows": res[method]["false_alarm_windows"],
         "false_alarm_rate": res[method]["rate"], "target": "<= 0.01", "met": res[method]["rate"] <= 0.01,
         "alert_kinds": json.dumps(res[method]["kinds"])}
        for method in ("simultaneous", "percentile")
    ]
    name = "alert_quality_small_groups_smoke" if args.smoke else "alert_quality_small_groups"
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    settings["region_shares"] = list(REGION_SHARES)
    notes = (f"Stationary windows, every true disparity 0 (dp_ratio 1). Runtime {res['seconds']:.0f} s on a "
             f"machine shared with other jobs.")
    write_results(args.out, name, rows, settings=settings, notes=notes)
    for r in rows:
        print(f"{r['disparity_ci']}: false-alarm rate {r['false_alarm_rate']:.4f} "
              f"({r['false_alarm_windows']} of {r['windows']}) {r['alert_kinds']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
