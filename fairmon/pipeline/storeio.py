"""The pipeline's side of the store: run rows, the window's records, drift history, findings, FEU rows.

Everything the steps write goes through :class:`fairmon.store.Store`; this module only translates
between step artifacts (JSON dicts of the method results) and the store's typed records.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from fairmon.pipeline.context import RunContext

log = logging.getLogger(__name__)

__all__ = [
    "start_run",
    "mark_failed",
    "clear_failure",
    "mark_data_invalid",
    "window_records",
    "write_window",
    "history_summaries",
    "decide_and_store_findings",
    "drift_settings",
    "save_feu",
    "finding_record",
]


def _f(value: Any) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _timings(ctx: RunContext) -> dict[str, float]:
    from fairmon.pipeline.steps import STEP_ORDER

    out: dict[str, float] = {}
    for step in STEP_ORDER:
        name = f"step_{step}"
        if ctx.artifacts.exists(name):
            out[step] = float(ctx.artifacts.get_json(name).get("seconds", 0.0))
    return out


#: run details that describe one failure or its recovery: a later status mark replaces them
_FAILURE_KEYS = frozenset({"failed_step", "results_kept", "persisted_status", "recovered_step", "failed_attempt"})
#: run details persist wrote about the stored results: they go when a mark removes the results
_RESULT_KEYS = frozenset({"prediction_source", "favorable_rate", "artifacts"})


def _merged_details(ctx: RunContext, new: Mapping[str, Any], *, results_kept: bool = True) -> dict[str, Any]:
    """The run's stored details with ``new`` on top.

    The store replaces a run's details on every mark, so a status mark built from scratch would erase
    what earlier steps of this run recorded (validation's failed expectations, persist's prediction
    source, a data alert's delivery error). :func:`start_run` resets the details at the start of a
    window's run, so what is merged here always belongs to the current run; the bookkeeping of an
    earlier failure (``_FAILURE_KEYS``) is dropped rather than carried over, and so is what describes
    the stored results (``_RESULT_KEYS``) when this mark removes them.
    """
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    old = (run.details if run is not None else None) or {}
    drop = _FAILURE_KEYS if results_kept else _FAILURE_KEYS | _RESULT_KEYS
    return {**{k: v for k, v in old.items() if k not in drop}, **new}


def _model_version(ctx: RunContext) -> str | None:
    if ctx.artifacts.exists("snapshot"):
        return str(ctx.artifacts.get_json("snapshot")["version"])
    return None


# ------------------------------------------------------------------------------------------ runs


def start_run(ctx: RunContext) -> int:
    """Register the monitor (spec + fingerprint) and mark the window ``running``; returns ``run_id``."""
    spec = ctx.spec
    ctx.store.upsert_monitor(
        spec.name,
        owner=spec.identity.owner,
        tags=list(spec.identity.tags),
        spec=spec.model_dump(mode="json", by_alias=True),
        spec_fingerprint=spec.fingerprint,
    )
    return int(
        ctx.store.mark_run(
            spec.name,
            ctx.window.start,
            ctx.window.end,
            "running",
            spec_fingerprint=spec.fingerprint,
            details={"attempt": ctx.attempt},
        )
    )


def mark_failed(ctx: RunContext, *, step: str, error: str) -> int:
    """The window failed at ``step``: status ``failed`` with the error text.

    Before ``persist`` has written the window, nothing of it is stored and earlier results of the
    window (from an older attempt) are removed: they would describe other data. A step *after*
    persist (drift, report, alert, FEU, follow-up) failing does not invalidate what persist wrote,
    so those results are kept (the run says ``failed`` and which step, ``details.results_kept``);
    a later successful attempt of that step restores the persisted status
    (:func:`clear_failure`). Deleting them would lose a computed window to, say, a Slack outage.
    What earlier steps of this run put in the details (failed expectations, ...) is kept.
    """
    from fairmon.pipeline.steps import A_PERSIST, AFTER_PERSIST

    persisted = step in AFTER_PERSIST and ctx.artifacts.exists(A_PERSIST)
    details: dict[str, Any] = {"failed_step": step, "attempt": ctx.attempt}
    if persisted:
        details |= {"results_kept": True, "persisted_status": ctx.artifacts.get_json(A_PERSIST)["status"]}
    return int(
        ctx.store.mark_run(
            ctx.monitor,
            ctx.window.start,
            ctx.window.end,
            "failed",
            error=error[:4000],
            model_version=_model_version(ctx),
            spec_fingerprint=ctx.spec.fingerprint,
            timings=_timings(ctx),
            details=_merged_details(ctx, details, results_kept=persisted),
            keep_results=persisted,
        )
    )


def clear_failure(ctx: RunContext, *, step: str) -> bool:
    """``step`` (after persist) succeeded: if the run is ``failed`` at this very step with its results
    kept, restore the status persist wrote and clear the error. Returns whether it restored."""
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    if run is None or run.status != "failed":
        return False
    d = run.details or {}
    if d.get("failed_step") != step or not d.get("results_kept"):
        return False
    ctx.store.mark_run(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        d.get("persisted_status", "succeeded"),
        error=None,
        timings=_timings(ctx),
        details=_merged_details(
            ctx, {"attempt": ctx.attempt, "recovered_step": step, "failed_attempt": d.get("attempt")}
        ),
        keep_results=True,
    )
    log.info("%s %s: %s succeeded on attempt %s; status restored", ctx.monitor, ctx.window.key, step, ctx.attempt)
    return True


def mark_data_invalid(
    ctx: RunContext, *, failed: list[dict[str, Any]], n_rows: int, alert_delivery_error: str | None = None
) -> int:
    """The batch failed validation: status ``data_invalid`` with the failed expectations in details
    (and ``alert_delivery_error`` when the data alert could not be sent: the window stays
    ``data_invalid`` whatever Slack says)."""
    details: dict[str, Any] = {"failed_expectations": failed, "attempt": ctx.attempt}
    if alert_delivery_error is not None:
        details["alert_delivery_error"] = alert_delivery_error
    names = sorted({str(f.get("expectation_type") or f.get("type") or "?") for f in failed})
    return int(
        ctx.store.mark_run(
            ctx.monitor,
            ctx.window.start,
            ctx.window.end,
            "data_invalid",
            error=f"{len(failed)} expectation(s) failed: {', '.join(names)}",
            model_version=_model_version(ctx),
            spec_fingerprint=ctx.spec.fingerprint,
            n_rows=n_rows,
            timings=_timings(ctx),
            details=_merged_details(ctx, details, results_kept=False),
        )
    )


# ------------------------------------------------------------------------------------------ records


def metric_records(outcome: Mapping[str, Any] | None) -> list[Any]:
    """Outcome rows → MetricRecords. Rows that are not ``ok`` keep their n but store no value (NULL)."""
    from fairmon.store import MetricRecord

    if not outcome:
        return []
    out = []
    for r in outcome.get("rows", []):
        ok = r.get("status", "ok") == "ok"
        out.append(
            MetricRecord(
                str(r["metric"]),
                _f(r.get("value")) if ok else None,
                attribute=str(r.get("attribute") or ""),
                group="" if r.get("group") is None else str(r["group"]),
                ci_low=_f(r.get("ci_low")) if ok else None,
                ci_high=_f(r.get("ci_high")) if ok else None,
                n=r.get("n"),
                n_nan=r.get("n_nan"),
            )
        )
    return out


def evidence_records(ev: Mapping[str, Any] | None) -> list[Any]:
    """RUMIE evidence dict (see :func:`fairmon.pipeline.compute.run_rumie`) → EvidenceRecord."""
    from fairmon.store import EvidenceRecord

    if not ev:
        return []
    known = {
        "method", "dscore", "honest_dscore", "p_value", "key_attributes", "rules", "rules_text", "tree",
        "group_size", "group_fraction", "p_fav_in", "p_fav_out", "n", "group_overlap",
    }
    return [
        EvidenceRecord(
            method=str(ev.get("method", "ie-dt")),
            dscore=_f(ev.get("dscore")),
            honest_dscore=_f(ev.get("honest_dscore")),
            p_value=_f(ev.get("p_value")),
            key_attributes=list(ev.get("key_attributes") or ()),
            rules=ev.get("rules"),
            rules_text=ev.get("rules_text"),
            tree=ev.get("tree"),
            group_size=ev.get("group_size"),
            group_fraction=_f(ev.get("group_fraction")),
            p_fav_in=_f(ev.get("p_fav_in")),
            p_fav_out=_f(ev.get("p_fav_out")),
            n=ev.get("n"),
            group_overlap=_f(ev.get("group_overlap")),
            details={k: v for k, v in ev.items() if k not in known},
        )
    ]


def explanation_records(expl: Mapping[str, Any] | None) -> list[Any]:
    """Rows of :func:`fairmon.pipeline.compute.run_explanations` → ExplanationMetricRecords."""
    from fairmon.store import ExplanationMetricRecord

    if not expl:
        return []
    return [
        ExplanationMetricRecord(
            family=r["family"],
            metric=str(r["metric"]),
            value=_f(r.get("value")),
            explainer=str(r.get("explainer") or ""),
            group=str(r.get("group") or ""),
            p_value=_f(r.get("p_value")),
            n=r.get("n"),
            n_nan=r.get("n_nan"),
            group_stability=r.get("group_stability"),
            details=r.get("details") or {},
        )
        for r in expl.get("rows", [])
    ]


def window_records(ctx: RunContext, *, findings: list[Any] | None = None) -> Any:
    """The window's :class:`~fairmon.store.WindowRecords` from the step artifacts."""
    from fairmon.store import RunRecord, WindowRecords

    a = ctx.artifacts
    outcome = a.get_json("outcome") if a.exists("outcome") else None
    ev = a.get_json("rumie") if a.exists("rumie") else None
    expl = a.get_json("explain") if a.exists("explain") else None
    data_rows = int(a.get_json("step_pull_data")["rows"]) if a.exists("step_pull_data") else None
    pred = a.get_json("step_predict") if a.exists("step_predict") else {}
    labels_pending = bool(outcome and outcome.get("labels_pending")) and ctx.spec.columns.label is not None
    status = "labels_pending" if labels_pending else "succeeded"
    run = RunRecord(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        status=status,  # type: ignore[arg-type]
        model_version=_model_version(ctx),
        spec_fingerprint=ctx.spec.fingerprint,
        n_rows=data_rows,
        timings=_timings(ctx),
        details={
            "attempt": ctx.attempt,
            "prediction_source": pred.get("source"),
            "favorable_rate": pred.get("favorable_rate"),
            "artifacts": ctx.artifacts.base_uri,
        },
    )
    return WindowRecords(
        run,
        metrics=metric_records(outcome),
        evidence=evidence_records(ev),
        explanation_metrics=explanation_records(expl),
        findings=findings or (),
    )


def write_window(ctx: RunContext) -> dict[str, Any]:
    """Persist the window (run + metrics + evidence + explanation rows) in ONE transaction."""
    records = window_records(ctx)
    run_id = int(ctx.store.write_window(records))
    return {
        "run_id": run_id,
        "status": records.run.status,
        "metrics": len(records.metrics),
        "evidence": len(records.evidence),
        "explanation_metrics": len(records.explanation_metrics),
    }


# ------------------------------------------------------------------------------------------ drift


def drift_settings(spec: Any) -> tuple[Any, Any, Any]:
    """``(checks, baseline, policy)`` of :func:`fairmon.drift.decide` for this monitor.

    Delegates to :func:`fairmon.drift.settings_from_spec`, the one mapping from the spec's ``drift``
    and ``alerts`` sections, so the pipeline and the alert-quality benchmark judge windows alike.
    """
    from fairmon.drift.spec import settings_from_spec

    s = settings_from_spec(spec.drift, spec.alerts, tz=_tz(spec))
    return s.checks, s.baseline, s.policy


def _tz(spec: Any) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(spec.schedule.timezone)


def _summary_from_store(ctx: RunContext, run: Any) -> Any:
    from fairmon.drift import WindowSummary

    store = ctx.store
    metrics = [
        {
            "metric": m.metric,
            "attribute": m.attribute,
            "group": m.group if m.group != "" else None,
            "value": m.value,
            "ci_low": m.ci_low,
            "ci_high": m.ci_high,
            "n": m.n,
            "status": "ok",
        }
        for m in store.metrics_of_run(run.run_id)
        if m.value is not None
    ]
    evs = [e for e in store.evidence_of_run(run.run_id)]
    method = ctx.spec.rumie.method
    ev = next((e for e in evs if e.method == method), evs[0] if evs else None)
    evidence = None
    if ev is not None:
        evidence = {
            **dict(ev.details),
            "method": ev.method,
            "dscore": ev.dscore,
            "honest_dscore": ev.honest_dscore,
            "p_value": ev.p_value,
            "key_attributes": list(ev.key_attributes),
            "rules": ev.rules_text or ev.rules,
            "group_size": ev.group_size,
            "group_fraction": ev.group_fraction,
            "p_fav_in": ev.p_fav_in,
            "p_fav_out": ev.p_fav_out,
        }
    gesd = {  # per sensitive attribute, as the window computed it
        x.gesd_attribute: {"value": x.value, "p_value": x.p_value, "groups": x.group_stability}
        for x in store.explanation_metrics_of_run(run.run_id)
        if x.gesd_attribute is not None
    }
    overlap = ev.group_overlap if ev is not None else None
    return WindowSummary(
        monitor=ctx.monitor,
        window_start=run.window_start,
        window_end=run.window_end,
        metrics=metrics,
        evidence=evidence,
        gesd=gesd or None,
        group_overlap=overlap,
        model_version=run.model_version,
        # the store keeps the bounds, not their level: earlier windows were computed at the spec's level
        ci_level=float(ctx.spec.outcome.confidence),
    )


#: most earlier windows one drift decision loads (a drift open longer than this loses its baseline)
MAX_HISTORY_WINDOWS = 400


def history_summaries(
    ctx: RunContext, open_since: Mapping[str, datetime] | None = None
) -> tuple[list[Any], str | None]:
    """Completed windows that start before this one (the drift history), oldest first, and why the
    history is short (None when it is not).

    Enough windows for the baseline and for replaying persistence/cooldown up to this window —
    ``trailing_n + persistence_n + cooldown_windows + 2`` — counted back from the start of the oldest
    drift still open (``open_since``, :func:`open_drift_since`), not from this window: the trailing
    baseline of a drifting series is its windows before the drift (:mod:`fairmon.drift.policy`), and
    the replay can only tell them apart when it sees the drift begin. At most
    :data:`MAX_HISTORY_WINDOWS`; when that cap cuts the history after the drift began, the drifted
    windows end up as the baseline and the reason says so.
    """
    from fairmon.store.records import RESULT_STATUSES

    _, baseline, policy = drift_settings(ctx.spec)
    lead = int(baseline.trailing_n + policy.persistence_n + policy.cooldown_windows + 2)
    n, short = lead, None
    if open_since:
        oldest = min(open_since.values())
        drifted = ctx.store.runs(ctx.monitor, since=oldest, until=ctx.window.start, statuses=RESULT_STATUSES)
        n = lead + len(drifted)
        if n > MAX_HISTORY_WINDOWS:
            short = (f"drift history capped at {MAX_HISTORY_WINDOWS} windows: the oldest open drift of "
                     f"{ctx.monitor} began {oldest.isoformat()}, {len(drifted)} completed windows ago, and "
                     f"{lead} more before it are needed for its trailing baseline; the baseline of the "
                     f"drifting series now holds drifted windows, so the significance test may stop "
                     f"firing although the drift goes on (the allowed-range rules are unaffected)")
            n = MAX_HISTORY_WINDOWS
    runs = ctx.store.completed_runs_before(ctx.monitor, ctx.window.start, n)
    return [_summary_from_store(ctx, r) for r in runs if r.window_end <= ctx.window.start], short


def reference_summary(ctx: RunContext, baseline: Any) -> Any:
    """The reference window, read apart from the trailing history so that it never drops out of it.

    Which window it is comes from the schedule — the scheduled window containing the reference date
    (:func:`fairmon.drift.reference_window` over the windows around it) — not from what happens to be
    stored, so it is the same window for every decision. Its stored run is read: this window itself
    when it is the reference; one without stored results (failed, not run yet, ...) comes back without
    results and with that status, so the decision can say why there is no baseline. None when no
    scheduled window touches the date.
    """
    from fairmon.drift import WindowSummary, reference_window
    from fairmon.drift.policy import reference_day
    from fairmon.pipeline.runner import window_for, windows_between

    day_start, day_end = reference_day(baseline)
    # the window of the last tick at or before the date's midnight may span it; later ticks start in it
    scheduled = [window_for(ctx.spec, day_start), *windows_between(ctx.spec, day_start, day_end)]
    w = reference_window([WindowSummary(ctx.monitor, x.start, x.end) for x in scheduled], baseline)
    if w is None:
        return None
    if (w.window_start, w.window_end) == (ctx.window.start, ctx.window.end):
        return current_summary(ctx)
    from fairmon.store.records import RESULT_STATUSES

    run = ctx.store.get_run(ctx.monitor, w.window_start, w.window_end)
    if run is None:
        return WindowSummary(ctx.monitor, w.window_start, w.window_end, status="not run yet")
    if run.status in RESULT_STATUSES:  # labels_pending too: everything but the label metrics is there
        return _summary_from_store(ctx, run)
    return WindowSummary(ctx.monitor, w.window_start, w.window_end, status=run.status)


def open_drift_since(ctx: RunContext) -> dict[str, Any]:
    """Finding key → ``since`` of the drifts still open at the latest decision before this window.

    A drift can outlast the history the replay sees; its start is the one recorded when it opened.
    """
    from fairmon.drift import finding_key

    return {
        finding_key(f.kind, f.metric, f.group): f.since
        for f in ctx.store.open_findings(ctx.monitor, before=ctx.window.start)
        if f.since is not None
    }


def current_summary(ctx: RunContext) -> Any:
    from fairmon.drift import WindowSummary

    a = ctx.artifacts
    ev = a.get_json("rumie") if a.exists("rumie") else None
    expl = a.get_json("explain") if a.exists("explain") else None
    return WindowSummary.build(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        outcome=a.get_json("outcome") if a.exists("outcome") else None,
        evidence=ev,
        gesd=(expl or {}).get("gesd"),
        group_overlap=(ev or {}).get("group_overlap"),
        model_version=_model_version(ctx),
    )


def finding_record(f: Any) -> Any:
    """A drift :class:`~fairmon.drift.Finding` → the store's FindingRecord."""
    from fairmon.store import FindingRecord

    return FindingRecord.from_finding(f)


def decide_and_store_findings(ctx: RunContext) -> dict[str, Any]:
    """Judge this window against earlier completed windows; store its findings (replacing).

    The result's ``baseline`` says what the window was compared with
    (:func:`fairmon.drift.baseline_note`), with ``history_capped`` (a reason) when a drift has been
    open so long that :data:`MAX_HISTORY_WINDOWS` cut its pre-drift baseline out of the history. A
    reference baseline without a completed reference window (not run yet, failed, ...) does not fail
    the window: its results stay stored, rules that need no baseline still alert, the significance
    tests are silent, and the result and the log say so.
    """
    from fairmon.drift import baseline_note, decide

    checks, baseline, policy = drift_settings(ctx.spec)
    open_since = open_drift_since(ctx)
    history, short = history_summaries(ctx, open_since if baseline.mode == "trailing" else None)
    current = current_summary(ctx)
    reference = reference_summary(ctx, baseline) if baseline.mode == "reference" else None
    findings = decide(current, history, checks=checks, baseline=baseline, policy=policy, reference=reference,
                      open_since=open_since)
    note = baseline_note(current, baseline, reference=reference, history=history)
    if note["status"] == "missing":
        log.warning("%s %s: %s", ctx.monitor, ctx.window.key, note["reason"])
    if short is not None:
        note = {**note, "history_capped": short}
        log.warning("%s %s: %s", ctx.monitor, ctx.window.key, short)
    run_id = int(ctx.artifacts.get_json("persist")["run_id"])
    ctx.store.write_findings(run_id, [finding_record(f) for f in findings])
    dicts = [f.to_dict() for f in findings]
    open_ = [d for d in dicts if d["status"] in ("open", "ongoing")]
    return {
        "run_id": run_id,
        "history": len(history),
        "baseline": note,
        "findings": dicts,
        "open": len(open_),
        "notify": sum(1 for d in dicts if d["notify"]),
        "drifted": any(d["status"] == "open" and d["notify"] for d in dicts),
    }


# ------------------------------------------------------------------------------------------ FEU


def save_feu(ctx: RunContext, result: Mapping[str, Any]) -> int:
    """Store the FEU candidates (Pareto set flagged, one selected) under this window's run."""
    from fairmon.store import FEUCandidateRecord

    run_id = int(ctx.artifacts.get_json("persist")["run_id"])
    selected = result.get("selected")
    rows = [
        FEUCandidateRecord(
            candidate_index=int(c["index"]),
            hyperparameters=c.get("hyperparameters") or {},
            metrics=c.get("metrics") or {},
            pareto=bool(c.get("pareto")),
            selected=selected is not None and int(c["index"]) == int(selected),
            registry_version=c.get("registry_version"),
        )
        for c in result.get("candidates", [])
    ]
    ctx.store.save_feu_candidates(run_id, rows)
    return len(rows)


# ------------------------------------------------------------------------------------------ alerts


def _channel(ctx: RunContext) -> str | None:
    from fairmon.config import resolve_runtime

    return resolve_runtime(ctx.spec).slack_channel


def _route(ctx: RunContext) -> tuple[str | None, str | None]:
    """``(channel, None)`` where this window's messages go, or ``(None, reason)`` when none is queued.

    The one gate of every message kind (fairness findings, data validation, FEU follow-up):
    ``alerts.enabled: false`` keeps the Slack messages out of the outbox while runs, findings and
    candidates are still stored.
    """
    if not ctx.spec.alerts.enabled:
        return None, "alerts disabled"
    channel = _channel(ctx)
    if channel is None:
        log.warning("monitor %s has no Slack channel (alerts.slack_channel / FAIRMON_SLACK_CHANNEL)", ctx.monitor)
        return None, "no channel"
    return channel, None


def _alert_context(ctx: RunContext) -> Any:
    from fairmon.alerts.render import AlertContext

    a = ctx.artifacts
    ev = a.get_json("rumie") if a.exists("rumie") else None
    expl = a.get_json("explain") if a.exists("explain") else None
    return AlertContext(
        monitor=ctx.monitor,
        window_start=ctx.window.start,
        window_end=ctx.window.end,
        model_version=_model_version(ctx),
        report_base_url=ctx.spec.alerts.report_base_url,
        evidence=ev,
        gesd=(expl or {}).get("gesd"),
    )


#: how many queued alerts a "no token" note counts at most
_MAX_QUEUED = 10_000


def _outbox(ctx: RunContext) -> Any:
    """The outbox over the store, with a Slack sender only when notifying and a token exists."""
    from fairmon.alerts.outbox import Outbox

    sender = None
    token = ctx.token()
    if ctx.notify and token:
        from fairmon.alerts.slack import SlackSender

        sender = SlackSender(token)
    return Outbox(ctx.store, sender)


def _deliver(ctx: RunContext, outbox: Any) -> dict[str, Any]:
    """Deliver this monitor's queued alerts (never another monitor's: each has its own token/channel).

    Notifying without a token sends nothing; the result's ``delivery`` says so and how many alerts
    stay queued, and a warning is logged, rather than the alerts silently waiting.
    """
    if outbox.sender is None:
        if not ctx.notify:
            return {"delivered": False}
        from fairmon.alerts.slack import TOKEN_ENV

        queued = len(ctx.store.outbox_pending(_MAX_QUEUED, monitor=ctx.monitor))
        note = f"no token: {TOKEN_ENV} unset; {queued} alert(s) stay queued"
        if queued:
            log.warning("%s %s: Slack delivery skipped, %s", ctx.monitor, ctx.window.key, note)
        return {"delivered": False, "delivery": note}
    rep = outbox.deliver(monitor=ctx.monitor)
    return {
        "delivered": True,
        "sent": len(rep.sent),
        "recovered": len(rep.recovered),
        "deferred": len(rep.deferred),
        "failed": len(rep.failed),
        "delivery_error": rep.error,
    }


def rendered_alerts(
    ctx: RunContext, *, kind: str | None = None, feu: bool | None = None
) -> list[dict[str, Any]]:
    """The window's alerts in the outbox (what was or would be posted), oldest first.

    ``feu`` keeps only (True) or leaves out (False) the FEU follow-ups, which share the ``fairness``
    kind with the findings' alerts: a re-run window's alert step must not list the follow-up an
    earlier run posted as if it were one of its alerts."""
    out = []
    for rec in ctx.store.alerts(ctx.monitor, since=ctx.window.start):
        if rec.window_start != ctx.window.start or (kind is not None and rec.kind != kind):
            continue
        meta = ((rec.payload or {}).get("metadata") or {}).get("event_payload") or {}
        if feu is not None and (meta.get("kind") == "feu") != feu:
            continue
        out.append(
            {
                "fingerprint": rec.fingerprint,
                "kind": rec.kind,
                "channel": rec.channel,
                "severity": rec.severity,
                "state": rec.state,
                "text": (rec.payload or {}).get("text", ""),
                "thread_of": (rec.payload or {}).get("thread_of"),
            }
        )
    return out


def data_alert(ctx: RunContext, *, failed: list[dict[str, Any]]) -> dict[str, Any]:
    """ONE data-validation alert for the window (outbox-deduplicated; sent when notifying)."""
    channel, reason = _route(ctx)
    if channel is None:
        return {"queued": None, "reason": reason}
    outbox = _outbox(ctx)
    run = ctx.store.get_run(ctx.monitor, ctx.window.start, ctx.window.end)
    fp = outbox.notify_data_validation(
        failed, _alert_context(ctx), channel=channel, backfill=not ctx.notify, notify=ctx.notify,
        run_id=None if run is None else run.run_id,
    )
    from fairmon.errors import AlertDeliveryError

    try:
        delivery = _deliver(ctx, outbox)
    except AlertDeliveryError as exc:  # Slack's answer must not change what the window is
        log.error("%s %s: the data alert was not delivered (the window stays data_invalid): %s",
                  ctx.monitor, ctx.window.key, exc)
        delivery = {"delivered": False, "delivery_error": str(exc)}
    return {"queued": fp, **delivery}


def send_alerts(ctx: RunContext) -> dict[str, Any]:
    """Enqueue this window's notifiable findings (one message per finding and channel) and deliver."""
    from fairmon.drift import Finding

    drift_out = ctx.artifacts.get_json("drift")
    findings = [Finding.from_dict(d) for d in drift_out["findings"]]
    channel, reason = _route(ctx)
    if channel is None:
        return {"queued": 0, "reason": reason, "rendered": []}
    outbox = _outbox(ctx)
    queued = outbox.notify_findings(
        findings,
        _alert_context(ctx),
        channels={channel: ctx.spec.alerts.min_severity},
        backfill=not ctx.notify,
        notify=ctx.notify,
        run_id=int(drift_out["run_id"]),
    )
    delivery = _deliver(ctx, outbox)
    return {"queued": len(queued), **delivery, "rendered": rendered_alerts(ctx, kind="fairness", feu=False)}


def send_followup(ctx: RunContext, feu_result: Mapping[str, Any], *, requested: bool = False) -> dict[str, Any]:
    """Post the FEU candidates once per window: in the thread of the window's drift alert, or — FEU
    requested at a window without an alerted drift (``requested``) — as a message of its own."""
    from fairmon.drift import Finding

    drift_out = ctx.artifacts.get_json("drift")
    opened = [d for d in drift_out["findings"] if d["status"] == "open" and d["notify"]]
    if not ctx.notify:  # a backfill without --notify stores the candidates but posts nothing
        return {"status": "skipped", "reason": "not notifying (backfill)"}
    channel, reason = _route(ctx)
    if channel is None:
        return {"status": "skipped", "reason": reason}
    if not opened and not requested:
        return {"status": "skipped", "reason": "no alerted drift finding"}
    parent = (Finding.from_dict(max(opened, key=lambda d: ("info", "warning", "critical").index(d["severity"])))
              if opened else None)
    outbox = _outbox(ctx)
    fp = outbox.notify_feu(
        feu_result, _alert_context(ctx), parent_finding=parent, channel=channel, run_id=int(drift_out["run_id"])
    )
    delivery = _deliver(ctx, outbox)
    posted = rendered_alerts(ctx, feu=True)
    return {"status": "queued" if fp else "already_queued", "fingerprint": fp, "threaded": parent is not None,
            **delivery, "rendered": posted}
