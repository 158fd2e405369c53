"""The production anchor of an FEU search and the recommendation drawn from its Pareto set.

See :mod:`fairmon.feu._recommend` for the rule; this module applies it to a finished search.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairmon.explain.gesd import GESDResult
from fairmon.feu._baselines import ERR_TO_PRODUCTION_COLUMNS
from fairmon.feu._evaluate import _Evaluator
from fairmon.feu._metrics import outcome_metrics
from fairmon.feu._recommend import (
    NO_BETTER_CANDIDATE,
    RATE_MARGIN_Z,
    RULE,
    choose_lowest_dp,
    simultaneous_gate,
)
from fairmon.feu._result import chebyshev_select
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
    else:
        proba = {part: np.asarray(production.predict_proba(prep.X[part]))[:, 1] for part in ("train", "validation", "test")}
        threshold = float(production.threshold)
        for part in ("validation", "test"):
            gesd_res[part] = evaluator.gesd_result(production, part, raw=True)
        score = _raw_score(production, prep.schema)
    metrics = {part: outcome_metrics(prep.y[part], proba[part], prep.s[part], threshold) for part in ("validation", "test")}
    gesd = {part: (None if r is None or not math.isfinite(r.value) else float(r.value)) for part, r in gesd_res.items()}
    return _Anchor(proba, threshold, metrics["validation"], metrics["test"], gesd, gesd_res.get("validation"), score)


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


def _recommend(
    evaluator: _Evaluator, anchor: _Anchor, archive: list[dict[str, Any]], front: list[int], F: np.ndarray,
    random_state: int,
) -> _Recommendation:
    st, prep = evaluator.settings, evaluator.prep
    # GESD's own noise floor (explain.gesd: a permutation null over the group labels of the sampled rows)
    nf = anchor.gesd_validation.noise_floor if anchor.gesd_validation is not None else float("nan")
    floor = float(nf) if math.isfinite(nf) else None
    if st.paper_mode:  # the paper: Chebyshev over the whole front, no constraints, no noise gate
        pos, T = chebyshev_select(F[front], st.weights, scale=st.selection_scale)
        return _Recommendation(pos, "paper mode: the Chebyshev choice over the Pareto set (no constraints, "
                               "no comparison with production)", {i: float(t) for i, t in enumerate(T)}, {}, floor)
    feasible = [pos for pos, i in enumerate(front) if archive[i]["error"] is None
                and all(c <= 0 for c in archive[i]["constraints"])]
    if not feasible:
        return _Recommendation(None, NO_FEASIBLE.format(n=len(front)), {}, {}, floor)
    prod_yhat = (anchor.proba["validation"] >= anchor.threshold).astype(int)
    # each candidate's validation decisions (its group thresholds when it has them)
    yhat = np.vstack([evaluator.decisions(archive[front[pos]], "validation") for pos in feasible])
    # all feasible candidates against production at once (rule step 2): simultaneous DP-gain bound, band margin
    g = simultaneous_gate(prod_yhat, yhat, prep.s["validation"], band=st.positive_rate_band,
                          n_boot=st.recommend_bootstrap, random_state=random_state)
    dp_lb = {pos: float(g.lower_bound[j]) for j, pos in enumerate(feasible)}
    dp_se = {pos: float(g.dp_se[j]) for j, pos in enumerate(feasible)}
    gate = {pos: g.record(j) for j, pos in enumerate(feasible)}
    eligible = [pos for j, pos in enumerate(feasible) if g.eligible[j]]
    if not eligible:
        return _Recommendation(None, NO_BETTER_CANDIDATE.format(n=len(feasible)), {}, dp_lb, floor, gate)
    Fe = F[[front[pos] for pos in eligible]]
    # the choice (fairmon.feu._recommend): the lowest validation DP, ties within noise broken by GESD
    # beyond its floor, then utility; eligible is in front order, which is evaluation-id order
    k = choose_lowest_dp(Fe[:, 1].tolist(), [dp_se[pos] for pos in eligible], Fe[:, 2].tolist(),
                         (1.0 - Fe[:, 0]).tolist(), gesd_floor=floor)
    # the paper's Chebyshev scores of the eligible candidates are still recorded (reports compare the rules)
    Fc = Fe.copy()
    if floor is not None:  # GESD differences within its noise floor are ties
        Fc[:, 2] = np.maximum(Fc[:, 2] - floor, 0.0)
    _, T = chebyshev_select(Fc, st.weights, scale=st.selection_scale)
    pos = eligible[k]
    val = archive[front[pos]]["validation"]
    message = (
        f"candidate #{archive[front[pos]]['id']} recommended ({RULE}; {len(eligible)} of {len(feasible)} "
        f"feasible candidates eligible): on validation DP {anchor.validation['dp']:.3f} -> "
        f"{val['dp']:.3f} (simultaneous 95% lower bound of the gain {dp_lb[pos]:.3f}), {st.utility} "
        f"{anchor.validation[st.utility]:.3f} -> {val[st.utility]:.3f}, positive rate "
        f"{anchor.validation['selection_rate']:.2f} -> {val['selection_rate']:.2f} (|difference| + {RATE_MARGIN_Z} SE "
        f"{gate[pos]['rate_margin']:.3f})"
    )
    return _Recommendation(pos, message, {p: float(t) for p, t in zip(eligible, T)}, dp_lb, floor, gate)
