"""FEU's pick against fairlearn's tuned ThresholdOptimizer: recommended only when not shown worse.

A retraining recommendation is worth acting on only if the simpler change a team already knows would
not do better. ``benchmarks/feu_paper`` (session 11, ``frontier.py``) measured that it often would:
ThresholdOptimizer post-processing the production scores, at the ``tol`` FEU's own constraints pick
on validation, reached FEU's test utility with a lower DP on 7 of 12 recommended runs. So after FEU's
rule (:mod:`fairmon.feu._recommend`) has picked a candidate, :func:`versus_tuned_mitigator` compares
it with that **contender** on the rows FEU's gate read, and the candidate is **withheld** — nothing
registered, the recommendation names the mitigator and its ``tol`` — when the monitor allows
decisions that read the protected attribute (``group_thresholds`` on; why below) and both hold:

1. the contender passes FEU's own gate against production on those rows (the simultaneous gate of
   :func:`fairmon.feu._recommend.simultaneous_gate` with one model: DP-gain lower bound above 0,
   positive rate inside the band by its noise margin) and keeps the utility floor there — a mitigator
   not itself shown better than production is no reason to withhold anything;
2. its DP is lower than the candidate's by more than noise: the one-sided 95% lower bound of
   ``DP(candidate) - DP(contender)`` from a paired bootstrap of the same rows (the same gate with the
   candidate in production's place, and the same resamples as step 1) is above 0.

Why the opt-in: ThresholdOptimizer applies one threshold per protected group, so it reads the
attribute when it decides — disparate treatment, unlawful in some domains (e.g. credit under ECOA) —
which is why FEU's own group-specific thresholds are opt-in. A monitor that has not opted in could not
deploy the mitigator, so there a contender shown better (1 and 2) does not withhold the candidate: the
recommendation says the mitigator had the lower DP, that it reads the attribute, and which setting
would allow it.

Otherwise the candidate stays recommended and the record says why the contender did not displace it
(``withheld`` in the record is the verdict; ``contender_better`` the comparison alone).
The contender, and what "the rows" are:

* the contender is ``threshold_optimizer_tuned`` (:mod:`fairmon.feu._mitigator_constraints`), or
  exact-parity ThresholdOptimizer when that is the tuned pick; with no ``tol`` keeping FEU's
  constraints on validation there is none (recorded);
* **validation gate**: the candidate's decisions on the validation split against the contender fit on
  the training split — both were selected on validation (the candidate among the search's
  evaluations, the ``tol`` among 8), so both carry the same kind of selection optimism;
* **cross-validated gate** (small validation splits, :mod:`fairmon.feu._crossval`): the recipe's
  out-of-fold decisions against ThresholdOptimizer refit per fold, at the same ``tol``, on the
  production fold model's scores of that fold's training rows (a given production model: its scores
  as they are) — candidate, production and contender are then all out of fold on the same folds.
  The ``tol`` is not re-selected per fold, as the recipe is not.

Documented choices: the comparison is of DP, the quantity FEU's rule minimises inside the constraints —
the contender already keeps the band and the utility floor, so a lower DP with a lower utility still
within the floor is what FEU's own rule would have picked — among models allowed to read the
protected attribute when they decide (``group_thresholds`` on; off, it is only said). ExponentiatedGradient is fit at one ``eps``
and not tuned, so it is not a contender: its comparison stays the constraints note. The decisions of
ThresholdOptimizer are randomised by fairlearn between two thresholds; they are drawn with the
search's ``random_state`` (``+ fold`` out of fold). Cost: one or ``cv_folds`` ThresholdOptimizer fits
(~0.06 CPU-s each at 3,000 rows) and two bootstraps of the rows.

Example
-------
>>> rng = np.random.default_rng(0)
>>> s = np.repeat(["a", "b"], 300)
>>> prod = np.r_[rng.random(300) < .8, rng.random(300) < .3].astype(int)   # DP ~0.5
>>> cand = np.r_[rng.random(300) < .7, rng.random(300) < .45].astype(int)  # DP ~0.25
>>> to = np.r_[rng.random(300) < .6, rng.random(300) < .55].astype(int)    # DP ~0.05
>>> y = rng.integers(0, 2, 600)
>>> v = head_to_head(cand, prod, to, s, y, utility="balanced_accuracy", band=0.10, tolerance=None,
...                  n_boot=200, random_state=0)
>>> round(v["dp_gain_over_candidate_lb"], 3), v["contender_dp_shown_lower"]
(0.12, True)
>>> round(v["contender_vs_production"]["rate_margin"], 3), v["contender_better"]
(0.132, False)

The contender's DP is lower than the candidate's beyond noise, but its positive rate (+0.08 from
production's, SE 0.03) is not inside the ±0.10 band by its noise margin, so it displaces nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fairmon.feu._baselines import (
    fit_threshold_optimizer,
    fit_threshold_optimizer_on,
    threshold_optimizer_decisions,
)
from fairmon.feu._choose import _Anchor, _Recommendation, fresh_sample_rows
from fairmon.feu._crossval import OutOfFold
from fairmon.feu._evaluate import _Evaluator
from fairmon.feu._metrics import decision_metrics
from fairmon.feu._recommend import simultaneous_gate
from fairmon.feu._train import predict_proba
from fairmon.feu.labels import TUNED

__all__ = ["contender_tol", "head_to_head", "oof_threshold_optimizer", "settle_against_mitigator",
           "versus_tuned_mitigator", "withheld_message", "kept_note"]


def contender_tol(baselines: dict[str, dict[str, dict[str, Any]]]) -> tuple[str, float | None] | None:
    """The contender's baseline name and ``tol`` (None: exact parity), or None when no ``tol`` keeps FEU's constraints.

    >>> contender_tol({TUNED: {"validation": {"tol": 0.04}}})
    ('threshold_optimizer_tuned', 0.04)
    >>> contender_tol({"threshold_optimizer": {"validation": {"band_ok": True, "utility_ok": True}}})
    ('threshold_optimizer', None)
    >>> contender_tol({"threshold_optimizer": {"validation": {"band_ok": False, "utility_ok": True}}}) is None
    True
    """
    if TUNED in baselines:
        return TUNED, baselines[TUNED]["validation"]["tol"]
    v = (baselines.get("threshold_optimizer") or {}).get("validation") or {}
    return ("threshold_optimizer", None) if v.get("band_ok") is True and v.get("utility_ok") is True else None


def head_to_head(
    candidate: np.ndarray, production: np.ndarray, contender: np.ndarray, s: np.ndarray, y: np.ndarray, *,
    utility: str, band: float | None, tolerance: float | None, n_boot: int, random_state: int,
    fresh_rows: int | None = None,
) -> dict[str, Any]:
    """Steps 1-2 of the module docstring on 0/1 decisions of the same rows; a JSON-ready record
    (``fresh_rows``: the band's fresh sample, as in FEU's own gate)."""
    vs_prod = simultaneous_gate(production, contender[None, :], s, band=band, n_boot=n_boot, random_state=random_state,
                                fresh_rows=fresh_rows)
    vs_cand = simultaneous_gate(candidate, contender[None, :], s, band=None, n_boot=n_boot, random_state=random_state)
    m = {k: decision_metrics(y, d, s) for k, d in (("candidate", candidate), ("production", production),
                                                     ("contender", contender))}
    util_ok = tolerance is None or m["contender"][utility] >= m["production"][utility] - tolerance - 1e-12
    beats_production = bool(vs_prod.eligible[0]) and bool(util_ok)
    shown_lower = bool(vs_cand.lower_bound[0] > 0)
    return {
        "rows": int(len(candidate)),
        **{f"dp_{k}": float(v["dp"]) for k, v in m.items()},
        **{f"{utility}_{k}": float(v[utility]) for k, v in m.items()},
        **{f"selection_rate_{k}": float(v["selection_rate"]) for k, v in m.items()},
        "contender_vs_production": vs_prod.record(0),
        "contender_utility_ok": bool(util_ok),
        "dp_gain_over_candidate": float(vs_cand.gain[0]),
        "dp_gain_over_candidate_se": float(vs_cand.gain_se[0]),
        "dp_gain_over_candidate_lb": float(vs_cand.lower_bound[0]),
        "contender_beats_production": beats_production,
        "contender_dp_shown_lower": shown_lower,
        "contender_better": beats_production and shown_lower,
    }


def oof_threshold_optimizer(oof: OutOfFold, Z: np.ndarray, tol: float | None, random_state: int) -> np.ndarray:
    """ThresholdOptimizer's out-of-fold decisions on the pooled rows ``Z`` (module docstring)."""
    out = np.full(len(oof.y), -1, dtype=int)
    for f in range(oof.folds):
        fit, held = oof.fold != f, oof.fold == f
        scores = predict_proba(oof.production_models[f], Z[fit]) if oof.production_refit else oof.production_proba[fit]
        to = fit_threshold_optimizer_on(scores, oof.y[fit], oof.s[fit], tol)
        out[held] = threshold_optimizer_decisions(to, oof.production_proba[held], oof.s[held], random_state + f)
    return out


def versus_tuned_mitigator(
    evaluator: _Evaluator, anchor: _Anchor, rec: _Recommendation, row: dict[str, Any],
    baselines: dict[str, dict[str, dict[str, Any]]], random_state: int,
) -> dict[str, Any] | None:
    """Compare the recommended candidate (archive ``row``) with the contender; None when nothing is recommended.

    The record has ``contender`` (None with ``reason`` when there is none) and, when compared, the
    :func:`head_to_head` fields, ``tol`` and ``where`` (the rows read).
    """
    st, prep = evaluator.settings, evaluator.prep
    if rec.position is None:
        return None
    picked = contender_tol(baselines)
    if picked is None:
        return {"contender": None, "reason": "no ThresholdOptimizer tol keeps FEU's constraints on validation"}
    name, tol = picked
    if rec.oof is not None and rec.oof_index is not None:
        oof = rec.oof
        Z = np.vstack([prep.Z["train"], prep.Z["validation"]])
        cand, prod, y, s = oof.decisions[rec.oof_index], oof.production, oof.y, oof.s
        to = oof_threshold_optimizer(oof, Z, tol, random_state)
        where = f"out of fold ({oof.folds} folds of train + validation, {len(y)} rows)"
    else:
        y, s = prep.y["validation"], prep.s["validation"]
        cand = evaluator.decisions(row, "validation")
        prod = (anchor.proba["validation"] >= anchor.threshold).astype(int)
        fitted = fit_threshold_optimizer(prep, anchor.proba["train"], tol)
        to = threshold_optimizer_decisions(fitted, anchor.proba["validation"], s, random_state)
        where = "on validation"
    v = head_to_head(cand, prod, to, s, y, utility=st.utility, band=st.positive_rate_band,
                     tolerance=st.utility_tolerance, n_boot=st.recommend_bootstrap, random_state=random_state,
                     fresh_rows=fresh_sample_rows(prep))
    return {"contender": name, "tol": tol, "where": where, "candidate_id": int(row["id"]), **v}


def withheld_message(v: dict[str, Any], utility: str) -> str:
    """The recommendation when the contender displaces the candidate (module docstring).

    >>> v = {"candidate_id": 7, "tol": 0.04, "where": "on validation", "dp_candidate": 0.08, "dp_contender": 0.02,
    ...      "dp_production": 0.15, "dp_gain_over_candidate_lb": 0.01, "balanced_accuracy_candidate": 0.70,
    ...      "balanced_accuracy_contender": 0.69}
    >>> print(withheld_message(v, "balanced_accuracy")[:96])
    no candidate better than production and fairlearn's ThresholdOptimizer: the candidate of evaluat
    """
    tol = "exact parity" if v["tol"] is None else f"tol {v['tol']:g}"
    return (
        f"no candidate better than production and fairlearn's ThresholdOptimizer: the candidate of evaluation "
        f"{v['candidate_id']} passed FEU's gate, but ThresholdOptimizer post-processing production's scores "
        f"(demographic parity, {tol}) is better {v['where']}: DP {v['dp_contender']:.3f} against the candidate's "
        f"{v['dp_candidate']:.3f} and production's {v['dp_production']:.3f} (95% lower bound of its DP gain over "
        f"the candidate {v['dp_gain_over_candidate_lb']:.3f}; itself past FEU's gate against production), "
        f"{utility} {v[f'{utility}_contender']:.3f} against {v[f'{utility}_candidate']:.3f}; post-processing "
        f"production with it (group-specific thresholds: it reads the protected attribute when it decides, which "
        f"this monitor allows with group_thresholds) is the better change, so FEU registers nothing"
    )


def kept_note(v: dict[str, Any]) -> str:
    """The recommendation's sentence when the contender was compared and did not displace the candidate.

    >>> v = {"contender": "threshold_optimizer_tuned", "tol": 0.04, "where": "on validation", "dp_candidate": 0.03,
    ...      "dp_contender": 0.05, "dp_gain_over_candidate_lb": -0.06, "contender_beats_production": True}
    >>> print(kept_note(v))
    ; against fairlearn's ThresholdOptimizer on production's scores (tol 0.04, on validation): DP 0.050 against the candidate's 0.030, not shown lower (95% lower bound of its gain -0.060)

    Shown better, but the monitor's decisions may not read the protected attribute:

    >>> v.update(dp_contender=0.01, dp_gain_over_candidate_lb=0.012, contender_better=True, withheld=False)
    >>> print(kept_note(v).split("): ", 1)[1])
    DP 0.010 against the candidate's 0.030, shown lower (95% lower bound of its gain 0.012), but not proposed instead: it applies one threshold per protected group (it reads the protected attribute when it decides, disparate treatment), which this monitor does not allow (retraining.group_thresholds: false)
    """
    if v.get("contender") is None:
        return ""
    tol = "exact parity" if v["tol"] is None else f"tol {v['tol']:g}"
    if v.get("contender_better"):  # and not withheld: the monitor has not allowed decisions reading the attribute
        why = (f"shown lower (95% lower bound of its gain {v['dp_gain_over_candidate_lb']:.3f}), but not proposed "
               "instead: it applies one threshold per protected group (it reads the protected attribute when it "
               "decides, disparate treatment), which this monitor does not allow (retraining.group_thresholds: false)")
    elif v["contender_beats_production"]:
        why = f"not shown lower (95% lower bound of its gain {v['dp_gain_over_candidate_lb']:.3f})"
    else:  # which part of FEU's gate against production the mitigator itself fails
        g = v.get("contender_vs_production") or {}
        fails = [text for ok, text in ((g.get("gain_ok"), "its DP gain over production not beyond noise"),
                                       (g.get("band_ok"), "its positive rate not inside the band by its noise"),
                                       (v.get("contender_utility_ok"), "below the utility floor")) if ok is False]
        why = "the mitigator itself not past FEU's gate against production (" + "; ".join(fails or ["gate"]) + ")"
    return (f"; against fairlearn's ThresholdOptimizer on production's scores ({tol}, {v['where']}): DP "
            f"{v['dp_contender']:.3f} against the candidate's {v['dp_candidate']:.3f}, {why}")


def settle_against_mitigator(
    evaluator: _Evaluator, anchor: _Anchor, rec: _Recommendation, archive: list[dict[str, Any]], front: list[int],
    baselines: dict[str, dict[str, dict[str, Any]]], random_state: int,
) -> _Recommendation:
    """``rec`` after the comparison (module docstring): withheld, or kept with the comparison said; the
    record goes to ``selection["versus_mitigator"]``. Unchanged in paper mode, without baselines or
    without a recommendation. Withheld only when the contender is better and ``group_thresholds`` allows
    decisions that read the protected attribute."""
    st = evaluator.settings
    if st.paper_mode or not st.baselines or rec.position is None:
        return rec
    v = versus_tuned_mitigator(evaluator, anchor, rec, archive[front[rec.position]], baselines, random_state)
    if v is None:
        return rec
    v = {**v, "withheld": bool(v.get("contender_better")) and st.group_thresholds}
    selection = {**rec.selection, "versus_mitigator": v}
    if v["withheld"]:
        return replace(rec, position=None, members=None, message=withheld_message(v, st.utility), selection=selection)
    return replace(rec, message=rec.message + kept_note(v), selection=selection)
