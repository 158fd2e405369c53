"""Spec → method calls for the heavy steps RUMIE and GESD/OpenXAI, and their JSON results (FEU:
:mod:`fairmon.pipeline.retrain`).

Only translation lives here: every number comes from the method modules (:func:`fairmon.fairness.rumie.mine`,
:func:`fairmon.explain.gesd.gesd`, :func:`fairmon.explain.evaluate`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from fairmon._codes import factorizes_exactly
from fairmon._numbers import finite_float
from fairmon._progress import advance, set_total
from fairmon.config import ExplanationsSpec
from fairmon.errors import InsufficientDataError, MethodError, SchemaError
from fairmon.explain import evaluate, explain
from fairmon.explain.gesd import gesd
from fairmon.fairness.rumie import mine
from fairmon.pipeline.budget import explanations_within_budget
from fairmon.pipeline.context import RunContext, window_model
from fairmon.pipeline.records import RumieOutput, previous_evidence
from fairmon.pipeline.table import A_DATA
from fairmon.rules import jaccard, membership
from fairmon.schema import FeatureSchema
from fairmon.sources import file_format, load_file

log = logging.getLogger(__name__)

__all__ = ["run_rumie", "run_explanations", "reference_frame", "gesd_settings"]


# ------------------------------------------------------------------------------------------ RUMIE


def _previous_conditions(ctx: RunContext) -> list[Any] | None:
    """Rule conditions of the latest completed window before this one (None when there is none)."""
    prev = previous_evidence(ctx)
    conds = prev[0].rule_conditions if prev else None
    return list(conds) if conds else None


def run_rumie(ctx: RunContext, X: pd.DataFrame, favorable: np.ndarray) -> RumieOutput:
    """Mine the window with the spec's RUMIE settings: its Evidence and the group overlap.

    Rows whose favorable indicator is missing are left out. With more rows than ``rumie.max_rows``,
    the group is mined on a stratified sample and its honest DScore computed on every other row
    (:func:`fairmon.fairness.rumie.mine`'s ``max_rows``). ``rumie.k`` is at most the searched columns'
    encoded width (the default columns, the sensitive and extra ones, are often one binary attribute:
    two encoded columns); the evidence's settings record the ``k`` used. ``group_overlap`` is the Jaccard overlap of this window's group with the
    previous completed window's rules applied to this window's rows.
    """
    r = ctx.spec.rumie
    keep = ~np.isnan(favorable)
    if keep.all():  # no row left out: no copy of the window's columns
        X, fav = X.reset_index(drop=True), favorable.astype(int)
    else:
        X, fav = X.loc[keep].reset_index(drop=True), favorable[keep].astype(int)
    ev = mine(
        X,
        fav,
        k=_effective_k(r.k, X),
        alpha=r.alpha,
        beta=r.beta,
        lam=r.lam,
        method=r.method,
        iterations=r.iterations,
        lr=r.lr,
        device=ctx.device,
        random_state=r.random_state,
        significance="split",
        split_fraction=1.0 - r.significance.honest_fraction,  # RUMIE's share of rows used for mining
        rule_search=r.rule_search,
        max_rows=r.max_rows,
        early_stop=r.early_stop,
    )
    overlap = None
    try:
        prev = _previous_conditions(ctx)
        if prev is not None and ev.status == "ok":
            overlap = jaccard(np.asarray(ev.mask, dtype=bool), membership(prev, X, on_missing="false"))
    except MethodError as exc:  # an operator or value the rules module cannot evaluate: unknown, not guessed
        log.warning("group overlap not computed: %s", exc)
    return RumieOutput(ev, overlap)


def _effective_k(k: int, X: pd.DataFrame) -> int:
    """``k`` capped at the encoded width of the searched columns (each column has at least one)."""
    if k <= X.shape[1]:
        return k
    try:
        width = FeatureSchema.fit(X, columns=[str(c) for c in X.columns]).n_encoded
    except (SchemaError, ValueError, TypeError):  # mine() names the problem of these columns itself
        return k
    if width < k:
        log.info("rumie.k %d is above the %d encoded columns of %s; mining with k=%d", k, width, list(X.columns), width)
    return max(1, min(k, width))


# ------------------------------------------------------------------------------------------ explanations


def reference_frame(ctx: RunContext, fallback: pd.DataFrame) -> pd.DataFrame:
    """Training-like rows for SHAP's background and LIME's statistics: the spec's reference data, else
    the retraining data, else the window itself (documented fallback)."""
    for path, fmt in (
        (ctx.spec.validation.reference_data, None),
        (getattr(ctx.spec.retraining.training_data, "path", None), getattr(ctx.spec.retraining.training_data, "format", None)),
    ):
        if path:
            p = ctx.spec.resolve_path(path)
            return load_file(p, file_format(p, fmt))
    return fallback


def run_explanations(ctx: RunContext) -> dict[str, Any]:
    """GESD per sensitive attribute (:attr:`~fairmon.config.MonitorSpec.gesd_attributes`) and the
    OpenXAI metrics; tidy rows for the store.

    Returns ``{"rows": [...], "gesd": {attribute: GESDResult dict} | None}``. An explanation disparity
    that is undefined for this window (the sampled rows hold fewer than two groups of the attribute)
    is stored as NULL with ``status`` saying why; the window still succeeds with its other results.
    """
    frame = ctx.artifacts.get_frame(A_DATA)
    model = window_model(ctx)
    e = explanations_within_budget(ctx.spec, model, frame)  # the spec's sizes unless a budget is set
    features = list(ctx.spec.columns.features)
    ref = reference_frame(ctx, frame)
    rows: list[dict[str, Any]] = []
    out: dict[str, Any] = {"rows": rows, "gesd": None}
    # progress units: one GESD per attribute, one OpenXAI evaluation per explainer
    set_total(len(ctx.spec.gesd_attributes) * e.gesd.enabled + len(e.explainers) * e.openxai.enabled)
    if e.gesd.enabled:
        out["gesd"] = {}
        for attr in ctx.spec.gesd_attributes:
            gd, gesd_rows = _gesd_rows(ctx, e, model, frame[features], ref[features], frame[attr], attr)
            out["gesd"][attr] = gd
            rows.extend(gesd_rows)
            advance()
    if e.openxai.enabled:
        rows.extend(_openxai_rows(ctx, e, model, frame, ref))
    return out


def _gesd_rows(
    ctx: RunContext, e: ExplanationsSpec, model: Any, X: pd.DataFrame, X_train: pd.DataFrame, groups: pd.Series,
    attr: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """GESD of one sensitive attribute: its result dict and its store rows (the disparity, then one
    stability row per group). Undefined (fewer than two groups sampled): value NULL, ``status`` says why."""
    g = e.gesd
    try:
        res = gesd(model, X, _texts(groups), X_train=X_train,
                   random_state=e.random_state, device=ctx.device, **gesd_settings(ctx, e))
    except InsufficientDataError as exc:
        log.warning("GESD across %s undefined in this window: %s", attr, exc)
        gd: dict[str, Any] = {"metric": "gesd", "attribute": attr, "value": None, "p_value": None,
                              "status": f"insufficient: {exc}", "groups": [], "pairwise": [], "components": {}}
        return gd, [_gesd_value_row(g.explainer, attr, gd)]
    gd = {**res.to_dict(instances=False), "attribute": attr}
    rows = [_gesd_value_row(g.explainer, attr, gd)]
    for grp in gd["groups"]:
        rows.append(
            {
                "family": "gesd",
                "metric": "stability",
                "explainer": g.explainer,
                "group": f"{attr}={grp['group']}",
                "value": grp["stability"],
                "n": grp["size"],
                "details": {"std": grp["std"], "population": grp["population"], "sufficient": grp["sufficient"],
                            # per-instance S(x) of the group: the report draws their distribution
                            "instances": [round(float(v), 6) for gi, v in
                                          zip(res.instance_group, res.instance_stability, strict=True)
                                          if str(gi) == str(grp["group"]) and np.isfinite(v)]},
            }
        )
    return gd, rows


def _texts(s: pd.Series) -> np.ndarray:
    """``s.astype(str).to_numpy()`` (missing values as ``str`` of them, e.g. ``'nan'``) with one text object
    per distinct value, not one per row (a 1M-row window's group labels: 8 MB, not 60)."""
    if not factorizes_exactly(s):  # value equality is not text equality (mixed objects, -0.0)
        return np.asarray(s.astype(str).to_numpy(), dtype=object)
    codes, uniques = pd.factorize(s, use_na_sentinel=False)
    texts = np.asarray(pd.Series(pd.Index(uniques), dtype=object).astype(str).to_numpy(), dtype=object)
    return texts[codes] if len(texts) else np.asarray(s.astype(str).to_numpy(), dtype=object)


def gesd_settings(ctx: RunContext, e: ExplanationsSpec | None = None) -> dict[str, Any]:
    """Keyword arguments of :func:`fairmon.explain.gesd.gesd` from the spec (``explanations.gesd`` and
    the explainer sizes). The window's GESD and FEU's GESD objective both use them, so the candidates'
    explanation fairness is measured exactly as the monitor measures it. ``e``: the window's settings
    (a budget's sizes), default the spec's."""
    e = e or ctx.spec.explanations
    g = e.gesd
    return {
        "explainer": g.explainer,
        "sample_size": g.sample_size,
        "stratify": g.stratify,
        "n_perturbations": g.n_perturbations,
        "sigma": g.sigma,
        "mask_prob": g.mask_prob,
        "baseline": g.baseline,
        "min_group_size": g.min_group_size,
        "background_size": e.background_size,
        "explainer_params": {"lime": {"n_samples": e.lime_samples}, "kernelshap": {"n_samples": e.kernelshap_samples}},
    }


def _gesd_value_row(explainer: str, attr: str, gd: Mapping[str, Any]) -> dict[str, Any]:
    """The store row of one attribute's GESD, keyed by the attribute (NULL when undefined;
    ``details.status`` says why)."""
    return {
        "family": "gesd",
        "metric": "gesd",
        "explainer": explainer,
        "group": attr,
        "value": gd["value"],
        "p_value": gd["p_value"],
        "n": int(sum(grp["size"] for grp in gd["groups"])),
        "group_stability": {str(grp["group"]): grp["stability"] for grp in gd["groups"]},
        "details": {"attribute": attr, "status": gd["status"], "pairwise": gd["pairwise"],
                    "components": gd.get("components"), "noise_floor": gd.get("noise_floor"),
                    "noise_floor_quantile": gd.get("noise_floor_quantile"),
                    "noise_floor_permutations": gd.get("noise_floor_permutations")},
    }


def _explainer_params(e: ExplanationsSpec, method: str) -> dict[str, Any]:
    if method in ("lime", "lime-lib"):
        return {"n_samples": e.lime_samples}
    if method in ("kernelshap", "kernelshap-lib"):
        return {"n_samples": e.kernelshap_samples}
    return {}


def _openxai_rows(
    ctx: RunContext, e: ExplanationsSpec, model: Any, frame: pd.DataFrame, ref: pd.DataFrame
) -> list[dict[str, Any]]:
    """OpenXAI metrics per explainer with their subgroup disparities.

    Each configured explainer explains ``openxai.sample_size`` seeded rows of the window (each row's
    *predicted* class, OpenXAI's convention; reference rows as background), then
    :func:`fairmon.explain.evaluate` computes the metrics, per-group means over every declared
    protected attribute and the ``<METRIC>_fairness`` disparities. ``openxai.n_perturbations`` is
    PGI/PGU's perturbation count and the number of perturbations the stability metrics (RIS/RRS/ROS)
    keep, drawn from ten times as many (OpenXAI's reference keeps 100 of 1000). A protected attribute
    with a single group among the sampled rows gets its ``<METRIC>_fairness`` rows with value NULL and
    the reason in ``details.status`` (the disparity is undefined, not zero).
    """
    ox = e.openxai
    feats = list(ctx.spec.columns.features)
    rng = np.random.default_rng(e.random_state)
    n = min(ox.sample_size, len(frame))
    idx = np.sort(rng.choice(len(frame), n, replace=False))
    sample = frame.iloc[idx].reset_index(drop=True)
    Z = model.schema.transform(sample[feats])
    bg_rows = ref[feats].sample(n=min(e.background_size, len(ref)), random_state=e.random_state)
    background = model.schema.transform(bg_rows)
    groups = {a: sample[a].astype(str).to_numpy() for a in ctx.spec.columns.sensitive}
    # a disparity needs two groups in the sample: an attribute with one gets NULL rows with the reason
    one_group = {a: sorted(set(v.tolist())) for a, v in groups.items() if len(set(v.tolist())) < 2}
    groups = {a: v for a, v in groups.items() if a not in one_group}
    rows: list[dict[str, Any]] = []
    for method in e.explainers:
        params = _explainer_params(e, method)
        E = explain(model, Z, method=method, target="predicted", background=background,
                    random_state=e.random_state, device=ctx.device, **params)
        table = evaluate(
            model, Z, E, metrics=list(ox.metrics), groups=groups, k=ox.k_fraction,
            random_state=e.random_state, explainer=method, min_group_size=ox.min_group_size,
            # re-explanations of the stability perturbations use the same background as the rows'
            explainer_params={**params, "background": background},
            n_samples=ox.n_perturbations, stability_draws=10 * ox.n_perturbations,
            stability_keep=ox.n_perturbations, device=ctx.device,
        )
        advance()
        for rec in table.to_dict(orient="records"):
            group = str(rec.get("group") or "")
            note = str(rec.get("note") or "")
            details: dict[str, Any] = {"note": note}
            if finite_float(rec.get("value")) is None:  # stored NULL: the reason goes with it
                details["status"] = _undefined_reason(note, rec.get("n"))
            rows.append(
                {
                    "family": "openxai",
                    "metric": str(rec["metric"]),
                    "explainer": method,
                    "group": "" if group == "all" else group,
                    "value": rec.get("value"),
                    "n": rec.get("n"),
                    "n_nan": rec.get("n_nan"),
                    "details": details,
                }
            )
        for attr, labels in one_group.items():
            reason = f"insufficient: the {n} sampled rows hold {len(labels)} group(s) of {attr} {labels}; a disparity needs two"
            rows.extend(
                {"family": "openxai", "metric": f"{m}_fairness", "explainer": method, "group": attr, "value": None,
                 "n": n, "details": {"note": "", "status": reason}}
                for m in ox.metrics
            )
    return rows


def _undefined_reason(note: str, n: Any) -> str:
    """Why an OpenXAI value is NULL: the metric's own note (RRS without a hidden layer), else no row had
    a value (e.g. no stability perturbation kept the row's label)."""
    at = note.find("undefined:")  # a fairness row's note is "<how>; majority=...; <the metric's note>"
    if at >= 0:
        return note[at:]
    return f"undefined: none of the {n} explained rows has a value (n_nan)"
