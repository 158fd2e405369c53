"""The drift step of a window: judge it against earlier completed windows and store its findings.

The history and the reference window come from :mod:`fairmon.drift.history` over the store; this
window's own summary comes from its step artifacts (typed results through the codec).
"""

from __future__ import annotations

import logging
from typing import Any
from zoneinfo import ZoneInfo

from fairmon.config import MonitorSpec
from fairmon.drift import WindowSummary, baseline_note, decide, reference_window
from fairmon.drift.checks import Baseline, Check
from fairmon.drift.history import history_summaries, open_drift_since, reference_summary
from fairmon.drift.policy import AlertPolicy
from fairmon.drift.reference import reference_day
from fairmon.drift.spec import settings_from_spec
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.records import finding_records, read_explain, read_outcome, read_rumie
from fairmon.pipeline.runs import model_version
from fairmon.pipeline.table import A_PERSIST
from fairmon.results import encode
from fairmon.window import scheduled_windows_on

log = logging.getLogger(__name__)

__all__ = ["drift_settings", "current_summary", "reference_of", "decide_and_store_findings"]


def drift_settings(spec: MonitorSpec) -> tuple[list[Check], Baseline, AlertPolicy]:
    """``(checks, baseline, policy)`` of :func:`fairmon.drift.decide` for this monitor.

    Delegates to :func:`fairmon.drift.settings_from_spec`, the one mapping from the spec's ``drift``
    and ``alerts`` sections, so the pipeline and the alert-quality benchmark judge windows alike.
    """
    s = settings_from_spec(spec.drift, spec.alerts, tz=ZoneInfo(spec.schedule.timezone))
    return list(s.checks), s.baseline, s.policy


def current_summary(ctx: RunContext) -> WindowSummary:
    """This window's summary from its step artifacts."""
    rumie = read_rumie(ctx)
    expl = read_explain(ctx)
    return WindowSummary.build(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        outcome=read_outcome(ctx),
        evidence=rumie.evidence if rumie is not None else None,
        gesd=(expl or {}).get("gesd"),
        group_overlap=rumie.group_overlap if rumie is not None else None,
        model_version=model_version(ctx),
    )


def reference_of(ctx: RunContext, baseline: Baseline) -> WindowSummary | None:
    """The reference window, read apart from the trailing history so that it never drops out of it.

    Which window it is comes from the schedule — the scheduled window containing the reference date
    (:func:`fairmon.drift.reference_window` over the windows around it) — not from what happens to be
    stored, so it is the same window for every decision; this window itself when it is the reference.
    None when no scheduled window touches the date.
    """
    scheduled = scheduled_windows_on(ctx.spec, *reference_day(baseline))
    w = reference_window([WindowSummary(ctx.monitor, x.start, x.end) for x in scheduled], baseline)
    if w is None:
        return None
    if (w.window_start, w.window_end) == (ctx.window.start, ctx.window.end):
        return current_summary(ctx)
    return reference_summary(ctx.store, w, method=ctx.spec.rumie.method, ci_level=float(ctx.spec.outcome.confidence))


def decide_and_store_findings(ctx: RunContext) -> dict[str, Any]:
    """Judge this window against earlier completed windows; store its findings (replacing).

    The result's ``baseline`` says what the window was compared with
    (:func:`fairmon.drift.baseline_note`), with ``history_capped`` (a reason) when a drift has been
    open so long that :data:`fairmon.drift.history.MAX_HISTORY_WINDOWS` cut its pre-drift baseline out
    of the history. A reference baseline without a completed reference window (not run yet, failed,
    ...) does not fail the window: its results stay stored, rules that need no baseline still alert,
    the significance tests are silent, and the result and the log say so.
    """
    checks, baseline, policy = drift_settings(ctx.spec)
    open_since = open_drift_since(ctx.store, ctx.monitor, ctx.window.start)
    lead = int(baseline.trailing_n + policy.persistence_n + policy.cooldown_windows + 2)
    history, short = history_summaries(
        ctx.store, ctx.monitor, ctx.window.start, lead=lead,
        open_since=open_since if baseline.mode == "trailing" else None,
        method=ctx.spec.rumie.method, ci_level=float(ctx.spec.outcome.confidence),
    )
    current = current_summary(ctx)
    reference = reference_of(ctx, baseline) if baseline.mode == "reference" else None
    findings = decide(current, history, checks=checks, baseline=baseline, policy=policy, reference=reference,
                      open_since=open_since)
    note = baseline_note(current, baseline, reference=reference, history=history)
    if note["status"] == "missing":
        log.warning("%s %s: %s", ctx.monitor, ctx.window.key, note["reason"])
    if short is not None:
        note = {**note, "history_capped": short}
        log.warning("%s %s: %s", ctx.monitor, ctx.window.key, short)
    run_id = int(ctx.artifacts.get_json(A_PERSIST)["run_id"])
    ctx.store.write_findings(run_id, finding_records(findings), attempt_id=ctx.attempt_id)
    dicts = [encode(f) for f in findings]
    return {
        "run_id": run_id,
        "history": len(history),
        "baseline": note,
        "findings": dicts,
        "open": sum(1 for d in dicts if d["status"] in ("open", "ongoing")),
        "notify": sum(1 for d in dicts if d["notify"]),
        "drifted": any(d["status"] == "open" and d["notify"] for d in dicts),
    }
