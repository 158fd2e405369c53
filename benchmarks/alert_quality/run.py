"""Alert quality of the drift decision: false-alarm rate and detection delay (DESIGN §5).

Runs the REAL decision pipeline pieces on the foundation's synthetic stream
(:func:`fairmon.datasets.generate_stream` + :func:`~fairmon.datasets.deploy_models`):
per window the model's decisions → outcome metrics with bootstrap CIs
(:func:`fairmon.fairness.outcome.outcome_metrics`, sensitive ``sex``/``race`` and their intersection,
labels present) → RUMIE IE-DT with its split-sample honest DScore and p-value
(:func:`fairmon.fairness.rumie.mine`) → group overlap with the previous window's rules → the drift
policy at the **default settings of the spec** (:func:`fairmon.drift.settings_from_spec` of a default
``DriftSpec``: trailing 7 windows, cold start 3, family-wise α 0.05, min effect 0.02, persistence 2 of 3,
cooldown 3, honest-DScore threshold 0.10, dp_ratio ∈ [0.8, 1]).

1. **False alarms**: one stream of ``--windows`` windows served by the production model only (the
   stationary regime; base decision DScore 0.05). A window is a false alarm when it notifies at least
   one finding that is not a resolution. Target: ≤ 1 % of windows.
2. **Detection delay**: ``--trials`` independent streams (different seeds); the retrained model
   (decision DScore +``--rise`` = 0.10) takes over after ``--history`` windows. Delay = 1 + the number
   of drift windows before the first notified finding (1 = alert on the first drifted window).
   Target: delay ≤ 2 in ≥ 90 % of trials.
3. **Messages per drift event** (issue 19): in the same trials the production model serves again
   ``--rollback`` windows after the ``--after`` drifted ones, so the drift resolves. The windows'
   decisions from the drift on go through :func:`fairmon.alerts.grouping.plan_messages` — exactly what
   the outbox enqueues — and are counted: top-level messages (one per monitor-window with notified
   findings), threaded resolutions, and the FEU follow-ups the pipeline threads under a message that
   opens a drift (when retraining is configured). Goal per event: 1 message + threaded follow-ups + 1
   resolution; beside it, how many messages one message per finding (before issue 19) would have posted.

RUMIE attribute set: the candidate proxy columns of the stream (``age``, ``region`` and the decoys
``student``, ``account_years``, ``branch``), i.e. what a monitor spec for this model declares in
``rumie.attributes``. The legitimate decision factors (income, debt ratio, employment, education) are
left out on purpose: with them RUMIE reports a business-explained group (low income / short
employment) with honest DScore ≈ 0.21 that has nothing to do with the planted bias (measured while
building this benchmark), and every window would carry that finding.

RUMIE iterations: the committed results use ``--iterations 1000`` instead of the paper's 2500 so that the
≈ 460 mined windows fit the shared 2-core machine (≈ 4–5 s per window under load instead of ≈ 10 s).
While building this benchmark, 500 and 2500 iterations gave the same honest DScore on the stream's
windows within ±0.015 (the IE optimum is reached early; IE-DT then snaps the group to tree leaves),
which is below the window-to-window spread (≈ 0.013) the drift tests already account for. Every
other RUMIE setting is the default of :func:`~fairmon.fairness.rumie.mine` (k=5, α=0.45, β=0.55,
split-sample significance).

Usage::

    python benchmarks/alert_quality/run.py --iterations 1000   # the committed run (≈ 45 min, 2 loaded cores)
    python benchmarks/alert_quality/run.py --smoke     # seconds, for CI
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _meta import machine_info, write_results  # noqa: E402

RUMIE_ATTRIBUTES = ("age", "region", "student", "account_years", "branch")
MONITOR = "alert-quality"


def _window_summary(w: Any, fav: Any, prev_ev: dict | None, args: argparse.Namespace, version: str) -> tuple[Any, dict]:
    import numpy as np

    from fairmon.drift import WindowSummary
    from fairmon.fairness.outcome import outcome_metrics
    from fairmon.fairness.rumie import mine
    from fairmon.rules import jaccard, membership

    frame = w.frame
    outcome = outcome_metrics(
        fav, sensitive_features=frame[["sex", "race"]], y_true=frame["repaid"].to_numpy(),
        n_bootstrap=args.bootstrap, random_state=w.index,
    )
    X = frame[list(RUMIE_ATTRIBUTES)]
    ev = mine(X, fav, iterations=args.iterations, random_state=w.index, num_threads=1)
    evd = ev.to_dict()
    overlap = None
    if prev_ev and prev_ev.get("rule_conditions") and ev.status == "ok":
        overlap = jaccard(np.asarray(ev.mask), membership(prev_ev["rule_conditions"], X))
    summary = WindowSummary.build(MONITOR, w.start, w.end, outcome=outcome, evidence=evd, group_overlap=overlap,
                                  model_version=version)
    return summary, evd


def _stream_summaries(n_windows: int, drift_window: int, seed: int, args: argparse.Namespace,
                      label: str, rollback_at: int | None = None) -> tuple[list[Any], list[dict], Any]:
    from fairmon.datasets import FEATURE_COLUMNS, decision_dscore, deploy_models, generate_stream
    from fairmon.registry import Registry

    stream = generate_stream(
        n_windows=n_windows, rows_per_window=args.rows, drift_window=drift_window, base_dscore=args.base,
        dscore_rise=args.rise, random_state=seed,
    )
    # the retrained model is calibrated (deploy_models) to the DScore rise over the windows after the drift
    # point; with a rollback only the windows before it are the retrained model's, so only those count (the
    # rollback windows, served by the production model, once made each trial's drift a different draw)
    served = stream if rollback_at is None else dataclasses.replace(
        stream, windows=stream.windows[:rollback_at], _uniforms=stream._uniforms[:rollback_at])
    dep = deploy_models(served, f"memory://alert-quality-{label}-{seed}", name="m")
    reg = Registry(dep.registry_uri)
    models = {dep.production.version: reg.load("m", dep.production.version),
              dep.retrained.version: reg.load("m", dep.retrained.version)}
    summaries, per_window = [], []
    prev: dict | None = None
    for w in stream.windows:
        if rollback_at is not None and w.index >= rollback_at:  # the production model is back
            version = dep.production.version
        else:
            version = dep.version_for_window(w.index)
        fav = models[version].predict(w.frame[list(FEATURE_COLUMNS)])
        t = time.perf_counter()
        s, evd = _window_summary(w, fav, prev, args, version)
        summaries.append(s)
        prev = evd
        row = {
            "window": w.index, "model": version, "planted_dscore": decision_dscore(fav, w.membership),
            "honest_dscore": evd.get("honest_dscore"), "p_value": evd.get("p_value"),
            "rumie_rule": evd.get("rule"), "overlap": s.group_overlap, "seconds": time.perf_counter() - t,
        }
        per_window.append(row)
        if args.progress:
            print(json.dumps({"part": label, "seed": seed, **{k: row[k] for k in row if k != "rumie_rule"}},
                             default=str), file=sys.stderr, flush=True)
    return summaries, per_window, dep


def _alerts(findings: list[Any]) -> list[Any]:
    return [f for f in findings if f.notify and f.status != "resolved"]


def _messages(decisions: list[list[Any]]) -> dict[str, int]:
    """The Slack messages the windows' decisions post (:func:`fairmon.alerts.grouping.plan_messages`, what
    the outbox enqueues): top-level window messages, threaded resolutions, the FEU follow-ups the
    pipeline threads under a message that opens a drift (with retraining configured), and — for
    comparison — how many messages one message per finding would have posted."""
    from fairmon.alerts.grouping import plan_messages

    out = {"top_level": 0, "resolutions": 0, "followups": 0, "per_finding": 0}
    for fs in decisions:
        plans = plan_messages(fs)
        out["top_level"] += sum(p.kind == "window" for p in plans)
        out["resolutions"] += sum(p.kind == "resolution" for p in plans)
        out["followups"] += any(f.notify and f.status == "open" for f in fs)
        out["per_finding"] += sum(bool(f.notify) for f in fs)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from fairmon.drift import replay, settings_from_spec

    settings = settings_from_spec()
    t0 = time.perf_counter()
    # ---------------------------------------------------------------- 1. stationary
    n = args.windows
    summ, per_window, dep = _stream_summaries(n + 1, n, args.seed, args, "stationary")
    summ, per_window = summ[:n], per_window[:n]  # the last window (retrained model) is not part of it
    decisions = replay(summ, **settings.kwargs())
    fa_windows, fa_kinds = 0, Counter()
    raw_kinds: Counter = Counter()
    for pw, fs in zip(per_window, decisions):
        alerts = _alerts(fs)
        pw["alerts"] = ";".join(sorted({f.key for f in alerts}))
        pw["findings"] = ";".join(sorted(f"{f.key}/{f.status}" for f in fs))
        fa_windows += bool(alerts)
        fa_kinds.update(f.kind for f in alerts)
        raw_kinds.update(f.kind for f in fs if f.status in ("pending", "open"))
    fa_rate = fa_windows / n
    t_stationary = time.perf_counter() - t0
    # ---------------------------------------------------------------- 2. detection
    trials = []
    for t in range(args.trials):
        seed = args.seed + 1000 + t
        s2, pw2, dep2 = _stream_summaries(args.history + args.after + args.rollback, args.history, seed, args,
                                          "drift", rollback_at=args.history + args.after)
        dec2 = replay(s2, **settings.kwargs())
        msgs = _messages(dec2[args.history:])
        pre_alarms = sum(bool(_alerts(fs)) for fs in dec2[: args.history])
        delay = None
        first_kinds: list[str] = []
        for j in range(args.history, args.history + args.after):
            alerts = _alerts(dec2[j])
            if alerts:
                delay = j - args.history + 1
                first_kinds = sorted({f.kind for f in alerts})
                break
        trials.append({
            "trial": t, "seed": seed, "delay": delay if delay is not None else -1,
            "within_2": delay is not None and delay <= 2, "first_alert_kinds": ";".join(first_kinds),
            "pre_drift_alarm_windows": pre_alarms,
            "messages_top_level": msgs["top_level"], "messages_followups": msgs["followups"],
            "messages_resolutions": msgs["resolutions"], "messages_if_per_finding": msgs["per_finding"],
            "one_message_one_resolution": msgs["top_level"] == 1 and msgs["resolutions"] == 1,
            "dscore_before": dep2.dscore_before, "dscore_after": dep2.dscore_after,
            "honest_before_mean": _mean([p["honest_dscore"] for p in pw2[: args.history]]),
            "honest_after_mean": _mean([p["honest_dscore"] for p in pw2[args.history:args.history + args.after]]),
        })
    detect_rate = sum(tr["within_2"] for tr in trials) / max(1, len(trials))
    message_rate = sum(tr["one_message_one_resolution"] for tr in trials) / max(1, len(trials))
    return {
        "fa_rate": fa_rate, "fa_windows": fa_windows, "n_windows": n, "fa_kinds": dict(fa_kinds),
        "raw_violation_kinds": dict(raw_kinds), "detect_rate": detect_rate, "trials": trials,
        "message_rate": message_rate,
        "per_window": per_window, "seconds_stationary": t_stationary,
        "seconds_total": time.perf_counter() - t0, "dscore_before": dep.dscore_before,
        "policy": {"checks": [repr(c) for c in settings.checks], "baseline": repr(settings.baseline),
                   "policy": repr(settings.policy)},
    }


def _message_detail(trials: list[dict[str, Any]]) -> str:
    def mean(key: str) -> str:
        return f"{sum(t[key] for t in trials) / max(1, len(trials)):.2f}"

    return (f"per event: top-level messages {mean('messages_top_level')} (goal 1), threaded FEU follow-ups "
            f"{mean('messages_followups')}, threaded resolutions {mean('messages_resolutions')} (goal 1); one "
            f"message per finding would have posted {mean('messages_if_per_finding')}; top-level per trial "
            + ",".join(str(t["messages_top_level"]) for t in trials))


def _mean(xs: list[Any]) -> float | None:
    vals = [float(x) for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny run for CI (seconds); targets not asserted")
    p.add_argument("--windows", type=int, default=200, help="stationary windows (false-alarm part)")
    p.add_argument("--trials", type=int, default=20, help="drift trials (detection part)")
    p.add_argument("--history", type=int, default=10, help="windows before the drift in each trial")
    p.add_argument("--after", type=int, default=3, help="windows after the drift in each trial")
    p.add_argument("--rollback", type=int, default=4,
                   help="windows after the drift served by the production model again (the drift resolves)")
    p.add_argument("--rows", type=int, default=5000, help="rows per window")
    p.add_argument("--iterations", type=int, default=2500, help="RUMIE gradient steps")
    p.add_argument("--bootstrap", type=int, default=1000, help="outcome-metric bootstrap replicates")
    p.add_argument("--base", type=float, default=0.05, help="decision DScore before the drift")
    p.add_argument("--rise", type=float, default=0.10, help="decision DScore rise at the drift")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE / "results")
    p.add_argument("--progress", action="store_true", help="print one JSON line per window to stderr")
    args = p.parse_args(argv)
    if args.smoke:
        args.windows, args.trials, args.history, args.after, args.rollback = 6, 1, 4, 2, 3
        args.rows, args.iterations, args.bootstrap = 1000, 150, 100
    res = run(args)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    settings["rumie_attributes"] = list(RUMIE_ATTRIBUTES)
    settings["drift"] = res["policy"]
    summary = [
        {"measure": "false-alarm rate per window (stationary)", "value": res["fa_rate"],
         "detail": f"{res['fa_windows']} of {res['n_windows']} windows; kinds {json.dumps(res['fa_kinds'])}",
         "target": "<= 0.01", "met": res["fa_rate"] <= 0.01},
        {"measure": f"alert within 2 windows of a DScore rise of {args.rise}", "value": res["detect_rate"],
         "detail": "delays " + ",".join(str(t["delay"]) for t in res["trials"]),
         "target": ">= 0.90", "met": res["detect_rate"] >= 0.90},
        {"measure": "drift events with 1 message + threaded follow-ups + 1 resolution", "value": res["message_rate"],
         "detail": _message_detail(res["trials"]), "target": ">= 0.90", "met": res["message_rate"] >= 0.90},
    ]
    name = "alert_quality_smoke" if args.smoke else "alert_quality"
    notes = (
        f"Stationary raw violations (pending/open findings, before persistence): "
        f"{json.dumps(res['raw_violation_kinds'])}. Production-model decision DScore on the planted group "
        f"{res['dscore_before']:.3f}. Runtime {res['seconds_total']:.0f} s "
        f"(stationary part {res['seconds_stationary']:.0f} s) on a machine shared with other jobs "
        f"(load average {machine_info()['loadavg']}); timings are inflated by that load."
    )
    write_results(args.out, name, summary, settings=settings, notes=notes)
    write_results(args.out, f"{name}_trials", res["trials"], settings=settings)
    write_results(args.out, f"{name}_windows", res["per_window"], settings=settings)
    for row in summary:
        print(f"{row['measure']}: {row['value']:.4f} (target {row['target']}; met={row['met']}) {row['detail']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
