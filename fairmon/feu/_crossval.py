"""Cross-validated recommendation gate for small validation splits (issue 16, session 8).

When the validation split has fewer than ``FEUSettings.cv_below_rows`` rows (default 5,000; 0
switches this off), the recommendation rule of :mod:`fairmon.feu._recommend` is applied not to the
validation split but to **out-of-fold** decisions on train ∪ validation:

1. the rows of train ∪ validation are split into ``cv_folds`` (default 5) folds, stratified by label
   × protected group (each fold keeps both classes and the groups' shares; label only when a
   label × group cell has fewer rows than folds; :func:`fold_ids`);
2. each **feasible front candidate's recipe** — learning rate, epochs, DP-penalty weight, threshold,
   and with group thresholds its parity shift ``s`` — is refit on the other folds with the search's
   own trainer (:func:`fairmon.feu._train.train_mlps`, all candidates of a fold trained together as
   one stack: one call per fold) and decides on the held-out fold exactly as the evaluator decides
   (:meth:`fairmon.feu._evaluate._Evaluator.decisions`): ``p >= tau``, or with a parity shift
   ``p >= tau_g`` where the group quantiles ``q_g`` are fit on that fold's **training** scores, as the
   search fits them on the training split's (:mod:`fairmon.feu._group_thresholds`);
3. **production**: FEU's own stand-in (no production model given: the paper's network at
   :data:`fairmon.feu._choose.REFERENCE_PRODUCTION`) is refit per fold the same way, so candidate and
   production are both out of fold and paired row by row. A real production :class:`Model` was not
   trained by FEU and its recipe is unknown: it is scored **as is** on the rows (its decisions on
   train ∪ validation). If it was trained on some of these rows its utility is optimistic there,
   which makes the utility floor stricter for the candidates, not looser;
4. on the pooled out-of-fold rows (every row of train ∪ validation exactly once), the **same rule**:
   :func:`fairmon.feu._recommend.simultaneous_gate` (simultaneous max-T bound of the DP gain > 0,
   positive rate inside the band by its simultaneous margin, at least 1.645 prediction SE for the test
   split's size), plus the utility floor re-checked out of fold —
   candidate OOF utility >= production OOF utility − ``utility_tolerance`` — and then
   :func:`fairmon.feu._recommend.choose_lowest_dp` with the OOF DP, its bootstrap SE and the OOF
   utility (GESD ties use the validation GESD: GESD is not cross-validated, it dominates the cost).

Why. The search selects on the validation split, so the front's validation figures are optimistic —
selection bias: the candidates that look best on 200 rows are partly the luckiest ones (Varma &
Simon 2006, *BMC Bioinformatics* 7:91, "Bias in error estimation when using cross-validation for
model selection"; Cawley & Talbot 2010, *JMLR* 11, "On over-fitting in model selection and subsequent
selection bias in performance evaluation"). The gate's bootstrap measures sampling noise of the
validation rows but not this selection, and on German's 200 rows the utility floor passed a
candidate that lost 0.059 balanced accuracy on test (session 7, seed 46). Refitting the recipes on
folds the search never scored removes the selection from the estimate (only the final choice among
~15 candidates selects on it, which the simultaneous gate accounts for), and pools 700 rows instead
of 200 (German), halving the standard errors.

Why below 5,000 validation rows (since session 14; 1,000 before). The bias is not a small-sample
curiosity: on Adult's 1,200-row validation split (benchmarks, 6,000-row subsample) the validation
gate's five picks were 0.006 below production's balanced accuracy on validation and 0.021 below on
test (with group thresholds 0.006 and 0.017), so their mean missed the utility floor that every one
of them met on validation. Selection bias scales with the standard error of the figures selected on
(∝ 1/√rows), so at 5,000 rows the same search would carry about half of it (extrapolated, not
measured); above that, the refits' cost (one batched training of the feasible candidates per fold,
17–80 CPU-s on Adult's 4,200 pooled rows) buys less. Measured with the gate out of fold:
``benchmarks/feu_paper/README.md``, "Session 14".

Documented choices:

* **What is deployed** (``FEUSettings.cv_deploy``, since session 9): ``"ensemble"`` (default)
  registers the chosen recipe's **fold ensemble** — the ``k`` fold models trained here, predicting
  the mean of their probabilities (:mod:`fairmon.feu._ensemble`), whose out-of-fold decisions are
  the gate's evidence; ``"searched"`` registers the searched model (one fit on the training split,
  the weights the search scored). A refit on all of train ∪ validation would be a model no held-out
  rows have checked. The ensemble's own positive rate is checked on nested out-of-fold rows before it
  is recommended (:mod:`fairmon.feu._nested`, session 18): the fold models' evidence is its members'.
  The fold models (``fold_models``) are trained on ``(k−1)/k`` of train ∪ validation (560 rows on
  German vs the searched model's 500).
* **Fresh initialisations per fold** (seed ``seed + 104729 * (fold + 1)``): a lucky initialisation is
  not part of a recipe, so it must not carry into the check.
* **The encoding** (scaler, one-hot categories) stays the one fit on the training split: it reads no
  label, so reusing it leaks no outcome information into the held-out folds.
* **No noise margin on the OOF utility floor** (decided, not forgotten). The paired bootstrap SE of
  the utility difference is recorded (``utility_diff_se``: ~0.015 for balanced accuracy on German's
  700 rows); a one-sided 95% margin (1.645 SE, ~0.025) would exceed the 0.02 tolerance and turn the
  floor into "at least production's utility". The identified failure was selection bias, which the
  refits remove; the tolerance stays the allowance the team set.
* **The bootstrap treats the OOF rows as independent**; it ignores the variance between fold models
  (no unbiased estimator of k-fold CV's variance exists: Bengio & Grandvalet 2004, *JMLR* 5), so the
  SEs are somewhat optimistic — but computed on 3.5× the rows.
* **Pooled out-of-fold metrics**: DP, positive rate and the threshold-dependent utilities are
  computed over all pooled rows at once (each row decided by the model that did not see it); with
  ``utility="auc"`` the pooled AUC compares scores of different fold models, a known small bias.
* **With ``cv_deploy="searched"`` the band is held twice.** A candidate is eligible only when its
  recipe's out-of-fold positive rate is inside the band by its noise (the gate above) **and** the
  searched model's own validation rate is too (the validation gate's band margin, ``validation_gate.band_ok`` in the record). The
  out-of-fold rate describes the recipe; the deployed model is one fit of it, whose rate differs from
  the fold models' by more than the pooled SE says (the SE ignores the fit-to-fit variance). Measured,
  German seed 42, session 8, with the out-of-fold band alone: out-of-fold rate difference −0.076
  (+ 1.645 × 0.013 = 0.097, inside ±0.10), the searched model's validation difference −0.085 (SE
  ~0.03: outside once its margin is added) and its **test** difference −0.113 — outside the band.
  The DP gain and the utility floor are the recipe's questions (selection bias, which the refits
  remove); whether the model that would be deployed changes how many people are accepted is the
  model's. With both, German (seeds 42-46, session 8): 0 of 3 recommendations outside the band on
  test, balanced accuracy 0.5997 vs the floor 0.6004, DP 0.82x production's; with the out-of-fold
  band alone both floors held (0.622 vs 0.600; 0.33x) and 2 of 3 left the band
  (``benchmarks/feu_paper/README.md``, "Session 8 run"). With the fold ensemble deployed, the
  searched model's own rate says nothing about the deployed model and is recorded, not required.
* Too few rows for the folds (a class with fewer rows than folds): the validation gate is used and
  the result says why (``selection.cv_skipped``).

Example
-------
>>> import numpy as np
>>> y = np.r_[np.ones(30), np.zeros(20)].astype(int); s = np.tile(["a", "b"], 25)
>>> f = fold_ids(y, s, 5, random_state=0)
>>> sorted(np.bincount(f).tolist()), [int(y[f == k].sum()) for k in range(5)]
([10, 10, 10, 10, 10], [6, 6, 6, 6, 6])
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import InsufficientDataError, MethodError
from fairmon.fairness._rumie_core import torch_threads
from fairmon.feu._group_thresholds import fitted_row_thresholds
from fairmon.feu._metrics import auc, decision_metrics, outcome_metrics
from fairmon.feu._recommend import bootstrap_weights, simultaneous_gate
from fairmon.feu._train import predict_proba, train_mlps

__all__ = ["NO_BETTER_CV", "ERR_FOLDS", "ERR_PRODUCTION", "Recipe", "OutOfFold", "CVGate", "fold_ids",
           "out_of_fold", "cv_gate", "use_cv", "FOLD_SEED_STEP", "refit_threads"]

NO_BETTER_CV = (
    "no candidate better than production: none of the {n} feasible Pareto candidates, refit on {k} folds of "
    "train + validation ({rows} out-of-fold rows), improves the out-of-fold DP by more than its bootstrap noise "
    "(simultaneous 95% lower bound over all of them) while keeping its positive rate inside the band by more than "
    "its noise and its utility no worse than production's minus the tolerance"
)
ERR_FOLDS = "cross-validated gate skipped: a class has {n} rows in train + validation, fewer than the {k} folds"
ERR_PRODUCTION = "out_of_fold needs a production recipe to refit or production's scores on the {n} pooled rows"
#: fold ``f`` refits a recipe with ``seed + FOLD_SEED_STEP * (f + 1)``
FOLD_SEED_STEP = 104_729


@dataclass(frozen=True)
class Recipe:
    """What a candidate (or the production stand-in) is trained and decides with."""

    lr: float
    epochs: int
    threshold: float
    seed: int
    fairness_weight: float = 0.0
    parity_shift: float | None = None

    @classmethod
    def of(cls, r: dict[str, Any]) -> Recipe:
        """The recipe of an archived evaluation (:meth:`fairmon.feu._evaluate._Evaluator.score`)."""
        shift = r.get("parity_shift")
        return cls(float(r["lr"]), int(r["epochs"]), float(r["threshold"]), int(r["seed"]),
                   float(r.get("fairness_weight", 0.0)), None if shift is None else float(shift))


@dataclass
class OutOfFold:
    """Out-of-fold scores and thresholds of K recipes (and production) on the pooled rows."""

    fold: np.ndarray  #: fold id of every pooled row (train rows first, then validation rows)
    proba: np.ndarray  #: (K, n) out-of-fold P(favourable)
    thresholds: np.ndarray  #: (K, n) the threshold each row was decided with (its group's, with a shift)
    production: np.ndarray  #: (n,) production's 0/1 decisions on the rows
    production_proba: np.ndarray  #: (n,) production's P(favourable) (out of fold when refit)
    production_refit: bool  #: True: the stand-in refit per fold; False: a given model scored as is
    covered: np.ndarray  #: (n,) how many times each row was predicted (1 everywhere)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    y: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    s: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=str))
    #: per recipe, its ``k`` fold models (fold ``f`` trained without fold ``f``): the fold ensemble's members
    fold_models: list[list[Any]] = field(default_factory=list)
    #: the production stand-in's fold models when it was refit (fold ``f`` trained without fold ``f``)
    production_models: list[Any] = field(default_factory=list)

    @property
    def decisions(self) -> np.ndarray:
        """(K, n) out-of-fold 0/1 decisions."""
        return (self.proba >= self.thresholds).astype(int)

    @property
    def folds(self) -> int:
        return int(self.fold.max()) + 1


def use_cv(validation_rows: int, cv_below_rows: int) -> bool:
    """Whether the cross-validated gate applies: ``0 < validation_rows < cv_below_rows``.

    >>> use_cv(200, 1000), use_cv(1200, 1000), use_cv(200, 0)
    (True, False, False)
    """
    return cv_below_rows > 0 and validation_rows < cv_below_rows


def fold_ids(y: np.ndarray, s: np.ndarray, k: int, *, random_state: int) -> np.ndarray:
    """Fold id (0..k-1) of each row: stratified k folds by label × group (label only if a cell is < k rows)."""
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y).astype(int)
    counts = np.bincount(y, minlength=2)
    if counts.min() < k:
        raise InsufficientDataError(ERR_FOLDS.format(n=int(counts.min()), k=k))
    _, g = np.unique(np.asarray(s).astype(str), return_inverse=True)
    strata = y * (int(g.max()) + 1) + g.ravel()
    if np.bincount(strata).min() < k:
        strata = y
    out = np.full(len(y), -1, dtype=int)
    for f, (_, held) in enumerate(StratifiedKFold(k, shuffle=True, random_state=random_state).split(y, strata)):
        out[held] = f
    return out


def out_of_fold(
    Z: np.ndarray, y: np.ndarray, s: np.ndarray, codes: np.ndarray, recipes: list[Recipe], *,
    production: Recipe | None, production_proba: np.ndarray | None, production_threshold: float, folds: int,
    random_state: int, batch_size: int, hidden: tuple[int, ...], device: str | None,
) -> OutOfFold:
    """Refit every recipe (and the production stand-in ``production``) on k-1 folds, decide on the k-th.

    ``Z, y, s, codes`` are the pooled rows (encoded features, labels, groups, integer group codes).
    With ``production=None`` the given ``production_proba`` (a real model's scores on the rows) is
    used as is. One :func:`train_mlps` call per fold trains all recipes of that fold together, with at
    most half the cores' torch threads (torch's default of all cores oversubscribes a loaded host).
    """
    with refit_threads(device):
        return _out_of_fold(Z, y, s, codes, recipes, production=production, production_proba=production_proba,
                            production_threshold=production_threshold, folds=folds, random_state=random_state,
                            batch_size=batch_size, hidden=hidden, device=device)


def refit_threads(device: str | None) -> AbstractContextManager[None]:
    """At most half the cores' torch threads while refitting (torch's default of all cores oversubscribes a
    loaded host); the fold refits and the fold ensemble's nested check (:mod:`fairmon.feu._nested`) share it."""
    import torch

    threads = min(torch.get_num_threads(), max(1, (os.cpu_count() or 2) // 2))
    return torch_threads(threads, resolve_device(device).type)


def _out_of_fold(
    Z: np.ndarray, y: np.ndarray, s: np.ndarray, codes: np.ndarray, recipes: list[Recipe], *,
    production: Recipe | None, production_proba: np.ndarray | None, production_threshold: float, folds: int,
    random_state: int, batch_size: int, hidden: tuple[int, ...], device: str | None,
) -> OutOfFold:
    t0, c0 = time.perf_counter(), time.process_time()
    n, K = len(y), len(recipes)
    if production is None and (production_proba is None or len(production_proba) != n):
        raise MethodError(ERR_PRODUCTION.format(n=n))
    fold = fold_ids(y, s, folds, random_state=random_state)
    proba = np.full((K, n), np.nan)
    thr = np.full((K, n), np.nan)
    covered = np.zeros(n, dtype=int)
    prod_p = np.full(n, np.nan) if production is not None else np.asarray(production_proba, dtype=float).copy()
    stack = recipes + ([production] if production is not None else [])
    models: list[list[Any]] = [[] for _ in recipes]
    prod_models: list[Any] = []
    for f in range(folds):
        fit, held = fold != f, fold == f
        configs = [(r.lr, r.epochs, r.seed + FOLD_SEED_STEP * (f + 1)) for r in stack]
        nets = train_mlps(Z[fit], y[fit], configs, batch_size=batch_size, hidden=hidden, device=device,
                          fairness_weights=[r.fairness_weight for r in stack], groups=codes[fit])
        for j, (r, net) in enumerate(zip(recipes, nets)):
            models[j].append(net)
            proba[j, held] = predict_proba(net, Z[held])
            if r.parity_shift is None:
                thr[j, held] = r.threshold
            else:  # the group quantiles from this fold's training scores, as the search fits them on train
                thr[j, held] = fitted_row_thresholds(predict_proba(net, Z[fit]), s[fit], s[held], r.threshold,
                                                     r.parity_shift)
        if production is not None:
            prod_models.append(nets[-1])
            prod_p[held] = predict_proba(nets[-1], Z[held])
        covered[held] += 1
    if not np.all(covered == 1) or np.isnan(proba).any() or np.isnan(prod_p).any():
        raise MethodError("out-of-fold predictions must cover every pooled row exactly once")
    prod_thr = production.threshold if production is not None else production_threshold
    return OutOfFold(fold, proba, thr, (prod_p >= prod_thr).astype(int), prod_p, production is not None, covered,
                     round(time.process_time() - c0, 3), round(time.perf_counter() - t0, 3), np.asarray(y),
                     np.asarray(s), models, prod_models)


def _utility_boot(W: np.ndarray, M: np.ndarray, y: np.ndarray, utility: str) -> np.ndarray | None:
    """Threshold-dependent utility of every model (rows of ``M``) under every row weighting (rows of ``W``)."""
    pos = (np.asarray(y) == 1).astype(float)
    tp, fp = W @ (M * pos).T, W @ (M * (1.0 - pos)).T
    P, N = (W @ pos)[:, None], (W @ (1.0 - pos))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        if utility == "balanced_accuracy":
            return np.asarray(0.5 * (tp / P + (N - fp) / N))
        if utility == "accuracy":
            return np.asarray((tp + N - fp) / (P + N))
        if utility == "f1":
            return np.asarray(np.where(2 * tp + fp + (P - tp) > 0, 2 * tp / (2 * tp + fp + (P - tp)), 0.0))
    return None  # AUC: a rank statistic, no cheap reweighted form (no SE recorded)


@dataclass(frozen=True)
class CVGate:
    """The rule's gate on the out-of-fold rows (arrays of length K, in the order of the recipes)."""

    eligible: np.ndarray  #: DP-gain bound > 0, band margin, OOF utility >= production's - tolerance
    dp: np.ndarray  #: each candidate's OOF DP
    dp_se: np.ndarray  #: its bootstrap SE (the tie width of the choice)
    utility: np.ndarray  #: each candidate's OOF utility
    lower_bound: np.ndarray  #: simultaneous lower bound of the OOF DP gain
    records: list[dict[str, Any]]  #: per candidate: why it is (in)eligible
    production: dict[str, float]  #: production's OOF metrics


def cv_gate(
    oof: OutOfFold, *, utility: str, tolerance: float | None, band: float | None, n_boot: int, random_state: int,
    fresh_rows: int | None = None,
) -> CVGate:
    """Apply the rule's gate to out-of-fold decisions (module docstring, step 4).

    Example
    -------
    >>> y = np.tile([1, 0], 100); s = np.repeat(["a", "b"], 100); prod = np.r_[np.ones(100), np.zeros(100)]
    >>> oof = OutOfFold(np.arange(200) % 5, np.full((1, 200), 0.6), np.full((1, 200), 0.5), prod.astype(int),
    ...                 prod, True, np.ones(200, dtype=int), y=y, s=s)
    >>> g = cv_gate(oof, utility="balanced_accuracy", tolerance=0.02, band=None, n_boot=50, random_state=0)
    >>> bool(g.eligible[0]), g.records[0]["selection"], g.records[0]["utility_diff"]
    (True, 'cv5', 0.0)
    """
    y, s, D = oof.y, oof.s, oof.decisions
    g = simultaneous_gate(oof.production, D, s, band=band, n_boot=n_boot, random_state=random_state,
                          fresh_rows=fresh_rows)
    cand = [outcome_metrics(y, oof.proba[j], s, oof.thresholds[j]) for j in range(len(D))]
    prod = decision_metrics(y, oof.production, s) | {"auc": auc(y, oof.production_proba)}  # at its own threshold
    u = np.array([c[utility] for c in cand])
    diff = u - prod[utility]
    n = len(y)
    W = bootstrap_weights(n, n_boot, random_state=random_state).astype(float)  # the gate's own resamples
    ub = _utility_boot(W, np.vstack([oof.production, D]).astype(float), y, utility)
    diff_se = (ub[:, 1:] - ub[:, :1]).std(axis=0, ddof=1) if ub is not None else np.full(len(D), np.nan)
    util_ok = np.ones(len(D), dtype=bool) if tolerance is None else diff >= -tolerance - 1e-12
    eligible = g.eligible & util_ok
    head = {"selection": f"cv{oof.folds}", "folds": oof.folds, "oof_rows": n, "production_refit": oof.production_refit}
    records = [{**head, **g.record(j), "oof": {k: float(cand[j][k]) for k in ("dp", "selection_rate", utility)},
                "utility": utility, "utility_diff": float(diff[j]),
                "utility_diff_se": float(diff_se[j]) if np.isfinite(diff_se[j]) else None,
                "utility_tolerance": tolerance, "utility_ok": bool(util_ok[j]), "eligible": bool(eligible[j])}
               for j in range(len(D))]
    return CVGate(eligible, np.array([c["dp"] for c in cand]), g.dp_se, u, g.lower_bound, records,
                  {k: float(v) for k, v in prod.items()})
