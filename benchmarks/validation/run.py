"""Validation benchmark: what Great Expectations costs per window, and what the spec loader costs.

Measures (each repeated ``--repeat`` times, median reported):

- ``gx_import_s``: ``import great_expectations`` in a fresh interpreter (full run only: a subprocess);
- ``context_s``: the first :func:`fairmon.validation.validate` call minus the later ones (ephemeral
  context + data source creation, once per process);
- ``build_suite_s``: deriving the suite from a reference frame of the demo stream's shape;
- ``validate_s``: validating one window of ``rows`` rows (good batch) and a bad batch (three failures);
- ``spec_load_ms``: :func:`fairmon.config.load_spec` of ``monitors/demo.yaml`` (DAG parse path).

Usage::

    python benchmarks/validation/run.py --smoke --out /tmp/x     # seconds (CI)
    nice python benchmarks/validation/run.py                      # full: 1k/5k/50k rows
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # repo root: benchmarks._meta and fairmon

from benchmarks._meta import write_results  # noqa: E402
from fairmon.config import load_spec  # noqa: E402
from fairmon.datasets import FEATURE_COLUMNS, SENSITIVE_COLUMNS  # noqa: E402
from fairmon.validation import build_suite, validate  # noqa: E402


def make_frame(n: int, seed: int) -> pd.DataFrame:
    """A frame shaped like the demo stream (9 features, 2 sensitive attributes, a 0/1 label)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 81, n),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "income": rng.gamma(4.0, 12.0, n),
            "debt_ratio": rng.uniform(0, 1, n),
            "employment_years": rng.exponential(6.0, n),
            "education": rng.choice(["primary", "secondary", "bachelor", "master"], n),
            "student": rng.choice(["yes", "no"], n),
            "account_years": rng.exponential(4.0, n),
            "branch": rng.choice(["harbor", "midtown", "riverside", "uptown", "online"], n),
            "sex": rng.choice(["female", "male"], n),
            "race": rng.choice(
                ["white", "black", "hispanic", "asian", "other"], n, p=[0.6, 0.13, 0.18, 0.06, 0.03]
            ),
            "repaid": rng.integers(0, 2, n),
        }
    )


def _median_time(fn: Any, repeat: int) -> tuple[float, Any]:
    """Median wall time of ``repeat`` calls and the last call's result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat (CI)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    sizes = [1000] if args.smoke else [1000, 5000, 50000]
    repeat = 1 if args.smoke else args.repeat

    gx_import_s = None
    if not args.smoke:
        code = "import time; t=time.perf_counter(); import great_expectations; print(time.perf_counter()-t)"
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", code], capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(3)
        ]
        gx_import_s = statistics.median(runs)

    spec_path = HERE.parents[1] / "monitors" / "demo.yaml"
    spec_load_ms = 1000 * _median_time(lambda: load_spec(spec_path), max(repeat, 3))[0]

    reference = make_frame(10000 if not args.smoke else 2000, 0)
    sens = list(SENSITIVE_COLUMNS)
    cols = {"features": list(FEATURE_COLUMNS), "sensitive": sens, "extra": sens, "label": "repaid"}
    t0 = time.perf_counter()
    suite = build_suite(reference, **cols, min_rows=100)  # type: ignore[arg-type]
    build_suite_s = time.perf_counter() - t0

    rows: list[dict[str, Any]] = []
    first_call = None
    for n in sizes:
        window = make_frame(n, 1)
        bad = window.assign(
            sex=window["sex"].where(np.arange(n) % 10 != 0),
            region=window["region"].where(np.arange(n) % 7 != 0, "atlantis"),
        ).drop(columns=["income"])
        if first_call is None:
            t0 = time.perf_counter()
            validate(window, suite)
            first_call = time.perf_counter() - t0
        good_s, good = _median_time(lambda w=window: validate(w, suite), repeat)
        bad_s, bad_report = _median_time(lambda b=bad: validate(b, suite), repeat)
        assert good.success and len(bad_report.failed) == 3, bad_report.summary()
        rows.append(
            {
                "rows": n,
                "expectations": len(suite.expectations),
                "validate_good_s": good_s,
                "validate_bad_s": bad_s,
            }
        )
    assert first_call is not None
    context_s = max(first_call - rows[0]["validate_good_s"], 0.0)
    for r in rows:
        r.update(
            build_suite_s=build_suite_s,
            first_call_s=first_call,
            context_s=context_s,
            gx_import_s=gx_import_s,
            spec_load_ms=spec_load_ms,
        )
    write_results(
        args.out,
        "validation" + ("_smoke" if args.smoke else ""),
        rows,
        settings={"smoke": args.smoke, "repeat": repeat, "sizes": sizes, "reference_rows": len(reference)},
        notes="GX import is measured in a fresh interpreter (full run only); first_call_s includes the "
        "ephemeral context creation and, when GX was not imported yet, its import.",
    )
    for r in rows:
        print(r)
    return rows


if __name__ == "__main__":
    main()
