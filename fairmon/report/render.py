"""ReportData → one self-contained HTML page (jinja2 with autoescaping, images as base64 PNG).

The page loads nothing from anywhere: styles are inline, images are ``data:`` URIs and a
Content-Security-Policy meta tag forbids every other source, so the file can be mailed, archived
or served from any static host and still look the same.
"""

from __future__ import annotations

import base64
import functools
import logging
import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from fairmon.alerts.render import report_path
from fairmon.drift.checks import level_text
from fairmon.feu.labels import (
    BASELINES,
    baseline_label,
    candidate_notes,
    constraint_note,
    left_out_clause,
    rumie_target_clause,
)
from fairmon.report import charts
from fairmon.report._diagnosis import diagnosis_context
from fairmon.report._evidence import evidence_context
from fairmon.report._template import CSS, TEMPLATE
from fairmon.report.charts import GroupStabilityRow, fmt_num, fmt_p

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from fairmon.report.data import ReportData
    from fairmon.store import ExplanationMetricRecord, FindingRecord, MetricRecord

__all__ = ["render_html", "SECTIONS", "data_uri", "compiled_template"]

log = logging.getLogger(__name__)

#: section ids of every report, in page order (tests and the index page rely on them)
SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("findings", "Drift findings"),
    ("outcome", "Outcome fairness"),
    ("rumie", "Discriminated group (RUMIE)"),
    ("diagnosis", "Why disfavored · model or data?"),
    ("gesd", "Explanation fairness (GESD)"),
    ("openxai", "Explanation quality (OpenXAI)"),
    ("trends", "Trends"),
    ("feu", "Retraining candidates (FEU)"),
)

_FINDING_TITLES = {
    "ci_outside_range": "outside its allowed range",
    "significant_change": "significant change vs baseline",
    "rumie_dscore": "discriminated group above threshold",
    "rumie_rise": "discrimination of the mined group rose",
    "rumie_new_group": "a new discriminated group",
    "rumie_key_attributes": "the group's key attributes changed",
    "gesd_rise": "explanation fairness got worse",
    "data_validation": "data validation failed",
}
_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def data_uri(png: bytes | None) -> str | None:
    """``data:image/png;base64,...`` of PNG bytes (None stays None)."""
    if png is None:
        return None
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _ci(lo: Any, hi: Any) -> str:
    if lo is None or hi is None:
        return ""
    return f"[{fmt_num(lo)}, {fmt_num(hi)}]"


#: how a range is judged, in the report's words (``drift.allowed_ranges.<metric>.judge``)
RANGE_RULES = {
    "interval": "judged on the interval: a finding only when the whole confidence interval lies outside",
    "value": "judged on the value: a finding when the point value lies outside",
}


def _range_text(low: float, high: float, judge: str) -> str:
    """``[0.8, 1] · value``: an allowed range and its rule, for a table cell."""
    return f"[{fmt_num(low)}, {fmt_num(high)}] · {judge}"


def _metric_rows(
    metrics: Sequence[MetricRecord], ranges: Sequence[tuple[str, float, float, str]] = ()
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    allowed = {m: _range_text(lo, hi, judge) for m, lo, hi, judge in ranges}
    disparities: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for m in sorted(metrics, key=lambda m: ("&" in m.attribute, m.attribute, m.metric, m.group)):
        row = {
            "metric": m.metric,
            "attribute": m.attribute or "(all)",
            "group": m.group,
            "value": fmt_num(m.value),
            "ci": _ci(m.ci_low, m.ci_high),
            "n": "" if m.n is None else f"{m.n:,}",
            "missing": m.value is None,
            "allowed": allowed.get(m.metric, ""),
        }
        (groups if m.group else disparities).append(row)
    return disparities, groups


def _group_table(metrics: Sequence[MetricRecord]) -> dict[str, Any]:
    """Per-group metrics pivoted: one row per (attribute, group), one column per metric."""
    cols = [c for c in charts.PER_GROUP_METRICS if any(m.metric == c and m.group for m in metrics)]
    cells: dict[tuple[str, str], dict[str, MetricRecord]] = {}
    for m in metrics:
        if m.group and m.metric in cols:
            cells.setdefault((m.attribute, m.group), {})[m.metric] = m
    rows = []
    for (attr, group), by in sorted(cells.items(), key=lambda kv: ("&" in kv[0][0], kv[0][0], kv[0][1])):
        n = next((by[c].n for c in cols if c in by and by[c].n is not None), None)
        rows.append(
            {
                "group": f"{attr} = {group}",
                "cells": [
                    {"value": fmt_num(by[c].value) if c in by else "", "ci": _ci(by[c].ci_low, by[c].ci_high)
                     if c in by else "", "missing": c in by and by[c].value is None}
                    for c in cols
                ],
                "n": "" if n is None else f"{n:,}",
            }
        )
    return {"cols": cols, "rows": rows}


def _headline_outcome(metrics: Sequence[MetricRecord]) -> dict[str, Any]:
    dpd = [m for m in metrics if m.metric == "dp_difference" and not m.group and m.value is not None]
    dpr = [m for m in metrics if m.metric == "dp_ratio" and not m.group and m.value is not None]
    out: dict[str, Any] = {"dp_difference": None, "dp_ratio": None}
    if dpd:
        w = max(dpd, key=lambda m: float(m.value or 0.0))
        out["dp_difference"] = {"value": fmt_num(w.value), "ci": _ci(w.ci_low, w.ci_high), "attribute": w.attribute}
    if dpr:
        w = min(dpr, key=lambda m: float(m.value if m.value is not None else 1.0))
        out["dp_ratio"] = {"value": fmt_num(w.value), "ci": _ci(w.ci_low, w.ci_high), "attribute": w.attribute}
    return out


def _finding_who(f: FindingRecord) -> str:
    """`` (Female 0.300 vs Male 0.500)``: the compared groups of a disparity finding, if stored."""
    groups = (f.numbers or {}).get("groups")
    if not isinstance(groups, dict):
        return ""
    lo, hi = groups.get("disadvantaged") or {}, groups.get("advantaged") or {}
    return f" ({lo.get('group')} {fmt_num(lo.get('value'))} vs {hi.get('group')} {fmt_num(hi.get('value'))})"


def _finding_ci(f: FindingRecord) -> str:
    text = _ci(f.ci_low, f.ci_high)
    level = (f.numbers or {}).get("ci_level")
    return f"{text} ({level_text(float(level))})" if text and isinstance(level, int | float) else text


def _finding_title(f: FindingRecord) -> str:
    """The finding kind in words; a range finding says whether the interval or the value was judged."""
    title = _FINDING_TITLES.get(f.kind, f.kind)
    judge = (f.numbers or {}).get("judge")
    if f.kind == "ci_outside_range" and judge in RANGE_RULES:
        title += f" (judged on the {judge})"
    return title


def _finding_rows(findings: Sequence[FindingRecord]) -> list[dict[str, Any]]:
    rows = []
    for f in sorted(findings, key=lambda f: (_SEVERITY_ORDER.get(f.severity, 3), f.kind, f.metric, f.group)):
        rows.append(
            {
                "severity": f.severity,
                "status": f.status,
                "what": f"{f.metric}{' · ' + f.group if f.group else ''}{_finding_who(f)}: "
                f"{_finding_title(f)}",
                "value": fmt_num(f.value),
                "ci": _finding_ci(f),
                "baseline": fmt_num(f.baseline) if f.baseline is not None else "",
                "since": f"{f.since:%Y-%m-%d}" if f.since is not None else "",
                "message": f.message,
            }
        )
    return rows


def _gesd_rows(expl: Sequence[ExplanationMetricRecord], attr: str) -> list[GroupStabilityRow]:
    """Per-group stability rows of one attribute's GESD (every group's when the attribute is unknown)."""
    rows = []
    for x in expl:
        if x.family == "gesd" and x.metric == "stability" and x.group.startswith(f"{attr}=" if attr else ""):
            d = dict(x.details or {})
            inst = d.get("instances") or ()
            rows.append(
                GroupStabilityRow(
                    label=x.group,
                    stability=x.value,
                    std=d.get("std"),
                    size=x.n,
                    instances=tuple(float(v) for v in inst if v is not None),
                )
            )
    if rows:
        return rows
    gesd = next((x for x in expl if x.gesd_attribute == attr), None)
    if gesd is not None and gesd.group_stability:
        return [GroupStabilityRow(label=str(g), stability=v) for g, v in gesd.group_stability.items()]
    return []


def _gesd_context(data: ReportData, attr: str, gesd: ExplanationMetricRecord, draw: Any) -> dict[str, Any]:
    """The report section of one attribute's GESD (``draw`` turns a chart function into an image)."""
    rows = _gesd_rows(data.explanations, attr)
    gd = dict(gesd.details or {})
    comps = gd.get("components") or {}
    return {
        "value": fmt_num(gesd.value),
        "p_value": fmt_p(gesd.p_value),
        "explainer": gesd.explainer,
        "attribute": attr,
        "status": gd.get("status", ""),
        "noise_floor": fmt_num(gd.get("noise_floor")) if gd.get("noise_floor") is not None else "",
        "within_noise": gesd.value is not None and gd.get("noise_floor") is not None
        and float(gesd.value) <= float(gd["noise_floor"]),
        "groups": [
            {"label": r.label, "stability": fmt_num(r.stability), "std": fmt_num(r.std),
             "n": "" if r.size is None else r.size, "instances": len(r.instances)}
            for r in rows
        ],
        "components": [
            {"name": k, "value": fmt_num((v or {}).get("value")), "p_value": fmt_p((v or {}).get("p_value"))}
            for k, v in sorted(comps.items())
            if isinstance(v, Mapping)
        ],
        "pairwise": [
            {"a": t.get("group_a"), "b": t.get("group_b"), "p": fmt_p(t.get("p_adjusted", t.get("p_value")))}
            for t in (gd.get("pairwise") or [])
            if isinstance(t, Mapping)
        ],
        "img": draw(charts.gesd_chart, rows),
        "distribution": bool(rows) and all(len(r.instances) >= 2 for r in rows),
    }


def _openxai_table(expl: Sequence[ExplanationMetricRecord]) -> dict[str, Any] | None:
    rows = [x for x in expl if x.family == "openxai"]
    if not rows:
        return None
    group_cols = sorted({x.group for x in rows if x.group and "=" in x.group and not x.metric.endswith("_fairness")})
    fair_cols = sorted({x.group for x in rows if x.metric.endswith("_fairness")})
    table: dict[tuple[str, str], dict[str, str]] = {}
    undefined: dict[tuple[str, str], str] = {}
    sizes = {x.group: x.n for x in rows if x.group in group_cols and x.n is not None}
    left_out: dict[str, dict[str, list[str]]] = {}  # attribute -> note on the groups too small -> whose gaps
    for x in rows:
        base = x.metric[: -len("_fairness")] if x.metric.endswith("_fairness") else x.metric
        cell = table.setdefault((x.explainer, base), {})
        status = str((x.details or {}).get("status") or "")
        text = fmt_num(x.value) if x.value is not None or not status.startswith("undefined") else "undefined"
        if x.metric.endswith("_fairness"):
            cell[f"gap:{x.group}"] = text
            note = str((x.details or {}).get("note") or "")
            for marker in ("groups with fewer than", "undefined: fewer than two groups"):
                if marker in note:
                    why_left = note[note.index(marker):].split(";")[0]
                    left_out.setdefault(x.group, {}).setdefault(why_left, []).append(f"{base} ({x.explainer})")
        elif x.group:
            cell[x.group] = text
        else:
            cell["all"] = text
            if x.value is None and status:
                undefined[(x.explainer, base)] = status
    out_rows = [
        {"explainer": e, "metric": m, "all": c.get("all", ""), "groups": [c.get(g, "") for g in group_cols],
         "gaps": [c.get(f"gap:{a}", "") for a in fair_cols]}
        for (e, m), c in sorted(table.items())
    ]
    notes = [f"{m} ({e}): {why}" for (e, m), why in sorted(undefined.items())]
    for a, said in sorted(left_out.items()):  # one note per attribute unless its gaps left out different groups
        notes += ([f"gap {a}: {why}" for why in said] if len(said) == 1 else
                  [f"gap {a}, {', '.join(whose)}: {why}" for why, whose in said.items()])
    return {"group_cols": group_cols, "fair_cols": fair_cols, "rows": out_rows, "undefined": notes,
            "sizes": [f"n {sizes[g]}" if g in sizes else "" for g in group_cols],
            "stability": any(m in ("RIS", "RRS", "ROS") for _e, m in table)}


def _feu_target(data: ReportData) -> str:
    """Whose groups the candidates' DP and GESD compare (``pipeline.feu_target``), as a sentence."""
    t = next((c.metrics.get("target") for c in data.feu if isinstance((c.metrics or {}).get("target"), Mapping)), None)
    if not isinstance(t, Mapping):
        return ""
    group = rumie_target_clause(t)
    if group is not None:
        return f"{group}."
    why = f" ({t['reason']})" if t.get("reason") else ""
    return f"DP and GESD compare the groups of {t.get('attribute')}{why}{left_out_clause(t)}."


def _feu_rows(data: ReportData) -> list[dict[str, Any]]:
    out = []
    notes = candidate_notes([dict(c.hyperparameters or {}) for c in data.feu],
                            [(c.metrics or {}).get("deployment") for c in data.feu],
                            [c.candidate_index + 1 for c in data.feu])  # numbered as the table shows them
    for i, c in enumerate(data.feu):
        m = dict(c.metrics or {})
        test: Mapping[str, Any] = m["test"] if isinstance(m.get("test"), Mapping) else m
        hp = dict(c.hyperparameters or {})
        out.append(
            {
                "index": c.candidate_index + 1,  # as the Slack follow-up and the chart number them
                "selected": c.selected,
                "pareto": c.pareto,
                "hyper": ", ".join(f"{k} {fmt_num(v)}" for k, v in sorted(hp.items())),
                "balanced_accuracy": fmt_num(test.get("balanced_accuracy")),
                "selection_rate": fmt_num(test.get("selection_rate")),
                "auc": fmt_num(test.get("auc")),
                "f1": fmt_num(test.get("f1")),
                "dp": fmt_num(test.get("dp")),
                "eod": fmt_num(test.get("eod")),
                "gesd": fmt_num(test.get("gesd")),
                "registry_version": c.registry_version or "",
                "note": notes[i],
            }
        )
    return out


def _feu_baseline_rows(data: ReportData) -> list[dict[str, Any]]:
    """The baselines beside the candidates (test split), with why a mitigator is not what FEU proposes."""
    out = []
    for name in BASELINES:
        parts = data.feu_baselines.get(name) or {}
        test, val = parts.get("test") or {}, parts.get("validation") or {}
        if not test:
            continue
        out.append({"name": baseline_label(name, test.get("tol")), "note": constraint_note(val),
                    **{k: fmt_num(test.get(k)) for k in ("balanced_accuracy", "selection_rate", "auc", "f1", "dp",
                                                         "eod", "gesd")}})
    return out


def _trend_rows(data: ReportData) -> list[dict[str, Any]]:
    rows = []
    for p in list(data.trend)[-15:]:
        worst = max((v[0] for v in p.dp_difference.values() if v[0] is not None), default=None)
        rows.append(
            {
                "window": f"{p.window_start:%Y-%m-%d}",
                "status": p.status,
                "model": p.model_version or "",
                "dp": fmt_num(worst),
                "honest": fmt_num(p.honest_dscore),
                "gesd": fmt_num(max((v for v in p.gesd.values() if v is not None), default=None)),
                "drift": p.drift,
                "current": p.window_start == data.run.window_start,
            }
        )
    return rows


def _context(data: ReportData, *, rebuild_command: str | None) -> dict[str, Any]:
    run = data.run
    chart_errors: list[str] = []

    def draw(fn: Any, *args: Any, **kwargs: Any) -> str | None:
        """A picture as a data URI; a drawing failure is logged and named on the page, never fatal
        (the report step runs after the window's rows are stored, which a broken chart must not undo)."""
        try:
            return data_uri(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - reported on the page and in the log
            log.warning("report %s/%s: %s failed: %s", data.monitor, run.window_start, fn.__name__, exc)
            chart_errors.append(f"{fn.__name__}: {type(exc).__name__}: {exc}")
            return None

    ev = data.main_evidence
    details = dict(run.details or {})
    disparities, group_rows = _metric_rows(data.metrics, data.allowed_ranges)
    gesd_ctx = [_gesd_context(data, attr, rec, draw) for attr, rec in data.gesd.items()]
    findings = _finding_rows(data.findings)
    return {
        "monitor": data.monitor,
        "window_start": f"{run.window_start:%Y-%m-%d %H:%M} UTC",
        "window_end": f"{run.window_end:%Y-%m-%d %H:%M} UTC",
        "window_day": f"{run.window_start:%Y-%m-%d}",
        "run_status": run.status,
        "status": data.status,
        "error": (run.error or "") + (
            f" The results shown were stored before this failure (the window was then "
            f"{details.get('persisted_status')}); they stay until an attempt succeeds."
            if run.error and details.get("results_kept") else ""),
        "model_version": run.model_version or "n/a",
        "n_rows": "n/a" if run.n_rows is None else f"{run.n_rows:,}",
        "favorable_rate": fmt_num(details.get("favorable_rate")),
        "headline": _headline_outcome(data.metrics),
        "evidence": evidence_context(ev, draw),
        "diagnosis": diagnosis_context(data.attribution_gaps, data.rescores, draw),
        "gesd_list": gesd_ctx,
        "n_findings": len(findings),
        "n_active": sum(1 for f in data.findings if f.status in ("open", "ongoing")),
        "findings": findings,
        "alerts": [
            {"kind": a.kind, "severity": a.severity or "", "state": a.state, "channel": a.channel or "",
             "text": str((a.payload or {}).get("text", ""))[:4000],
             "first_line": str((a.payload or {}).get("text", "")).strip().split("\n", 1)[0][:200]}
            for a in data.alerts
        ],
        "disparities": disparities,
        "range_rules": [
            {"metric": m, "range": f"[{fmt_num(lo)}, {fmt_num(hi)}]", "rule": RANGE_RULES.get(judge, judge)}
            for m, lo, hi, judge in data.allowed_ranges
        ],
        "group_rows": group_rows,
        "group_table": _group_table(data.metrics),
        "outcome_img": draw(charts.outcome_chart, data.metrics),
        "openxai": _openxai_table(data.explanations),
        "trend_img": draw(charts.trend_chart, data.trend, current=run.window_start),
        "trend_rows": _trend_rows(data),
        "n_trend": len(data.trend),
        "feu_img": draw(charts.pareto_chart, data.feu, data.feu_baselines),
        "feu_rows": _feu_rows(data),
        "feu_target": _feu_target(data),
        "feu_baselines": _feu_baseline_rows(data),
        "sections": SECTIONS,
        "run_id": run.run_id,
        "spec_fingerprint": (run.spec_fingerprint or "")[:12],
        "updated_at": f"{run.updated_at:%Y-%m-%d %H:%M:%S} UTC" if run.updated_at else "",
        "timings": ", ".join(f"{k} {v:.1f}s" for k, v in run.timings.items()),
        "rebuild_command": rebuild_command or "",
        "feu_latest": None if data.feu_latest_window is None else {
            "day": f"{data.feu_latest_window:%Y-%m-%d}",
            "href": posixpath.basename(report_path(data.monitor, data.feu_latest_window))},
        "css": Markup(CSS),
        "chart_errors": chart_errors,
    }


def render_html(data: ReportData, *, rebuild_command: str | None = None) -> str:
    """The report of one window as a self-contained HTML string.

    Examples
    --------
    >>> from fairmon.report.data import load_report_data  # doctest: +SKIP
    >>> html = render_html(load_report_data(store, "demo", "2026-01-07"))  # doctest: +SKIP
    >>> html.count('<section id=')  # doctest: +SKIP
    9
    """
    return str(compiled_template().render(**_context(data, rebuild_command=rebuild_command)))


@functools.cache
def compiled_template() -> jinja2.Template:
    """The report's jinja2 template, compiled once per process (0.07 CPU-s a compile; a preloaded
    worker compiles it before forking its task processes, :func:`fairmon.pipeline.warm.warm_up`)."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.from_string(TEMPLATE)
