"""The report section "Why disfavored · model or data?" from the window's stored diagnosis rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fairmon.alerts.diagnosis import TOP_FEATURES
from fairmon.explain.attribution_gap import MIN_GAP, gap_sentence, worth_a_sentence
from fairmon.fairness.rescore import describe_series, rescore_sentence
from fairmon.report.charts import fmt_num
from fairmon.report.charts._gap import attribution_gap_chart
from fairmon.store import AttributionGapRecord, RescoreRecord

__all__ = ["diagnosis_context"]


def _ci(lo: Any, hi: Any) -> str:
    return "" if lo is None or hi is None else f"[{fmt_num(lo)}, {fmt_num(hi)}]"


def _gap(g: AttributionGapRecord, draw: Callable[..., str | None]) -> dict[str, Any]:
    named = [f for f in g.features if worth_a_sentence(f)][:TOP_FEATURES]  # what the alert names, no more
    who = "RUMIE group" if g.group_kind == "rumie" else "group of one declared attribute with the lowest favorable rate"
    return {
        "title": f"{who}: {g.group_label}",
        "status": g.status,
        "reason": g.reason,
        "explainer": g.explainer,
        "sizes": f"{g.n_inside or 0:,} / {g.n_outside or 0:,} rows explained "
                 f"(of {g.population_inside or 0:,} / {g.population_outside or 0:,} in the window)",
        "rates": f"{fmt_num(g.favorable_rate_inside)} / {fmt_num(g.favorable_rate_outside)}",
        "interval": f"{(g.confidence or 0.95):.0%} bootstrap intervals ({g.n_bootstrap or 0} replicates) holding "
                    f"for all {len(g.features)} features at once (max-t); a sentence for the "
                    f"{TOP_FEATURES} largest gaps of at least {MIN_GAP} whose interval excludes 0, as in the alert",
        "img": draw(attribution_gap_chart, list(g.features), title=g.group_label[:80]),
        "rows": [
            {"feature": f["feature"], "inside": fmt_num(f.get("inside")), "outside": fmt_num(f.get("outside")),
             "difference": fmt_num(f.get("difference")), "ci": _ci(f.get("ci_low"), f.get("ci_high")),
             "sentence": gap_sentence(str(f["feature"]), float(f["difference"]), quote="") if f in named else ""}
            for f in g.features
        ],
    }


#: the fields that make two rescores one answer (the same series, versions and values)
_SAME_ANSWER = ("series", "versions", "value_new", "ci_new", "value_old", "ci_old", "verdict", "status", "sentence")


def _rescore(r: RescoreRecord) -> dict[str, Any]:
    return {
        "series": describe_series(r.metric, r.group, quote=""),
        "kind": r.kind,
        "versions": f"{r.new_version} (window) vs {r.old_version} (earlier production)",
        "value_new": fmt_num(r.value_new), "ci_new": _ci(r.ci_new_low, r.ci_new_high),
        "value_old": fmt_num(r.value_old), "ci_old": _ci(r.ci_old_low, r.ci_old_high),
        "value_fired": fmt_num(r.value_fired), "baseline": fmt_num(r.baseline),
        "verdict": r.verdict, "definition": r.definition, "status": r.status, "reason": r.reason,
        "sentence": rescore_sentence(metric=r.metric, group=r.group, old_version=r.old_version,
                                     new_version=r.new_version, value_old=r.value_old, value_new=r.value_new,
                                     verdict=r.verdict, quote="") if r.status == "ok" else "",
    }


def diagnosis_context(
    gaps: Sequence[AttributionGapRecord], rescores: Sequence[RescoreRecord], draw: Callable[..., str | None]
) -> dict[str, Any]:
    """``{"gaps": [...], "rescores": [...]}`` for the template (``draw`` turns a chart into an image).

    >>> diagnosis_context([], [], lambda *a, **k: None)
    {'gaps': [], 'rescores': []}
    """
    ordered = sorted(gaps, key=lambda g: g.group_kind != "rumie")
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rescores:  # one row per rescored series and answer; the rules that asked for it listed together
        row = _rescore(r)
        key = tuple(row[k] for k in _SAME_ANSWER)
        if key not in rows:
            rows[key] = row
            continue
        kept = rows[key]
        kept["kind"] += f", {r.kind}"
        if row["definition"] and row["definition"] not in str(kept["definition"] or "").split(" · "):
            # each rule's own definition, not the first's
            kept["definition"] = f"{kept['definition']} · {row['definition']}" if kept["definition"] else row["definition"]
        for k, v in row.items():  # what only one of the rules carries (a rise's baseline)
            if kept.get(k) in (None, "", "n/a") and v not in (None, "", "n/a"):
                kept[k] = v
    return {"gaps": [_gap(g, draw) for g in ordered], "rescores": list(rows.values())}
