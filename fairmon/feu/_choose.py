"""The production anchor of an FEU search and the recommendation drawn from its Pareto set.

See :mod:`fairmon.feu._recommend` for the rule; this module applies it to a finished search — on the
validation split, or, when that split has fewer than ``FEUSettings.cv_below_rows`` rows, on
out-of-fold decisions of the candidates' recipes refit on folds of train ∪ validation
(:mod:`fairmon.feu._crossval`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import InsufficientDataError
from fairmon.explain.gesd import GESDResult
from fairmon.feu._baselines import ERR_TO_PRODUCTION_COLUMNS
from fairmon.feu._budget import StepBudget, plan_refits
from fairmon.feu._crossval import NO_BETTER_CV, CVGate, OutOfFold, Recipe, cv_gate, out_of_fold, use_cv
from fairmon.feu._data import _Prepared
from fairmon.feu._ensemble import ensemble_cut, fold_ensemble, member_proba, member_rates
from fairmon.feu._evaluate import _Evaluator
from fairmon.feu._metrics import outcome_metrics
from fairmon.feu._nested import NESTED_FAILED, nested_check, nested_ensemble
from fairmon.feu._recommend import (
    NO_BETTER_CANDIDATE,
    RULE,
    choose_lowest_dp,
    simultaneous_gate,
)
from fairmon.feu._result import Candidate, chebyshev_select, feasible_row
from fairmon.feu._train import predict_proba, train_mlps
from fairmon.registry.model import Model
from fairmon.schema import FeatureSchema

__all__: list[str] = []

#: hyperparameters of the stand-in production model when the caller has none (the paper's network)
REFERENCE_PRODUCTION = {"lr": 1e-3, "epochs": 20, "threshold": 0.5}
NO_FEASIBLE = "no candidate better than production: none of the {n} Pareto candidates satisfies the constraints"


@dataclass
class _Anchor:
    """The production model on FEU's split: scores, threshold, metrics and GESD."""

    proba: dict[str, np.ndarray]
    threshold: float
    validation: dict[str, Any]
    test: dict[str, Any]
    gesd: dict[str, float | None] = field(default_factory=dict)
    gesd_validation: GESDResult | None = None
    #: P(favourable) of rows encoded by FEU's schema (ThresholdOptimizer's GESD), or why there is none
    score_encoded: Callable[[np.ndarray], np.ndarray] | str | None = None
    #: how FEU trained its stand-in (refit per fold by the cross-validated gate); None: a given model
    recipe: Recipe | None = None


def _band_note(band: float | None) -> str:
    return "" if band is None else f" <= band {band:g}"


def _fresh_note(gate: dict[str, Any]) -> str:
    m = gate.get("rate_fresh_rows")
    return f"; SE of the difference on a fresh sample of {m} rows" if m else ""


def fresh_sample_rows(prep: _Prepared) -> int:
    """The band's fresh sample (:mod:`fairmon.feu._recommend`, step 2b): the test split's row count."""
    return int(len(prep.y["test"]))


def _production(evaluator: _Evaluator, production: Model | None, random_state: int) -> _Anchor:
    prep = evaluator.prep
    gesd_res: dict[str, GESDResult | None] = {}
    if production is None:
        ref = REFERENCE_PRODUCTION
        (net,) = train_mlps(prep.Z["train"], prep.y["train"], [(ref["lr"], int(ref["epochs"]), random_state)],
                            batch_size=evaluator.settings.batch_size, hidden=evaluator.settings.hidden,
                            device=evaluator.device)
        proba = {part: predict_proba(net, prep.Z[part]) for part in ("train", "validation", "test")}
        threshold = float(ref["threshold"])
        model = evaluator.model(net, threshold)
        for part in ("validation", "test"):
            gesd_res[part] = evaluator.gesd_result(model, part)
        score: Callable[[np.ndarray], np.ndarray] | str = lambda Z: predict_proba(net, Z)  # noqa: E731
        recipe: Recipe | None = Recipe(float(ref["lr"]), int(ref["epochs"]), threshold, int(random_state))
    else:
        recipe = None
        proba = {part: np.asarray(production.predict_proba(prep.X[part]))[:, 1] for part in ("train", "validation", "test")}
        threshold = float(production.threshold)
        for part in ("validation", "test"):
            gesd_res[part] = evaluator.gesd_result(production, part, raw=True)
        score = _raw_score(production, prep.schema)
    metrics = {part: outcome_metrics(prep.y[part], proba[part], prep.s[part], threshold) for part in ("validation", "test")}
    gesd = {part: (None if r is None or not math.isfinite(r.value) else float(r.value)) for part, r in gesd_res.items()}
    return _Anchor(proba, threshold, metrics["validation"], metrics["test"], gesd, gesd_res.get("validation"), score,
                   recipe)


def _raw_score(production: Model, schema: FeatureSchema) -> Callable[[np.ndarray], np.ndarray] | str:
    """The production model's P(favourable) of rows in FEU's encoding (decoded to raw columns first)."""
    missing = [c for c in production.schema.names if c not in schema.names]
    if missing:
        return ERR_TO_PRODUCTION_COLUMNS.format(columns=missing)
    return lambda Z: np.asarray(production.predict_proba(schema.inverse_transform(Z)))[:, 1]


@dataclass
class _Recommendation:
    position: int | None  #: index into the front of the recommended candidate (None: nothing better)
    message: str
    chebyshev: dict[int, float]
    dp_lb: dict[int, float]  #: the simultaneous lower bound of the DP gain, per feasible front position
    noise_floor: float | None
    #: per feasible front position: why it is (in)eligible (:meth:`fairmon.feu._recommend.Gate.record`)
    gate: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: which rows the gate read: ``{"selection": "validation"}`` or ``"cv5"`` with folds, rows and cost
    selection: dict[str, Any] = field(default_factory=dict)
    #: the recommended recipe's fold models when its fold ensemble is deployed (``cv_deploy="ensemble"``)
    members: list[Any] | None = None
    #: the out-of-fold rows the gate read (cross-validated gate) and the recommended recipe's index in them
    oof: OutOfFold | None = None
    oof_index: int | None = None


def _recommend(
    evaluator: _Evaluator, anchor: _Anchor, archive: list[dict[str, Any]], front: list[int], F: np.ndarray,
    random_state: int, budget: StepBudget | None = None,
) -> _Recommendation:
    st, prep = evaluator.settings, evaluator.prep
    # GESD's own noise floor (explain.gesd: a permutation null over the group labels of the sampled rows)
    nf = anchor.gesd_validation.noise_floor if anchor.gesd_validation is not None else float("nan")
    floor = float(nf) if math.isfinite(nf) else None
    selection: dict[str, Any] = {"selection": "validation", "validation_rows": int(len(prep.y["validation"]))}
    if st.paper_mode:  # the paper: Chebyshev over the whole front, no constraints, no noise gate
        pos, T = chebyshev_select(F[front], st.weights, scale=st.selection_scale)
        return _Recommendation(pos, "paper mode: the Chebyshev choice over the Pareto set (no constraints, "
                               "no comparison with production)", {i: float(t) for i, t in enumerate(T)}, {}, floor,
                               selection=selection)
    feasible = [pos for pos, i in enumerate(front) if feasible_row(archive[i])]
    if not feasible:
        return _Recommendation(None, NO_FEASIBLE.format(n=len(front)), {}, {}, floor, selection=selection)
    prod_yhat = (anchor.proba["validation"] >= anchor.threshold).astype(int)
    # each candidate's validation decisions (its group thresholds when it has them)
    yhat = np.vstack([evaluator.decisions(archive[front[pos]], "validation") for pos in feasible])
    # all feasible candidates against production at once (rule step 2): simultaneous DP-gain bound, band margin
    fresh = fresh_sample_rows(prep)  # the band must hold on a fresh sample the size of the test split
    g = simultaneous_gate(prod_yhat, yhat, prep.s["validation"], band=st.positive_rate_band,
                          n_boot=st.recommend_bootstrap, random_state=random_state, fresh_rows=fresh)
    val_gate = [{"selection": "validation", **g.record(j)} for j in range(len(feasible))]
    Fv = F[[front[pos] for pos in feasible]]
    # the validation figures decide on a large validation split and are recorded beside the out-of-fold ones on a
    # small one (fewer than cv_below_rows rows: the cross-validated gate, fairmon.feu._crossval)
    ok, dp, dp_se, util, lb, records = g.eligible, Fv[:, 1], g.dp_se, 1.0 - Fv[:, 0], g.lower_bound, val_gate
    where, prod_dp = "on validation", float(anchor.validation["dp"])
    prod_util, prod_rate = float(anchor.validation[st.utility]), float(anchor.validation["selection_rate"])
    members: list[list[Any]] = []
    oof: OutOfFold | None = None
    refit: list[int] = []  # the feasible candidates refit out of fold (fairmon.feu._budget)
    if use_cv(len(prep.y["validation"]), st.cv_below_rows):
        cv, oof, refit, selection = _cross_validated(evaluator, anchor, [archive[front[pos]] for pos in feasible],
                                                     random_state, selection, budget)
        if cv is not None and oof is not None:
            cv = _all_feasible(cv, refit, len(feasible), str(selection.get("not_refit_reason", "")))
            # deploying the searched model, the band is also held by it, on validation with its noise margin:
            # the out-of-fold rate is its recipe's, and one fit's rate differs from the fold models'
            # (fairmon.feu._crossval); deploying the fold ensemble, the gate's models are the deployed ones
            ensemble = st.cv_deploy == "ensemble"
            own_band = np.array([ensemble or bool(v["band_ok"]) for v in val_gate])
            members = [oof.fold_models[refit.index(j)] if j in refit else [] for j in range(len(feasible))] \
                if ensemble else []
            selection["deploy"] = "fold_ensemble" if ensemble else "searched"
            ok, dp, dp_se, util, lb = cv.eligible & own_band, cv.dp, cv.dp_se, cv.utility, cv.lower_bound
            records = [{**r, "validation_gate": v, "eligible": bool(r["eligible"] and b)}
                       for r, v, b in zip(cv.records, val_gate, own_band)]
            where = f"out of fold ({selection['folds']} folds of train + validation, {selection['oof_rows']} rows)"
            if len(refit) < len(feasible):  # time_budget_s left room for some refits only (fairmon.feu._budget)
                where += f"; {len(refit)} of {len(feasible)} feasible candidates refit within time_budget_s"
            prod_dp, prod_util = cv.production["dp"], cv.production[st.utility]
            prod_rate = cv.production["selection_rate"]
    dp_lb = {pos: float(lb[j]) for j, pos in enumerate(feasible) if math.isfinite(lb[j])}
    gate = {pos: records[j] for j, pos in enumerate(feasible)}
    el = [j for j in range(len(feasible)) if ok[j]]
    if not el:
        msg = (NO_BETTER_CANDIDATE.format(n=len(feasible)) if selection["selection"] == "validation" else
               NO_BETTER_CV.format(n=len(feasible), k=selection["folds"], rows=selection["oof_rows"]))
        if "not_refit_reason" in selection:
            msg += f"; {selection['not_refit_reason']}"
        return _Recommendation(None, msg, {}, dp_lb, floor, gate, selection)
    eligible = [feasible[j] for j in el]
    Fe = F[[front[pos] for pos in eligible]]
    # the choice (fairmon.feu._recommend): the lowest DP, ties within noise broken by GESD beyond its floor
    # (validation GESD: it is not cross-validated), then utility; eligible is in evaluation-id order
    k = choose_lowest_dp([float(dp[j]) for j in el], [float(dp_se[j]) for j in el], Fe[:, 2].tolist(),
                         [float(util[j]) for j in el], gesd_floor=floor)
    # the paper's Chebyshev scores of the eligible candidates are still recorded (reports compare the rules)
    Fc = Fe.copy()
    if floor is not None:  # GESD differences within its noise floor are ties
        Fc[:, 2] = np.maximum(Fc[:, 2] - floor, 0.0)
    _, T = chebyshev_select(Fc, st.weights, scale=st.selection_scale)
    pos, j = eligible[k], el[k]
    deployed = ""
    if members and oof is not None:  # the fold ensemble itself, out of fold (nested): else only its members were
        check = _nested(evaluator, archive[front[pos]], oof, refit.index(j), records[j], random_state)
        selection = {**selection, "deploy_check": check}
        if not check["passed"]:
            return _Recommendation(None, NESTED_FAILED.format(id=archive[front[pos]]["id"], rows=check["oof_rows"],
                                                              members=check["members"], why=check["why"]),
                                   {}, dp_lb, floor, gate, selection)
        deployed = (f"; registered for review: the fold ensemble of its {len(members[j])} fold models, its positive rate checked on "
                    f"nested out-of-fold rows ({check['rate_diff']:+.3f} from production's, margin "
                    f"{check['rate_margin']:.3f}; recorded there: DP {check['oof']['dp']:.3f}, {st.utility} "
                    f"{check['oof'][st.utility]:.3f})")
    message = (
        f"the candidate of evaluation {archive[front[pos]]['id']} recommended ({RULE}; {where}; {len(eligible)} of {len(feasible)} "
        f"feasible candidates eligible): DP {prod_dp:.3f} -> {float(dp[j]):.3f} (simultaneous 95% lower bound of "
        f"the gain {dp_lb[pos]:.3f}), {st.utility} {prod_util:.3f} -> {float(util[j]):.3f}, positive rate "
        f"{prod_rate:.2f} -> {prod_rate + gate[pos]['rate_diff']:.2f} (|difference| + {gate[pos]['rate_margin_z']:.2f} SE = "
        f"{gate[pos]['rate_margin']:.3f}{_band_note(st.positive_rate_band)}{_fresh_note(gate[pos])}){deployed}"
    )
    return _Recommendation(pos, message, {p: float(t) for p, t in zip(eligible, T)}, dp_lb, floor, gate, selection,
                           members[j] if members else None, oof, refit.index(j) if oof is not None else None)


def _cross_validated(
    evaluator: _Evaluator, anchor: _Anchor, rows: list[dict[str, Any]], random_state: int, selection: dict[str, Any],
    budget: StepBudget | None,
) -> tuple[CVGate | None, OutOfFold | None, list[int], dict[str, Any]]:
    """The out-of-fold gate of the feasible candidates (:mod:`fairmon.feu._crossval`), or None and why not.

    Only the candidates whose refits fit in what is left of ``time_budget_s`` are refit
    (:meth:`fairmon.feu._budget.StepBudget.plan`); their indices in ``rows`` are returned.
    """
    st, prep = evaluator.settings, evaluator.prep
    refit, planned = plan_refits(budget, rows)
    Z, y, s, codes = _pooled(prep)
    given = None if anchor.recipe is not None else np.concatenate([anchor.proba[p] for p in _POOLED])
    try:
        oof = out_of_fold(Z, y, s, codes, [Recipe.of(rows[i]) for i in refit], production=anchor.recipe,
                          production_proba=given, production_threshold=anchor.threshold, folds=st.cv_folds,
                          random_state=random_state, batch_size=st.batch_size, hidden=st.hidden,
                          device=evaluator.device)
    except InsufficientDataError as exc:  # too few rows of a class for the folds: the validation gate decides
        return None, None, refit, {**selection, "cv_skipped": str(exc)}
    c0 = time.process_time()
    cv = cv_gate(oof, utility=st.utility, tolerance=st.utility_tolerance, band=st.positive_rate_band,
                 n_boot=st.recommend_bootstrap, random_state=random_state, fresh_rows=fresh_sample_rows(prep))
    return cv, oof, refit, {**selection, "selection": f"cv{oof.folds}", "folds": oof.folds, "oof_rows": int(len(y)),
                            "cv_below_rows": st.cv_below_rows, "production_refit": oof.production_refit,
                            "candidates_refit": len(refit), "cv_cpu_s": round(oof.cpu_s + time.process_time() - c0, 3),
                            "cv_wall_s": oof.wall_s, "production_oof": cv.production, **planned}


_POOLED = ("train", "validation")


def _pooled(prep: _Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cross-validated gate's rows, train then validation: encoded features, labels, groups, group codes."""
    y, s, codes = (np.concatenate([d[p] for p in _POOLED]) for d in (prep.y, prep.s, prep.codes))
    return np.vstack([prep.Z[p] for p in _POOLED]), y, s, codes


def _nested(evaluator: _Evaluator, row: dict[str, Any], oof: OutOfFold, index: int, members: dict[str, Any],
            random_state: int) -> dict[str, Any]:
    """The chosen recipe's (``index`` in ``oof``; ``members``: its gate record) fold ensemble on nested
    out-of-fold rows, through the gate (:mod:`._nested`)."""
    st = evaluator.settings
    Z, y, s, codes = _pooled(evaluator.prep)
    nested = nested_ensemble(Z, s, codes, y, Recipe.of(row), oof.fold, batch_size=st.batch_size, hidden=st.hidden,
                             device=evaluator.device)
    return nested_check(nested, oof, index, members, utility=st.utility, tolerance=st.utility_tolerance,
                        band=st.positive_rate_band, n_boot=st.recommend_bootstrap, random_state=random_state,
                        fresh_rows=fresh_sample_rows(evaluator.prep))


def _all_feasible(cv: CVGate, refit: list[int], n: int, reason: str) -> CVGate:
    """The gate of the refit candidates spread over all ``n`` feasible ones; those not refit are not eligible."""
    if len(refit) == n:
        return cv

    def spread(a: np.ndarray, fill: Any) -> np.ndarray:
        out = np.full(n, fill, dtype=float if fill is np.nan else a.dtype)
        out[refit] = a
        return out

    records: list[dict[str, Any]] = [{"selection": cv.records[0]["selection"], "refit": False, "eligible": False,
                                      "why": reason} for _ in range(n)]
    for a, j in enumerate(refit):
        records[j] = cv.records[a]
    return CVGate(spread(cv.eligible, False), spread(cv.dp, np.nan), spread(cv.dp_se, np.nan),
                  spread(cv.utility, np.nan), spread(cv.lower_bound, np.nan), records, cv.production)


def _deployed(evaluator: _Evaluator, rec: _Recommendation, row: dict[str, Any],
              searched: Candidate) -> tuple[Candidate, Model]:
    """The recommended model as deployed: the searched network, or its recipe's fold ensemble (:mod:`._ensemble`)."""
    if rec.members is None:
        net = evaluator.rebuild(row["state"])
        return (replace(searched, deployment={"model": "searched"}),
                evaluator.model(net, row["threshold"], row.get("group_thresholds")))
    st, prep = evaluator.settings, evaluator.prep
    net = fold_ensemble(rec.members, n_inputs=prep.schema.n_encoded, hidden=st.hidden)
    net = net.to(resolve_device(evaluator.device)).eval()
    recipe_thr, shift = float(row["threshold"]), row.get("parity_shift")
    pooled, _, s_pooled, _ = _pooled(prep)
    # on the rows its members were trained on: the members' rate, not the averaged score's, or with a parity
    # shift the ensemble's own group quantiles (ensemble_cut; its nested check uses the same rule)
    members_pooled = member_proba(net, pooled)
    thr, gthr = ensemble_cut(predict_proba(net, pooled), members_pooled, s_pooled, recipe_thr, shift)
    parts: dict[str, dict[str, float]] = {}
    for part in ("validation", "test"):
        cut = evaluator.row_thresholds(part, thr, gthr)
        parts[part] = outcome_metrics(prep.y[part], predict_proba(net, prep.Z[part]), prep.s[part], cut)
        parts[part]["gesd"], parts[part]["gesd_p_value"] = evaluator.gesd_value(net, part, thr, gthr)
    rates = member_rates(members_pooled, s_pooled, member_proba(net, prep.Z["test"]), prep.s["test"], recipe_thr, shift,
                         fold=None if rec.oof is None else rec.oof.fold)
    val, g = parts["validation"], parts["validation"]["gesd"]
    deployment = {
        "model": "fold_ensemble", "members": len(rec.members), "combine": "mean of the members' P(favourable)",
        "recipe_threshold": recipe_thr, "threshold": thr,
        "trained_on": f"each member on {len(rec.members) - 1} of {len(rec.members)} folds of train + validation",
        "validation_held_out": False, "held_out_evidence": "recommendation_gate (out of fold); test split",
        "members_test_selection_rate": float(rates.mean()), "members_test_selection_rate_sd": float(rates.std(ddof=1)),
        "searched": {"validation": searched.validation, "test": searched.test,
                     "group_thresholds": searched.group_thresholds},
    }
    objectives = (1.0 - val[st.utility], val["dp"], g if math.isfinite(g) else 1.0)
    cand = replace(searched, validation=val, test=parts["test"], objectives=objectives, threshold=thr, group_thresholds=gthr,
                   deployment=deployment)
    return cand, evaluator.model(net, thr, gthr)
