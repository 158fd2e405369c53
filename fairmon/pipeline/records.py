"""The window's typed results → the store's records, in one place.

Reads the step artifacts through the codec (:mod:`fairmon.results`) and maps each result to its
record: outcome rows → :class:`~fairmon.store.MetricRecord`, RUMIE evidence →
:class:`~fairmon.store.EvidenceRecord` (:func:`fairmon.results.evidence_record`), explanation rows →
:class:`~fairmon.store.ExplanationMetricRecord`, drift findings → :class:`~fairmon.store.FindingRecord`,
FEU candidates → :class:`~fairmon.store.FEUCandidateRecord`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fairmon._numbers import finite_float
from fairmon.drift.findings import Finding
from fairmon.fairness.outcome import OutcomeResult
from fairmon.fairness.rumie import Evidence
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.runs import model_version, timings
from fairmon.pipeline.table import A_EXPLAIN, A_OUTCOME, A_PERSIST, A_RUMIE, step_after
from fairmon.results import decode, encode, evidence_from_record, evidence_record, outcome_from_dict
from fairmon.store.records import (
    NEXT_STEP,
    EvidenceRecord,
    ExplanationMetricRecord,
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RunRecord,
    WindowRecords,
)

__all__ = [
    "RumieOutput",
    "previous_evidence",
    "read_outcome",
    "read_rumie",
    "read_explain",
    "metric_records",
    "explanation_records",
    "finding_records",
    "feu_records",
    "window_records",
    "write_window",
    "save_feu",
]


def previous_evidence(ctx: RunContext) -> tuple[Evidence, datetime] | None:
    """The RUMIE evidence (the spec's mining method) of the previous completed window and its start.

    What the rumie step compares its group with and what the alert's group history shows (None: no
    completed window before this one, or none with the spec's method).
    """
    runs = ctx.store.completed_runs_before(ctx.monitor, ctx.window.start, 1)
    if not runs:
        return None
    for rec in ctx.store.evidence_of_run(int(runs[-1].run_id or 0)):
        if rec.method == ctx.spec.rumie.method:
            return evidence_from_record(rec), runs[-1].window_start
    return None


@dataclass(frozen=True)
class RumieOutput:
    """What the rumie step hands on: the window's :class:`Evidence` and the Jaccard overlap of its
    group with the previous completed window's rules applied to this window's rows (None: unknown)."""

    evidence: Evidence
    group_overlap: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The artifact form (the evidence through the codec)."""
        return {"evidence": encode(self.evidence), "group_overlap": self.group_overlap}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RumieOutput:
        """The inverse of :meth:`to_dict`."""
        return cls(decode("evidence", d["evidence"]), d.get("group_overlap"))


def read_outcome(ctx: RunContext) -> OutcomeResult | None:
    """The outcome step's result (None when outcome fairness is off or did not run)."""
    a = ctx.artifacts
    raw = a.get_json(A_OUTCOME) if a.exists(A_OUTCOME) else None
    return None if raw is None else outcome_from_dict(raw)


def read_rumie(ctx: RunContext) -> RumieOutput | None:
    """The rumie step's result (None when RUMIE is off or did not run)."""
    a = ctx.artifacts
    raw = a.get_json(A_RUMIE) if a.exists(A_RUMIE) else None
    return None if raw is None else RumieOutput.from_dict(raw)


def read_explain(ctx: RunContext) -> dict[str, Any] | None:
    """The explain step's result: ``{"rows": [...], "gesd": {attribute: GESD dict} | None}`` or None."""
    a = ctx.artifacts
    raw = a.get_json(A_EXPLAIN) if a.exists(A_EXPLAIN) else None
    return None if raw is None else dict(raw)


def metric_records(outcome: OutcomeResult | None) -> list[MetricRecord]:
    """Outcome rows → MetricRecords. Rows that are not ``ok`` keep their n but store no value (NULL)."""
    if outcome is None:
        return []
    out = []
    for r in outcome.rows:
        ok = r.status == "ok"
        out.append(
            MetricRecord(
                r.metric,
                finite_float(r.value) if ok else None,
                attribute=r.attribute or "",
                group="" if r.group is None else str(r.group),
                ci_low=finite_float(r.ci_low) if ok else None,
                ci_high=finite_float(r.ci_high) if ok else None,
                n=r.n,
                n_nan=r.n_nan,
            )
        )
    return out


def evidence_records(rumie: RumieOutput | None) -> list[EvidenceRecord]:
    """The window's RUMIE evidence → its one EvidenceRecord (none without RUMIE)."""
    if rumie is None:
        return []
    return [evidence_record(rumie.evidence, group_overlap=rumie.group_overlap)]


def explanation_records(expl: Mapping[str, Any] | None) -> list[ExplanationMetricRecord]:
    """Rows of :func:`fairmon.pipeline.compute.run_explanations` → ExplanationMetricRecords."""
    if not expl:
        return []
    return [
        ExplanationMetricRecord(
            family=r["family"],
            metric=str(r["metric"]),
            value=finite_float(r.get("value")),
            explainer=str(r.get("explainer") or ""),
            group=str(r.get("group") or ""),
            p_value=finite_float(r.get("p_value")),
            n=r.get("n"),
            n_nan=r.get("n_nan"),
            group_stability=r.get("group_stability"),
            details=r.get("details") or {},
        )
        for r in expl.get("rows", [])
    ]


def finding_records(findings: Sequence[Finding]) -> list[FindingRecord]:
    """Drift findings → FindingRecords."""
    return [FindingRecord.from_finding(f) for f in findings]


def window_records(ctx: RunContext, *, findings: Sequence[Finding] = ()) -> WindowRecords:
    """The window's :class:`~fairmon.store.WindowRecords` from the step artifacts."""
    a = ctx.artifacts
    outcome = read_outcome(ctx)
    data_rows = int(a.get_json("step_pull_data")["rows"]) if a.exists("step_pull_data") else None
    pred = a.get_json("step_predict") if a.exists("step_predict") else {}
    labels_pending = bool(outcome is not None and outcome.labels_pending) and ctx.spec.columns.label is not None
    run = RunRecord(
        ctx.monitor,
        ctx.window.start,
        ctx.window.end,
        status="labels_pending" if labels_pending else "succeeded",
        model_version=model_version(ctx),
        spec_fingerprint=ctx.spec.fingerprint,
        n_rows=data_rows,
        timings=timings(ctx),
        details={
            "attempt": ctx.attempt,
            "prediction_source": pred.get("source"),
            "favorable_rate": pred.get("favorable_rate"),
            "artifacts": ctx.artifacts.base_uri,
            # the window is stored, its drift, alerts and FEU still to come: a process dying before they
            # finish leaves a stale window for the monitor's next run, not a silent "succeeded"
            NEXT_STEP: step_after("persist"),
        },
        attempt_id=ctx.attempt_id,
    )
    return WindowRecords(
        run,
        metrics=metric_records(outcome),
        evidence=evidence_records(read_rumie(ctx)),
        explanation_metrics=explanation_records(read_explain(ctx)),
        findings=finding_records(findings),
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


def feu_records(result: Mapping[str, Any]) -> list[FEUCandidateRecord]:
    """The FEU step's candidates (Pareto set flagged, one selected) → FEUCandidateRecords."""
    selected = result.get("selected")
    return [
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


def save_feu(ctx: RunContext, result: Mapping[str, Any]) -> int:
    """Store the FEU candidates and their baselines under this window's run; returns how many candidates."""
    run_id = int(ctx.artifacts.get_json(A_PERSIST)["run_id"])
    rows = feu_records(result)
    baselines = result.get("baselines")
    if baselines and result.get("target") is not None:  # what DP compares: the attribute, or the alert's group
        baselines = {name: {**m, "target": result["target"]} for name, m in baselines.items()}
    ctx.store.save_feu_candidates(run_id, rows, baselines=baselines, attempt_id=ctx.attempt_id)
    return len(rows)
