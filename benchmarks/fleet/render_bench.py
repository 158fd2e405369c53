"""CPU seconds of one window's report (``render_html``) and of each of its charts, in a warm process.

``--prepare``: run 6 windows of the fleet's demo spec (spec-default explanations, 2,000 rows) into a
scratch Postgres store and pickle two windows' :class:`~fairmon.report.data.ReportData` (a window
without drift and the drift window). ``--time``: render each pickled window ``--reps`` + 1 times in
this process (the first one warms up) and print the minimum CPU-s and each chart's share. Compare
two checkouts in the same hour with ``PYTHONPATH`` (``results/report_ab/``).

    python benchmarks/fleet/render_bench.py --prepare /tmp/reportdata.pkl
    PYTHONPATH=. python benchmarks/fleet/render_bench.py --time /tmp/reportdata.pkl
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

CHARTS = ("outcome_chart", "tree_chart", "gesd_chart", "trend_chart", "pareto_chart")


def prepare(out: Path) -> None:
    import yaml
    from model import fleet_spec_docs, write_specs
    from run import FLEET_OVERRIDES, _databases, _set_dotted

    from fairmon._logs import quiet_third_party
    from fairmon.cli.demo import prepare as prepare_demo
    from fairmon.cli.demo import write_demo_spec
    from fairmon.pipeline import run_window
    from fairmon.report.data import load_report_data
    from fairmon.store import open_store

    quiet_third_party()
    work = Path(tempfile.mkdtemp(prefix="render_bench_"))
    with _databases(f"render{os.getpid()}") as (_meta, url):
        open_store(url, upgrade=True).engine.dispose()
        manifest = prepare_demo(work / "demo", windows=7, rows=2000, drift_window=5, seed=0)
        base = yaml.safe_load(write_demo_spec(work / "demo", FLEET_OVERRIDES).read_text())
        _set_dotted(base, "explanations", None)
        first = date.fromisoformat(manifest["windows"][0]["start"][:10])
        spec = write_specs(fleet_spec_docs(base, n=1, prefix="dt", first_day=first, windows=6, layout="warm",
                                           out=work), work / "specs")[0]
        days = [w["start"][:10] for w in manifest["windows"][:6]]
        for d in days:
            print(d, run_window(spec, d, db_url=url, notify=False).status, flush=True)
        store = open_store(url)
        data = {d: load_report_data(store, "dt000", d) for d in (days[1], days[-1])}
        store.engine.dispose()
    out.write_bytes(pickle.dumps(data))


def time_reports(pkl: Path, reps: int) -> None:
    import fairmon.report._diagnosis as diagnosis
    import fairmon.report.render as render
    from fairmon.report import charts

    calls: dict[str, float] = {}

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            c0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                calls[fn.__name__] = calls.get(fn.__name__, 0.0) + time.process_time() - c0

        wrapper.__name__ = fn.__name__
        return wrapper

    for name in CHARTS:
        setattr(charts, name, timed(getattr(charts, name)))
    diagnosis.attribution_gap_chart = timed(diagnosis.attribution_gap_chart)  # type: ignore[assignment]
    data = pickle.loads(pkl.read_bytes())
    for day, d in data.items():
        took = []
        for i in range(reps + 1):
            calls.clear()
            c0 = time.process_time()
            html = render.render_html(d)
            if i:
                took.append(time.process_time() - c0)
        print(json.dumps({"window": day, "render_html_min_cpu_s": round(min(took), 3), "bytes": len(html),
                          "charts_last_cpu_s": {k: round(v, 3) for k, v in calls.items()},
                          "loadavg": os.getloadavg()}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", type=Path, help="write the pickled report data here")
    ap.add_argument("--time", type=Path, help="time the reports of this pickle")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    if args.prepare:
        prepare(args.prepare)
    if args.time:
        time_reports(args.time, args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
