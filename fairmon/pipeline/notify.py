"""The notify steps' side of a window: the alert context from the window's typed results, the fairness
alerts, the data alert and the FEU follow-up, routed and delivered by :mod:`fairmon.alerts.dispatch`.

A Slack configuration error (bad token or channel) never changes what a computed window is: the alert
stays pending in the outbox and the error goes to the run's ``details.alert_delivery_error``
(:func:`fairmon.pipeline.runs.record_alert_error`), as for the data alert.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairmon.alerts import dispatch
from fairmon.alerts.diagnosis import cause_line, why_lines
from fairmon.alerts.history import GroupHistory, group_history
from fairmon.alerts.render import AlertContext
from fairmon.config import resolve_runtime
from fairmon.drift.findings import Finding
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.records import RumieOutput, previous_evidence, read_explain, read_rumie
from fairmon.pipeline.runs import model_version, record_alert_error
from fairmon.pipeline.table import A_DIAGNOSE, A_DRIFT, A_PERSIST
from fairmon.results import decode

__all__ = ["alert_context", "window_findings", "send_alerts", "send_followup", "data_alert", "rendered_alerts"]

rendered_alerts = dispatch.rendered_alerts


def _diagnosis(ctx: RunContext) -> tuple[tuple[str, ...], str | None]:
    """The window's "why disfavored" lines and "model or data?" line from the stored diagnosis rows
    (none before the diagnose step has run, e.g. for a data-validation alert)."""
    a = ctx.artifacts
    if not (a.exists(A_DIAGNOSE) and a.exists(A_PERSIST)):
        return (), None
    run_id = int(a.get_json(A_PERSIST)["run_id"])
    return why_lines(ctx.store.attribution_gaps_of_run(run_id)), cause_line(ctx.store.rescores_of_run(run_id))


def _window_group_history(ctx: RunContext, rumie: RumieOutput | None) -> GroupHistory | None:
    """How this window's RUMIE group relates to the previous window's (:mod:`fairmon.alerts.history`:
    Jaccard of the two rule sets on this window's rows, the rumie step's ``group_overlap``)."""
    if rumie is None:
        return None
    prev = previous_evidence(ctx)
    return group_history(rumie.evidence, prev[0] if prev else None, overlap=rumie.group_overlap,
                         min_jaccard=ctx.spec.drift.rumie.min_jaccard, previous_window=prev[1] if prev else None)


def alert_context(ctx: RunContext) -> AlertContext:
    """What every message of this window shows: monitor, window, model, report link (the runtime's report
    base URL: ``FAIRMON_REPORT_BASE_URL``, else the spec's), evidence and its history, GESD, why the group
    is disfavored and whether the change follows the model or the data."""
    rumie = read_rumie(ctx)
    expl = read_explain(ctx)
    why, cause = _diagnosis(ctx)
    return AlertContext(
        report_base_url=resolve_runtime(ctx.spec).report_base_url,
        history=_window_group_history(ctx, rumie),
        monitor=ctx.monitor,
        window_start=ctx.window.start,
        window_end=ctx.window.end,
        model_version=model_version(ctx),
        evidence=rumie.evidence if rumie is not None else None,
        gesd=(expl or {}).get("gesd"),
        why=why,
        cause=cause,
    )


def window_findings(ctx: RunContext) -> tuple[int, list[Finding]]:
    """The drift step's run id and findings (typed)."""
    out = ctx.artifacts.get_json(A_DRIFT)
    return int(out["run_id"]), [decode("finding", d) for d in out["findings"]]


def _keep_error(ctx: RunContext, result: dict[str, Any]) -> dict[str, Any]:
    if result.get("configuration_error"):
        record_alert_error(ctx, str(result["delivery_error"]))
    return result


def data_alert(ctx: RunContext, *, failed: list[dict[str, Any]]) -> dict[str, Any]:
    """ONE data-validation alert for the window (see :func:`fairmon.alerts.dispatch.data_alert`)."""
    return dispatch.data_alert(ctx, alert_context(ctx), failed=failed)


def send_alerts(ctx: RunContext) -> dict[str, Any]:
    """Enqueue this window's notifiable findings (one message per window and channel) and deliver."""
    run_id, findings = window_findings(ctx)
    return _keep_error(ctx, dispatch.send_alerts(ctx, alert_context(ctx), findings, run_id=run_id))


def send_followup(ctx: RunContext, feu_result: Mapping[str, Any], *, requested: bool = False) -> dict[str, Any]:
    """Post the FEU candidates once per window (see :func:`fairmon.alerts.dispatch.send_followup`)."""
    run_id, findings = window_findings(ctx)
    return _keep_error(ctx, dispatch.send_followup(ctx, alert_context(ctx), feu_result, findings, run_id=run_id,
                                                   requested=requested))
