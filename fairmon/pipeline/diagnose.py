"""The diagnose step's side of a window (issue 19): why the group is disfavored, and model or data?

* :func:`attribution_gaps` — for the window's RUMIE group (its reported rules applied to the window's
  rows) and for the declared group with the lowest favourable rate (``selection_rate`` among the
  single protected attributes' groups of the outcome step), the mean attribution of P(favourable)
  per feature inside minus outside
  (:func:`fairmon.explain.attribution_gap.attribution_gap`; ``explanations.attribution_gap`` sizes it,
  the background is ``explanations.background_size`` reference rows, ``explanations.random_state``
  seeds it; with ``explanations.budget_cpu_s`` the sizes fitted to the budget,
  :func:`fairmon.pipeline.budget.explanations_within_budget`).
* :func:`rescores` — when a finding fired (``open`` / ``ongoing``) and the registry holds an earlier
  production version than the window's, the window is scored with that version and each fired
  metric computed under both (:mod:`fairmon.fairness.rescore`); ``alerts.compare_previous_model``
  turns it off. Findings of other series (GESD) are stored with status ``skipped`` and the reason.

Expected gaps in the inputs (no RUMIE group, a group too small, an earlier version that cannot be
loaded) are stored as rows with their status and reason; they never fail the window, whose results
are already stored, and never produce a number that was not computed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.drift.findings import Finding
from fairmon.errors import FairmonError
from fairmon.explain.attribution_gap import GroupAttributionGap, attribution_gap
from fairmon.fairness.outcome import DEFAULT_METRICS
from fairmon.fairness.rescore import RUMIE_METRICS, Rescore, rescore_outcome, rescore_rules, verdict
from fairmon.pipeline.budget import explanations_within_budget
from fairmon.pipeline.checks import check_favorable_class, favorable_from_scores
from fairmon.pipeline.compute import reference_frame
from fairmon.pipeline.context import RunContext, load_model, model_name, model_registry, window_model
from fairmon.pipeline.frames import predict_proba as chunked_proba
from fairmon.pipeline.records import read_outcome, read_rumie
from fairmon.pipeline.table import A_DATA, A_PREDICTIONS, A_SNAPSHOT
from fairmon.registry.model import Model
from fairmon.registry.registry import SnapshotInfo
from fairmon.rules import membership
from fairmon.store import AttributionGapRecord, RescoreRecord

log = logging.getLogger(__name__)

__all__ = [
    "FIRED",
    "attribution_gaps",
    "rescores",
    "previous_version",
    "gap_record",
    "rescore_record",
    "fired_findings",
]

#: finding statuses that count as "fired" for the model-or-data rescoring
FIRED = ("open", "ongoing")


def _scores_with_model(ctx: RunContext) -> bool:
    cols = ctx.spec.columns
    return cols.decision is None and cols.score is None


def _rumie_group(ctx: RunContext, frame: pd.DataFrame) -> tuple[str, np.ndarray] | None:
    out = read_rumie(ctx)
    if out is None or out.evidence.status != "ok" or not out.evidence.rule_conditions:
        return None
    ev = out.evidence
    label = ev.rule or " OR ".join(ev.rules)
    return label, membership(ev.rule_conditions, frame, on_missing="false")


def _declared_group(ctx: RunContext, frame: pd.DataFrame) -> tuple[str, np.ndarray] | None:
    """The single-attribute declared group with the lowest favourable rate (``selection_rate``)."""
    outcome = read_outcome(ctx)
    if outcome is None:
        return None
    rows = [r for r in outcome.rows if r.metric == "selection_rate" and r.status == "ok" and r.group
            and "&" not in r.attribute and r.attribute in frame.columns and np.isfinite(r.value)]
    if not rows:
        return None
    worst = min(rows, key=lambda r: (float(r.value), r.attribute, str(r.group)))
    labels = frame[worst.attribute].astype(object).map(str).to_numpy(dtype=object)
    return f"{worst.attribute}={worst.group}", labels == str(worst.group)


def _favorable_class(ctx: RunContext) -> int:
    """The model class whose probability is P(favourable): a score threshold with ``direction: below``
    makes a low P(class 1) favourable (class 0); otherwise ``favorable.class`` (default 1)."""
    fav = ctx.spec.favorable
    if fav.score_threshold is not None:
        return 0 if fav.direction == "below" else 1
    return 0 if fav.class_ is not None and str(fav.class_) == "0" else 1


def attribution_gaps(ctx: RunContext) -> list[GroupAttributionGap]:
    """The window's attribution gaps: the RUMIE group's, then the most disadvantaged declared group's."""
    e = ctx.spec.explanations
    g = e.attribution_gap
    if not (e.enabled and g.enabled):
        return []
    frame = ctx.artifacts.get_frame(A_DATA).reset_index(drop=True)
    fav = ctx.artifacts.get_arrays(A_PREDICTIONS)["favorable"]
    groups = [(kind, found) for kind, found in (("rumie", _rumie_group(ctx, frame)),
                                                ("declared", _declared_group(ctx, frame))) if found is not None]
    if not groups:
        return []
    model = window_model(ctx)
    e = explanations_within_budget(ctx.spec, model, frame)  # the spec's sizes unless a budget is set
    g = e.attribution_gap
    features = list(ctx.spec.columns.features)
    ref = reference_frame(ctx, frame)
    background = ref[features].sample(n=min(e.background_size, len(ref)), random_state=e.random_state)
    fav_class = _favorable_class(ctx)
    params: dict[str, Any] = {}
    if g.explainer in ("kernelshap", "kernelshap-lib"):
        params["n_samples"] = e.kernelshap_samples
    elif g.explainer in ("lime", "lime-lib"):
        params["n_samples"] = e.lime_samples
    out = []
    for kind, (label, mask) in groups:
        out.append(attribution_gap(
            model, frame[features], mask, background=background, group_kind=kind, group=label,  # type: ignore[arg-type]
            sample_size=g.sample_size, n_bootstrap=g.bootstrap, confidence=g.confidence, explainer=g.explainer,
            explainer_params=params, favorable_class=fav_class,
            favorable=fav, random_state=e.random_state, device=ctx.device,
        ))
    return out


def fired_findings(findings: Sequence[Finding]) -> list[Finding]:
    """The findings that fired at this window (``open`` / ``ongoing``; not data-validation events)."""
    return [f for f in findings if f.status in FIRED and f.kind != "data_validation"]


def previous_version(ctx: RunContext) -> SnapshotInfo | None:
    """The newest production version older than the window's (valid at the window start), or None."""
    snap = ctx.artifacts.get_json(A_SNAPSHOT)
    registry = model_registry(ctx)
    current = registry.resolve(snap["name"], snap["version"])
    start = ctx.window.start.isoformat()
    older = [i for i in registry.versions(model_name(ctx)) if i.status == "production" and i.number < current.number
             and (i.valid_from is None or i.valid_from <= start)]
    return max(older, key=lambda i: i.number) if older else None


def _favorable_of(ctx: RunContext, model: Model, frame: pd.DataFrame, what: str) -> np.ndarray:
    """Every row's favourable indicator under ``model`` (the predict step's rule for a scored model)."""
    fav = ctx.spec.favorable
    if fav.score_threshold is None:
        check_favorable_class(fav.class_, model.classes, what=what)
    score = chunked_proba(model, frame[list(ctx.spec.columns.features)])[:, 1]
    return favorable_from_scores(fav, score, (score >= model.threshold).astype(int))


def rescores(ctx: RunContext, findings: Sequence[Finding]) -> tuple[list[Rescore], str]:
    """Each fired finding's metric under the earlier production version: ``(rescores, why_none)``."""
    fired = fired_findings(findings)
    if not fired:
        return [], "no finding fired"
    if not ctx.spec.alerts.compare_previous_model:
        return [], "alerts.compare_previous_model is off"
    if not _scores_with_model(ctx):
        return [], "the monitor reads logged decisions or scores: no model version to compare"
    old_info = previous_version(ctx)
    if old_info is None:
        return [], "the registry holds no earlier production version"
    new_version = str(ctx.artifacts.get_json(A_SNAPSHOT)["version"])
    old_version = old_info.version
    frame = ctx.artifacts.get_frame(A_DATA).reset_index(drop=True)
    pred = ctx.artifacts.get_arrays(A_PREDICTIONS)
    fav_new = np.asarray(pred["favorable"], dtype=float)
    labels = pred["label_favorable"]
    y_true = None if ctx.spec.columns.label is None or np.all(np.isnan(labels)) else labels

    def row(f: Finding, **kw: Any) -> Rescore:
        return Rescore(kind=f.kind, metric=f.metric, group=f.group, old_version=old_version,
                       new_version=new_version, value_fired=f.value, baseline=f.baseline, **kw)

    try:
        old_model = load_model(ctx, old_info.name, old_info.version)
        fav_old = _favorable_of(ctx, old_model, frame, f"model {old_info.name}:{old_info.version}")
    except FairmonError as exc:  # an earlier version that cannot be loaded or scored: said, not guessed
        log.warning("%s %s: earlier version %s not scored: %s", ctx.monitor, ctx.window.key, old_info.version, exc)
        reason = f"error: {type(exc).__name__}: {exc}"
        return [row(f, value_old=None, value_new=None, status="error", reason=reason) for f in fired], ""
    o = ctx.spec.outcome
    rumie = read_rumie(ctx)
    boot = {"n_bootstrap": o.bootstrap, "confidence": o.confidence, "random_state": o.random_state}

    def series(metric: str, group: str) -> dict[str, Any]:
        """The series under both versions (Rescore fields), or a skipped / error status with the reason."""
        try:
            if metric in RUMIE_METRICS:
                ev = rumie.evidence if rumie is not None else None
                if ev is None or not ev.rule_conditions:
                    return {"status": "skipped", "reason": "the window has no RUMIE rules to apply"}
                mask = membership(ev.rule_conditions, frame, on_missing="false")
                (vn, cn), (vo, co) = rescore_rules(fav_new, fav_old, mask, **boot)  # type: ignore[arg-type]
                definition = "P(fav | rest) - P(fav | group) of the reported rules on every row of the window"
            elif metric in DEFAULT_METRICS:
                (vn, cn), (vo, co) = rescore_outcome(fav_new, fav_old, frame, metric=metric, group=group,
                                                     y_true=y_true, min_group_size=o.min_group_size,
                                                     **boot)  # type: ignore[arg-type]
                definition = f"{metric} of {group} (outcome fairness, bootstrap interval)"
            else:
                return {"status": "skipped", "reason": f"{metric} is not rescored (only outcome metrics and RUMIE's DScore)"}
        except FairmonError as exc:
            return {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
        return {"value_new": vn, "ci_new": cn, "value_old": vo, "ci_old": co, "definition": definition}

    # findings on the same series (the range and the threshold rule on the honest DScore) share one
    # computation; each keeps its own row, keyed like the finding, with its own baseline
    cache: dict[tuple[str, str], dict[str, Any]] = {}
    out: list[Rescore] = []
    for f in fired:
        if any((r.kind, r.metric, r.group) == (f.kind, f.metric, f.group) for r in out):
            continue
        got = cache.setdefault((f.metric, f.group), series(f.metric, f.group))
        if "status" in got:
            out.append(row(f, value_old=None, value_new=None, **got))
        else:
            out.append(row(f, **got, verdict=verdict(got["value_new"], got["ci_new"], got["value_old"],
                                                     baseline=f.baseline)))
    return out, ""


def gap_record(g: GroupAttributionGap) -> AttributionGapRecord:
    """A :class:`GroupAttributionGap` → its store record."""
    d = g.to_dict()
    return AttributionGapRecord(
        group_kind=g.group_kind, status=g.status, group_label=g.group, reason=g.reason, explainer=g.explainer,
        n_inside=g.n_inside, n_outside=g.n_outside, population_inside=g.population_inside,
        population_outside=g.population_outside, favorable_rate_inside=g.favorable_rate_inside,
        favorable_rate_outside=g.favorable_rate_outside, n_bootstrap=g.n_bootstrap, confidence=g.confidence,
        features=tuple(d["features"]),
    )


def rescore_record(r: Rescore) -> RescoreRecord:
    """A :class:`Rescore` → its store record."""
    cn, co = r.ci_new or (None, None), r.ci_old or (None, None)
    return RescoreRecord(
        kind=r.kind, metric=r.metric, group=r.group, old_version=r.old_version, new_version=r.new_version,
        value_fired=r.value_fired, value_new=r.value_new, ci_new_low=cn[0], ci_new_high=cn[1],
        value_old=r.value_old, ci_old_low=co[0], ci_old_high=co[1], baseline=r.baseline, verdict=r.verdict,
        definition=r.definition, status=r.status, reason=r.reason,
    )
