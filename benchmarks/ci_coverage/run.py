"""Coverage of the outcome-metric confidence intervals in synthetic windows with a known truth.

Every window draws ``--rows`` rows whose groups have fixed sizes (the bootstrap is stratified by
group, as a production window's group sizes are not what is uncertain); within group ``g`` the label
is ``y ~ Bernoulli(base_g)`` and the favorable decision ``pred | y=1 ~ Bernoulli(tpr_g)``,
``pred | y=0 ~ Bernoulli(fpr_g)``. The true selection rate of a group is
``base·tpr + (1 − base)·fpr`` weighted over its cells, so every disparity's truth is known exactly.
A window *covers* when ``ci_low <= truth <= ci_high``; a window whose metric is undefined (a group without
positive labels has no TPR) is counted in ``undefined_windows``, not as a miss. Reported per scenario, grouping and metric:
the coverage over ``--windows`` windows with its binomial 95 % interval (Wilson), the mean interval
width and the mean share of skipped (undefined) replicates. Both interval methods of
:func:`fairmon.fairness.outcome.outcome_metrics` are measured (``disparity_ci="simultaneous"``, the
default, and the old ``"percentile"`` for comparison). Target: every simultaneous coverage ≥ 0.93.

Usage::

    python benchmarks/ci_coverage/run.py            # the committed run: 1,000 windows x 2,000 rows x 1,000 replicates (~8 min)
    python benchmarks/ci_coverage/run.py --smoke    # seconds, for CI (targets not asserted)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _meta import write_results  # noqa: E402

METRICS = ("dp_difference", "dp_ratio", "eop_difference", "eodds_difference")


@dataclass(frozen=True)
class Cell:
    """One group (cell of the attributes) of a scenario: values per attribute, share of rows, rates."""

    values: tuple[str, ...]
    share: float
    base: float
    tpr: float
    fpr: float


@dataclass(frozen=True)
class Scenario:
    name: str
    attributes: tuple[str, ...]
    cells: tuple[Cell, ...]


def _two(dp: float) -> tuple[Cell, ...]:
    # selection rate = 0.5*tpr + 0.5*fpr; tpr and fpr both differ by dp -> DP = EOP = EODDS = dp
    return (Cell(("a",), 0.6, 0.5, 0.70 + dp, 0.20 + dp), Cell(("b",), 0.4, 0.5, 0.70, 0.20))


def _five(dp: float) -> tuple[Cell, ...]:
    shares = (0.04, 0.08, 0.13, 0.15, 0.60)
    shifts = (0.0, dp, dp / 2, dp / 4, 3 * dp / 4)  # max - min shift = dp, the smallest groups at the extremes
    return tuple(
        Cell((f"g{i}",), s, 0.5, 0.60 + d, 0.20 + d) for i, (s, d) in enumerate(zip(shares, shifts, strict=True))
    )


def _eight() -> tuple[Cell, ...]:
    """3 binary attributes, 8 intersections of 2 %-30 % of the rows, intersectional DP 0.12."""
    shares = (0.30, 0.20, 0.15, 0.12, 0.10, 0.07, 0.04, 0.02)
    shifts = (0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.05)
    cells = []
    for k, (s, d) in enumerate(zip(shares, shifts, strict=True)):
        values = tuple(f"{name}{(k >> bit) & 1}" for bit, name in enumerate("xyz"))
        cells.append(Cell(values, s, 0.45 + 0.05 * (k % 2), 0.60 + d, 0.20 + d))
    return tuple(cells)


def _rare() -> tuple[Cell, ...]:
    """A 30-row group (1.5 % of 2,000) at a 3.8 % selection rate, as the other's: disparity 0. About a third
    of its windows have no favourable decision (rate 0), the case session 23 found under-covered (0.59),
    and about 3 positive labels (its TPR is undefined in some windows and replicates)."""
    return (Cell(("a",), 0.985, 0.1, 0.2, 0.02), Cell(("b",), 0.015, 0.1, 0.2, 0.02))


SCENARIOS = (
    Scenario("2 groups, DP 0.10", ("g",), _two(0.10)),
    Scenario("5 groups 4%-60%, DP 0.10", ("g",), _five(0.10)),
    Scenario("2 groups, disparity 0", ("g",), _two(0.0)),
    Scenario("5 groups 4%-60%, disparity 0", ("g",), _five(0.0)),
    Scenario("8 intersectional groups 2%-30%", ("x", "y", "z"), _eight()),
    Scenario("30-row group, rates 3.8%, disparity 0", ("g",), _rare()),
)


def _sizes(scn: Scenario, n_rows: int) -> list[int]:
    sizes = [int(round(c.share * n_rows)) for c in scn.cells]
    sizes[int(np.argmax(sizes))] += n_rows - sum(sizes)
    return sizes


def _truths(scn: Scenario, sizes: list[int]) -> dict[str, dict[str, float]]:
    """Exact disparities of every grouping (each attribute and, with several, their intersection)."""
    groupings: list[tuple[str, tuple[int, ...]]] = [(a, (i,)) for i, a in enumerate(scn.attributes)]
    if len(scn.attributes) > 1:
        groupings.append(("&".join(scn.attributes), tuple(range(len(scn.attributes)))))
    out: dict[str, dict[str, float]] = {}
    for key, idx in groupings:
        acc: dict[tuple[str, ...], list[float]] = {}
        for c, n in zip(scn.cells, sizes, strict=True):
            a = acc.setdefault(tuple(c.values[i] for i in idx), [0.0] * 6)  # favorable, n, tp, pos, fp, neg
            pos, neg = n * c.base, n * (1 - c.base)
            for i, v in enumerate((pos * c.tpr + neg * c.fpr, n, pos * c.tpr, pos, neg * c.fpr, neg)):
                a[i] += v
        sr = [a[0] / a[1] for a in acc.values()]
        tpr = [a[2] / a[3] for a in acc.values()]
        fpr = [a[4] / a[5] for a in acc.values()]
        out[key] = {
            "dp_difference": max(sr) - min(sr), "dp_ratio": min(sr) / max(sr),
            "eop_difference": max(tpr) - min(tpr),
            "eodds_difference": max(max(tpr) - min(tpr), max(fpr) - min(fpr)),
        }
    return out


def _window(scn: Scenario, sizes: list[int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    preds, labels = [], []
    cols: dict[str, list[str]] = {a: [] for a in scn.attributes}
    for c, n in zip(scn.cells, sizes, strict=True):
        y = rng.random(n) < c.base
        p = np.where(y, rng.random(n) < c.tpr, rng.random(n) < c.fpr)
        preds.append(p)
        labels.append(y)
        for a, v in zip(scn.attributes, c.values, strict=True):
            cols[a].extend([v] * n)
    return (np.concatenate(preds).astype(float), np.concatenate(labels).astype(float),
            {a: np.asarray(v, dtype=object) for a, v in cols.items()})


def _wilson(k: int, n: int) -> tuple[float, float]:
    """The coverage's own 95% interval: fairmon's Wilson interval (the one its per-group rates use)."""
    from fairmon.fairness._outcome_ci import wilson_ci

    return wilson_ci(k, n, 0.95)


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from fairmon.fairness.outcome import outcome_metrics

    rows: list[dict[str, Any]] = []
    for s_idx, scn in enumerate(SCENARIOS):
        if args.scenarios and s_idx not in args.scenarios:
            continue
        sizes = _sizes(scn, args.rows)
        truth = _truths(scn, sizes)
        inter = [tuple(scn.attributes)] if len(scn.attributes) > 1 else False
        stats: dict[tuple[str, str, str], list[float]] = {}
        t0 = time.perf_counter()
        rng = np.random.default_rng(args.seed + 7919 * s_idx)
        for w in range(args.windows):
            pred, y, sens = _window(scn, sizes, rng)
            for method in ("simultaneous", "percentile"):
                if method == "percentile" and w >= args.percentile_windows:
                    continue
                res = outcome_metrics(pred, sensitive_features=sens, y_true=y, metrics=METRICS,
                                      intersections=inter, min_group_size=args.min_group_size,
                                      n_bootstrap=args.bootstrap, disparity_ci=method, random_state=w)
                for grouping, by_metric in truth.items():
                    for metric, t in by_metric.items():
                        r = res.get(metric, grouping)
                        acc = stats.setdefault((grouping, metric, method), [0, 0, 0.0, 0.0, 0])
                        if not math.isfinite(r.value):  # e.g. a group without positive labels: no EOP
                            acc[4] += 1
                            continue
                        acc[0] += 1
                        acc[1] += bool(r.ci_low - 1e-12 <= t <= r.ci_high + 1e-12)
                        acc[2] += r.ci_high - r.ci_low
                        acc[3] += r.n_skipped / args.bootstrap
        seconds = time.perf_counter() - t0
        for (grouping, metric, method), (n, k, width, skipped, undefined) in stats.items():
            lo, hi = _wilson(int(k), int(n))
            rows.append({
                "scenario": scn.name, "grouping": grouping, "metric": metric, "method": method,
                "truth": round(truth[grouping][metric], 4), "windows": int(n), "coverage": k / n,
                "coverage_lo95": round(lo, 3), "coverage_hi95": round(hi, 3), "mean_width": width / n,
                "skipped_share": skipped / n, "undefined_windows": int(undefined),
                "seconds_scenario": round(seconds, 1),
            })
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny run for CI (seconds); targets not asserted")
    p.add_argument("--windows", type=int, default=1000)
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--bootstrap", type=int, default=1000)
    p.add_argument("--min-group-size", type=int, default=30)
    p.add_argument("--percentile-windows", type=int, default=200,
                   help="windows also evaluated with the old percentile disparity interval (comparison)")
    p.add_argument("--scenarios", type=int, nargs="*", default=None, help="indices of SCENARIOS to run (all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE / "results")
    args = p.parse_args(argv)
    if args.smoke:
        args.windows, args.bootstrap, args.percentile_windows = 8, 200, 8
    t0 = time.perf_counter()
    rows = run(args)
    name = "ci_coverage_smoke" if args.smoke else "ci_coverage"
    sim = [r for r in rows if r["method"] == "simultaneous"]
    worst = min(sim, key=lambda r: r["coverage"])
    notes = (
        f"Nominal 0.95. Worst simultaneous coverage {worst['coverage']:.3f} ({worst['scenario']}, "
        f"{worst['grouping']}, {worst['metric']}); target >= 0.93 in every row. "
        f"Total {time.perf_counter() - t0:.0f} s."
    )
    settings = {"smoke": args.smoke, "windows": args.windows, "percentile_windows": args.percentile_windows,
                "scenarios": args.scenarios, "rows": args.rows, "bootstrap": args.bootstrap,
                "min_group_size": args.min_group_size, "seed": args.seed, "confidence": 0.95}
    write_results(args.out, name, rows, settings=settings, notes=notes)
    print(notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
