"""``fairmon demo``: the whole product on a synthetic stream with a planted, drifting discrimination.

What it does (all through the same pipeline the Airflow DAG runs):

1. generates the synthetic loan stream (:func:`fairmon.datasets.generate_stream`: ``--windows``
   daily windows of ``--rows`` rows; group ``age <= 30 OR region = north`` planted; 5,000 rows by
   default: with fewer, RUMIE's in-sample optimism on a window exceeds the rule search's Occam
   epsilon of 0.01, and the reported rules after the model change add noise conditions to the planted
   rule: at 2,000 rows one window in four described the planted group, at 5,000 all four),
2. trains and registers the production model and, valid from the drift window (window 6 of 10), the
   retrained, more discriminating version in a registry under ``--output``,
3. writes the daily CSV partitions + reference data, and the effective monitor spec
   ``<output>/demo.yaml`` (``monitors/demo.yaml`` with the demo settings below),
4. runs every window in order with :func:`fairmon.pipeline.run_window` into the store (embedded
   Postgres unless ``--db``/``FAIRMON_DATABASE_URL``), showing progress,
5. prints each Slack message the run produced (and sends them when ``FAIRMON_SLACK_TOKEN`` is set),
   including the FEU candidates posted in the drift alert's thread.

Demo settings (small on purpose, so the demo finishes in minutes on a laptop; every one is a spec
field, overridable with ``--set``, see :data:`DEMO_SETTINGS`): outcome bootstrap 200; RUMIE with
600 iterations (the spec itself restricts mining to the attributes that should not matter for a loan
decision); GESD and OpenXAI on 50 sampled rows with 5 perturbations each (300 LIME / 200
KernelSHAP samples; FEU's GESD objective uses the same settings); attribution gaps on 100 rows per
side of each group; FEU NSGA-II population 6 x 3
generations (epochs 3..10) with a 60 s budget for the whole FEU step (a generation starts only when
it, the refits' and the front's test metrics' estimates fit; :mod:`fairmon.feu._budget`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from fairmon.alerts.message import mrkdwn_unescape
from fairmon.alerts.slack import TOKEN_ENV
from fairmon.cli._args import SubParsers, add_command, add_db_argument
from fairmon.config import ENV_DATABASE_URL
from fairmon.datasets import deploy_models, generate_stream, write_partitions
from fairmon.errors import ConfigError
from fairmon.pipeline import run_window
from fairmon.pipeline.table import STEP_ORDER
from fairmon.store import describe_url, open_store
from fairmon.window import Window, parse_date

EPILOG = """examples:
  fairmon demo                                  10 daily windows into the embedded Postgres
  fairmon demo --db postgresql://postgres@127.0.0.1/fairmon_demo --output /tmp/fairmon-demo
  fairmon demo --windows 8 --rows 1000 --set rumie.iterations=300 --json

Without --db (and FAIRMON_DATABASE_URL) the store is an embedded PostgreSQL under $FAIRMON_HOME/pgdata
(default ~/.fairmon/pgdata); it stops when the demo ends. To query the results with psql afterwards,
give the demo a server: --db postgresql://... (make demo DB=postgresql://...).
Set FAIRMON_SLACK_TOKEN (and optionally FAIRMON_SLACK_CHANNEL) to really post the alerts.
"""

#: the demo's settings on top of monitors/demo.yaml (documented in the module docstring); the repo's
#: monitors/demo.yaml carries the same values, so its Airflow DAG runs at demo size too (issue 20)
DEMO_SETTINGS: dict[str, Any] = {
    "outcome.bootstrap": 200,
    "rumie.iterations": 600,
    "explanations.background_size": 30,
    "explanations.lime_samples": 300,
    "explanations.kernelshap_samples": 200,
    "explanations.gesd.sample_size": 50,
    "explanations.gesd.n_perturbations": 5,
    "explanations.openxai.sample_size": 50,
    "explanations.openxai.n_perturbations": 5,
    "explanations.attribution_gap.sample_size": 100,
    "retraining.population": 6,
    "retraining.generations": 3,
    "retraining.bounds.epochs": [3, 10],
    "retraining.time_budget_s": 300,  # never binding for 6 x 3: the demo's output must not depend on load
}
DEFAULT_OUTPUT = "demo-output"
#: rows per window: enough that the reported RUMIE rules after the model change are the planted group
DEFAULT_ROWS = 5000


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "demo",
        help="run the end-to-end demo on a synthetic drifting stream",
        description="Generate a synthetic production stream with a planted discrimination that a "
        "retrained model version makes worse, monitor every daily window through the pipeline the "
        "Airflow DAG uses, store the results in Postgres, and show the Slack alerts and FEU candidates.",
        epilog=EPILOG,
    )
    add_db_argument(p)
    p.add_argument("--windows", type=int, default=10, metavar="N", help="daily windows (default 10)")
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS, metavar="N",
                   help=f"rows per window (default {DEFAULT_ROWS})")
    p.add_argument("--drift-window", type=int, default=None, metavar="I",
                   help="first window of the retrained model (default 6, or 60%% of --windows)")
    p.add_argument("--output", default=DEFAULT_OUTPUT, metavar="DIR", help=f"output folder (default {DEFAULT_OUTPUT})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="override a spec field, e.g. rumie.iterations=300 (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the stream (default 0)")
    p.add_argument("--json", action="store_true", help="machine-readable summary instead of the live view")
    p.set_defaults(func=run)


def _repo_demo_spec() -> Path:
    here = Path(__file__).resolve().parents[2] / "monitors" / "demo.yaml"
    if here.is_file():
        return here

    raise ConfigError(f"{here}: demo monitor spec not found (run from a fairmon source checkout)")


def _set_dotted(doc: dict[str, Any], key: str, value: Any) -> None:
    node = doc
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["a.b=3", "c=[1, 2]"]`` → ``{"a.b": 3, "c": [1, 2]}`` (values parsed as YAML)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(raw)
    return out


def write_demo_spec(output: Path, overrides: dict[str, Any]) -> Path:
    """The effective spec: ``monitors/demo.yaml`` + :data:`DEMO_SETTINGS` + ``overrides``, paths absolute."""
    doc = yaml.safe_load(_repo_demo_spec().read_text())
    for k, v in {**DEMO_SETTINGS, **overrides}.items():
        _set_dotted(doc, k, v)
    out = output.resolve()
    doc["model"]["registry_uri"] = str(out / "registry")
    doc["data"]["files"]["pattern"] = str(out / "stream") + "/{start:%Y-%m-%d}.csv"
    doc["validation"]["reference_data"] = str(out / "stream" / "reference.csv")
    doc["validation"]["suite_path"] = str(out / "suite.json")
    doc["retraining"]["training_data"] = {"path": str(out / "stream" / "reference.csv")}
    doc["execution"]["artifact_location"] = str(out / "artifacts")
    path = out / "demo.yaml"
    path.write_text("# generated by `fairmon demo` from monitors/demo.yaml\n" + yaml.safe_dump(doc, sort_keys=False))
    return path


def prepare(output: Path, *, windows: int, rows: int, drift_window: int, seed: int) -> dict[str, Any]:
    """Generate the stream, register both model versions, write partitions. Returns the manifest."""
    for sub in ("registry", "stream", "artifacts", "reports"):
        shutil.rmtree(output / sub, ignore_errors=True)
    output.mkdir(parents=True, exist_ok=True)
    stream = generate_stream(n_windows=windows, rows_per_window=rows, drift_window=drift_window, random_state=seed)
    deployed = deploy_models(stream, str(output / "registry"), name="demo")
    manifest = write_partitions(stream, output / "stream")
    manifest["model"] = {
        "window_versions": deployed.window_versions,
        "dscore_before": deployed.dscore_before,
        "dscore_after": deployed.dscore_after,
    }
    manifest["windows"] = [{"index": w.index, "start": w.start.isoformat(), "end": w.end.isoformat()} for w in stream.windows]
    return manifest


def _run_windows(manifest: dict[str, Any], spec_path: Path, db_url: str, notify: bool,
                 on_event: Any, results: list[dict[str, Any]]) -> None:
    """Run every window of the prepared stream through the pipeline, appending each outcome to ``results``."""
    for w in manifest["windows"]:
        window = Window("demo", parse_date(w["start"]), parse_date(w["end"]))

        def step_cb(step: str, res: dict[str, Any], _w: dict[str, Any] = w) -> None:
            if on_event:
                on_event("step", {"window": _w["index"], "step": step, "result": res})

        # the demo (re)creates its monitor wherever --output points: it takes the name over on purpose
        o = run_window(spec_path, window=window, db_url=db_url, notify=notify, on_step=step_cb,
                       take_over_monitor=True).to_dict()
        o["index"] = w["index"]
        o["model_version"] = manifest["model"]["window_versions"][w["index"]]
        results.append(o)
        if on_event:
            on_event("window", o)


def run_demo(
    *,
    output: str | Path = DEFAULT_OUTPUT,
    db_url: str | None = None,
    windows: int = 10,
    rows: int = DEFAULT_ROWS,
    drift_window: int | None = None,
    overrides: dict[str, Any] | None = None,
    seed: int = 0,
    on_event: Any = None,
) -> dict[str, Any]:
    """Run the demo end to end; returns a JSON-able summary (windows, findings, alerts, FEU, timings).

    ``on_event(kind, data)`` is called with ``("prepared", manifest)``, ``("step", {...})`` and
    ``("window", outcome_dict)`` for live display.
    """

    t0 = time.perf_counter()
    out = Path(output).resolve()
    dw = drift_window if drift_window is not None else (6 if windows == 10 else max(1, int(round(windows * 0.6))))
    manifest = prepare(out, windows=windows, rows=rows, drift_window=dw, seed=seed)
    spec_path = write_demo_spec(out, overrides or {})
    t_prepare = time.perf_counter() - t0
    store = open_store(db_url, upgrade=True)  # the demo may create the schema; production tasks never do
    resolved_db = store.engine.url.render_as_string(hide_password=False)
    embedded = db_url is None and not os.environ.get(ENV_DATABASE_URL)
    # A re-run in the embedded store starts from nothing: its alerts are sent exactly once per window, so
    # the terminal would otherwise show the first run's messages. Only a "demo" monitor this demo's spec
    # file owns is deleted: one `fairmon run --monitor monitors/demo.yaml` wrote (or a database given by
    # URL) may hold windows worth keeping, and is left as it is.
    reset = store.delete_monitor("demo", owned_by=str(Path(spec_path).resolve())) if embedded else 0
    store.engine.dispose()
    if on_event:
        on_event("prepared", {**manifest, "spec": str(spec_path), "seconds": t_prepare})
    # a live run: alerts are queued in the outbox and rendered; they are posted when a token is set
    notify = True
    results: list[dict[str, Any]] = []
    try:
        _run_windows(manifest, spec_path, resolved_db, notify, on_event, results)
    finally:
        if not embedded:  # on a server the demo keeps no claim on the name: Airflow's fairmon_demo
            store = open_store(resolved_db)  # (monitors/demo.yaml) may run it next on the same database
            try:
                store.release_monitor("demo", str(Path(spec_path).resolve()))
            finally:
                store.engine.dispose()
    return {
        "output": str(out),
        "spec": str(spec_path),
        "db": _mask(resolved_db),
        "planted_rule": manifest["planted_rule"],
        "planted_attributes": manifest["planted_attributes"],
        "drift_window": dw,
        "model": manifest["model"],
        "windows": results,
        "seconds": round(time.perf_counter() - t0, 2),
        "prepare_seconds": round(t_prepare, 2),
        "slack_sent": bool(os.environ.get("FAIRMON_SLACK_TOKEN")),
        "earlier_runs_removed": reset,
    }


def _mask(url: str) -> str:
    return str(describe_url(url))


# ------------------------------------------------------------------------------------------ display


def _messages_of(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for step in ("validate", "alert", "followup"):
        msgs.extend((outcome["steps"].get(step) or {}).get("rendered", []) or [])
    return msgs


def _window_line(outcome: dict[str, Any]) -> str:
    """One window's status line (rich markup; the error text is escaped, it may hold brackets)."""
    drift = outcome["steps"].get("drift", {})
    hd = outcome["steps"].get("rumie", {}).get("honest_dscore")
    honest = "n/a" if hd is None else f"{hd:.3f}"  # three decimals on every line, as the alerts print it
    # findings waiting for the persistence rule (drift.persistence) raise no alert yet: say so, or the
    # reader wonders where the alert of a window with findings went
    pending = drift.get("pending") or 0
    waiting = f", {pending} pending persistence: no alert yet" if pending and not drift.get("drifted") else ""
    return (
        f"window {outcome['index']} {outcome['window']['start'][:10]} model {outcome['model_version']}: "
        f"[bold]{outcome['status']}[/] honest DScore {honest} "
        f"findings {drift.get('findings', '-')}{waiting} ({outcome['seconds']:.1f}s)"
        + (f" [red]{escape(str(outcome['error']))}[/]" if outcome.get("error") else "")
    )


def _slack_panel(msg: dict[str, Any]) -> Any:
    """A sent Slack message as a console panel. The text is plain ``Text``: Slack messages hold
    brackets (``#3 [v3]: AUC ...``) that rich would otherwise read as markup and drop."""

    return Panel(Text(mrkdwn_unescape(msg.get("text", ""))), title=f"Slack {msg.get('channel') or ''}", expand=False)


def _live(args: argparse.Namespace) -> dict[str, Any]:

    if not getattr(args, "debug", False):  # the live view replaces the per-step INFO log lines
        logging.getLogger().setLevel(logging.WARNING)
    if not os.environ.get(TOKEN_ENV):  # said once here instead of a "delivery skipped" warning per window
        for name in ("fairmon.alerts.dispatch", "fairmon.pipeline.judge"):
            logging.getLogger(name).setLevel(logging.ERROR)
    console = Console()
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=console,
    )
    state: dict[str, Any] = {}

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "prepared":
            console.print(
                f"[bold]fairmon demo[/]: {len(data['windows'])} daily windows, planted group "
                f"[cyan]{escape(str(data['planted_rule']))}[/]; retrained model live from window "
                f"{data['drift_window']} (decision DScore {data['model']['dscore_before']:.3f} → "
                f"{data['model']['dscore_after']:.3f}); spec {data['spec']}"
            )
            if not os.environ.get(TOKEN_ENV):
                console.print(f"Slack: {TOKEN_ENV} is not set, so alerts are queued in the outbox and shown "
                              "here instead of posted")
            state["task"] = progress.add_task("windows", total=len(data["windows"]) * len(STEP_ORDER))
        elif kind == "step":
            progress.update(state["task"], advance=1, description=f"window {data['window']}: {data['step']}")
        elif kind == "window":
            done = STEP_ORDER.index(next(reversed(data["steps"]), STEP_ORDER[0])) + 1 if data["steps"] else 0
            progress.update(state["task"], advance=len(STEP_ORDER) - done)
            console.print(_window_line(data))
            for msg in _messages_of(data):
                console.print(_slack_panel(msg))

    with progress:
        summary = run_demo(
            output=args.output, db_url=args.db, windows=args.windows, rows=args.rows,
            drift_window=args.drift_window, overrides=parse_overrides(args.overrides), seed=args.seed,
            on_event=on_event,
        )
    console.print(f"done in {summary['seconds']:.0f}s; store {summary['db']}; output {summary['output']}")
    if summary["earlier_runs_removed"] is None:
        console.print("(the embedded store's monitor 'demo' belongs to another spec file: its windows were kept, "
                      "and alerts already sent for these windows were not sent again)")
    elif summary["earlier_runs_removed"]:
        console.print(f"(a fresh demo: the {summary['earlier_runs_removed']} windows an earlier demo stored in the "
                      "embedded store were removed first)")
    reports = [w["steps"].get("report", {}).get("path") for w in summary["windows"]]
    if any(reports):  # the run reports (fairmon.report), one per window, and their index
        last = next(p for p in reversed(reports) if p)
        console.print(f"reports: {Path(last).parent / 'index.html'} (latest {last}); serve with "
                      f"`python -m http.server -d {summary['output']} 8000` to follow the alert links")
    return summary


def run(args: argparse.Namespace) -> int:
    if args.json:
        if not getattr(args, "debug", False):
            logging.getLogger().setLevel(logging.WARNING)
        summary = run_demo(
            output=args.output, db_url=args.db, windows=args.windows, rows=args.rows,
            drift_window=args.drift_window, overrides=parse_overrides(args.overrides), seed=args.seed,
        )
        print(json.dumps(summary, default=str))
    else:
        summary = _live(args)
    ok = all(w["status"] in ("succeeded", "labels_pending") for w in summary["windows"])
    return 0 if ok else 1
