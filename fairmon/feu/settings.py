"""FEU search settings: the paper's decision-variable bounds, NSGA-II budget and selection weights.

Defaults are the reference settings (population 30, 15 generations, seed 42, GESD m=100, N=10);
:meth:`FEUSettings.small` is the documented demo/CI setting (population 8, 3 generations, a smaller
GESD sample) that finishes in seconds on German-sized data.

Example
-------
>>> FEUSettings().population, FEUSettings.small().population
(30, 8)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from fairmon.config import EPOCH_BOUNDS, ERR_ENSEMBLE_FOLDS, LR_BOUNDS, THRESHOLD_BOUNDS
from fairmon.errors import ConfigError

__all__ = ["FEUSettings", "ERR_SETTING", "UTILITIES"]

#: threshold-aware utilities (default balanced accuracy) and the paper's threshold-free AUC
UTILITIES = ("balanced_accuracy", "f1", "accuracy", "auc")

ERR_SETTING = "FEU setting {name}={value!r} is invalid: {why}"

# The default decision-variable bounds (LR_BOUNDS, EPOCH_BOUNDS, THRESHOLD_BOUNDS) live with the monitor
# spec's ``retraining`` section (fairmon.config), so a spec without ``bounds`` and ``FEUSettings()``
# search the same space; FEU imports them from there, never the reverse.


def _default_gesd() -> dict[str, Any]:
    return {"explainer": "shap+lime", "sample_size": 100, "n_perturbations": 10, "sigma": 0.1, "mask_prob": 0.2}


@dataclass(frozen=True)
class FEUSettings:
    """Everything :func:`fairmon.feu._search` needs besides the data.

    Parameters
    ----------
    lr_bounds
        Learning-rate range, sampled log-uniformly (the optimiser works on ``log10(lr)``).
    epoch_bounds
        Integer epochs range (inclusive; each integer gets an equal share of the search interval).
    threshold_bounds
        Decision threshold range.
    population, generations, max_evaluations, time_budget_s
        NSGA-II budget; the search stops at whichever limit comes first (a limit is checked between
        generations, so a generation in progress finishes). Only generations make runs reproducible:
        a time budget depends on the machine. ``time_budget_s`` counts from the step's start and covers
        the whole step: the baselines run first; the search stops early enough to leave the estimated
        time of the cross-validated gate's refits and of its front's test metrics; and only the
        refits that fit are made, in order of validation DP (:mod:`fairmon.feu._budget`).
    split
        Train / validation / test fractions (stratified by label). Objectives and selection use the
        validation part; reported metrics use the test part.
    weights
        Chebyshev weights of (AUC, DP, GESD) (paper: 0.4, 0.3, 0.3).
    selection_scale
        How the Chebyshev selection puts the objectives on comparable scales before weighting the
        distances to the ideal point: ``"unit"`` (default) uses ``1 - AUC``, DP and GESD as they are
        (all in ``[0, 1]``); ``"range"`` min-max normalises each over the Pareto set, which inflates
        noise-level spreads (see :func:`fairmon.feu.chebyshev_select` and ``nsga`` module notes).
    gesd
        Keyword arguments of :func:`fairmon.explain.gesd` for the GESD objective and report.
    hidden, batch_size
        Network and mini-batch (paper: 64-32, 32).
    crossover_prob, crossover_eta, mutation_eta
        SBX(prob 0.9, eta 15) and PM(eta 20), as in the paper.
    utility
        The utility objective: threshold-aware ``"balanced_accuracy"`` (default), ``"f1"`` or
        ``"accuracy"``; ``"auc"`` is the paper's threshold-free choice (:meth:`paper`). AUC is always
        reported.
    positive_rate_band
        pymoo constraint: a candidate's validation positive rate lies within this absolute distance
        of the production model's (default 0.10; None: off). Infeasible candidates stay in the results,
        marked, and are never recommended.
    utility_tolerance
        pymoo constraint: validation utility no worse than production's minus this (default 0.02).
    fairness_weight_bounds
        Range of the fair-training decision variable: the weight of a demographic-parity penalty in
        the training loss (:func:`fairmon.feu.train_mlps`); None removes the variable (paper mode).
        Default ``(0, 30)`` (was ``(0, 10)``): with ``(0, 10)`` the default-mode search on Adult
        (8,000-row subsample, seed 42) put its whole front at weights 6.3-9.7, against the bound, and
        a grid on the validation split of that seed (lr 3e-4..3e-3, 10 or 30 epochs, thresholds
        0.2..0.8, within the band and the utility floor) gave a lowest DP of 0.183 at weight 0, 0.086
        at 10, 0.067 at 20, 0.063 at 30 and 0.068 at 40: the squared penalty keeps lowering DP up to
        ~30 and no further (``benchmarks/feu_paper/README.md``).
    recommend_bootstrap
        Paired bootstrap resamples of the validation rows for "better than production by more than
        noise" (the recommendation rule, :mod:`fairmon.feu._recommend`).
    cv_below_rows, cv_folds
        Cross-validated recommendation gate (default 5000 and 5; ``cv_below_rows=0`` switches it
        off): when the validation split has fewer than ``cv_below_rows`` rows, each feasible front
        candidate's recipe (and FEU's production stand-in) is refit on ``cv_folds`` stratified folds
        of train ∪ validation and the rule is applied to the pooled out-of-fold decisions instead of
        the validation split's (:mod:`fairmon.feu._crossval`). Why: the search selects on validation,
        so on a small split the front's validation figures are optimistic (German's 200 rows:
        session 7's recommended candidate on seed 46 lost 0.059 balanced accuracy on test while
        within the tolerance on validation; Adult's 1,200 rows too, which is why the default is 5000:
        :mod:`fairmon.feu._crossval` has the measurement).
    cv_deploy
        What the cross-validated gate recommends and registers (default ``"ensemble"``): the chosen
        recipe's fold ensemble (its ``cv_folds`` fold models, the mean of their probabilities: the
        models whose out-of-fold decisions the gate judged; :mod:`fairmon.feu._ensemble`), or
        ``"searched"``, the searched model (one fit on the training split; the positive-rate band is
        then also required of its own validation rate). Why the ensemble: the gate judges a recipe,
        and one fit of it on German's 500 training rows moved its test rate and utility by
        0.05-0.08 from the recipe's (``benchmarks/feu_paper/README.md``, sessions 8-9). The chosen
        ensemble's positive rate must also stay inside the band on nested out-of-fold rows
        (:mod:`fairmon.feu._nested`).
    group_thresholds
        Opt-in (default False): one more decision variable, the "parity shift" ``s`` in ``[0, 1]``,
        moving each protected group's threshold from the candidate's ``tau`` towards the score where
        the group's training positive rate equals the overall one (``tau_g = (1 - s) tau + s q_g``;
        groups with fewer than 20 training rows keep ``tau``; :mod:`fairmon.feu._group_thresholds`).
        Such a candidate uses the protected attribute at decision time — disparate treatment, unlawful
        in some domains (e.g. credit under ECOA) — so a team must switch it on. Not in paper mode.
        It also lets fairlearn's tuned ThresholdOptimizer (group-specific thresholds too) withhold a
        candidate it beats (:mod:`fairmon.feu._versus_mitigator`); off, that comparison is only said.
    baselines
        Compute the baselines (production, constant, fairlearn ThresholdOptimizer and
        ExponentiatedGradient under demographic parity) on the same split. Both mitigators optimise
        balanced accuracy whatever ``utility`` is (:mod:`fairmon.feu._baselines`).
    """

    lr_bounds: tuple[float, float] = LR_BOUNDS
    epoch_bounds: tuple[int, int] = EPOCH_BOUNDS
    threshold_bounds: tuple[float, float] = THRESHOLD_BOUNDS
    population: int = 30
    generations: int = 15
    max_evaluations: int | None = None
    time_budget_s: float | None = None
    split: tuple[float, float, float] = (0.5, 0.2, 0.3)
    weights: tuple[float, float, float] = (0.4, 0.3, 0.3)
    selection_scale: Literal["unit", "range"] = "unit"
    gesd: dict[str, Any] = field(default_factory=_default_gesd)
    hidden: tuple[int, ...] = (64, 32)
    batch_size: int = 32
    crossover_prob: float = 0.9
    crossover_eta: float = 15.0
    mutation_eta: float = 20.0
    # --- what makes a candidate deployable (issue 16; ``paper()`` switches all of it off) ---
    utility: Literal["balanced_accuracy", "f1", "accuracy", "auc"] = "balanced_accuracy"
    positive_rate_band: float | None = 0.10
    utility_tolerance: float | None = 0.02
    fairness_weight_bounds: tuple[float, float] | None = (0.0, 30.0)
    recommend_bootstrap: int = 200
    cv_below_rows: int = 5000
    cv_folds: int = 5
    cv_deploy: Literal["ensemble", "searched"] = "ensemble"
    baselines: bool = True
    group_thresholds: bool = False

    def __post_init__(self) -> None:
        lo, hi = self.lr_bounds
        if not (0 < lo < hi):
            raise ConfigError(ERR_SETTING.format(name="lr_bounds", value=self.lr_bounds, why="need 0 < low < high"))
        elo, ehi = self.epoch_bounds
        if not (1 <= int(elo) <= int(ehi)):
            raise ConfigError(ERR_SETTING.format(name="epoch_bounds", value=self.epoch_bounds, why="need 1 <= low <= high"))
        tlo, thi = self.threshold_bounds
        if not (0 < tlo <= thi < 1):
            raise ConfigError(
                ERR_SETTING.format(name="threshold_bounds", value=self.threshold_bounds, why="need 0 < low <= high < 1")
            )
        if self.population < 2:
            raise ConfigError(ERR_SETTING.format(name="population", value=self.population, why="need >= 2"))
        if self.generations < 1:
            raise ConfigError(ERR_SETTING.format(name="generations", value=self.generations, why="need >= 1"))
        if self.max_evaluations is not None and self.max_evaluations < self.population:
            raise ConfigError(
                ERR_SETTING.format(name="max_evaluations", value=self.max_evaluations, why="need >= population")
            )
        if self.time_budget_s is not None and not self.time_budget_s > 0:
            raise ConfigError(ERR_SETTING.format(name="time_budget_s", value=self.time_budget_s, why="need > 0"))
        if len(self.split) != 3 or min(self.split) <= 0 or not math.isclose(sum(self.split), 1.0, abs_tol=1e-6):
            raise ConfigError(
                ERR_SETTING.format(name="split", value=self.split, why="need three positive fractions summing to 1")
            )
        if len(self.weights) != 3 or min(self.weights) < 0 or sum(self.weights) <= 0:
            raise ConfigError(ERR_SETTING.format(name="weights", value=self.weights, why="need three weights >= 0"))
        if self.selection_scale not in ("unit", "range"):
            raise ConfigError(
                ERR_SETTING.format(name="selection_scale", value=self.selection_scale, why="need 'unit' or 'range'")
            )

        if self.utility not in UTILITIES:
            raise ConfigError(ERR_SETTING.format(name="utility", value=self.utility, why=f"need one of {UTILITIES}"))
        for name in ("positive_rate_band", "utility_tolerance"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 1:
                raise ConfigError(ERR_SETTING.format(name=name, value=v, why="need 0 <= value <= 1 (or null: off)"))
        fw = self.fairness_weight_bounds
        if fw is not None and not (0 <= fw[0] <= fw[1]):
            raise ConfigError(ERR_SETTING.format(name="fairness_weight_bounds", value=fw, why="need 0 <= low <= high"))
        if not isinstance(self.group_thresholds, bool):
            raise ConfigError(ERR_SETTING.format(name="group_thresholds", value=self.group_thresholds,
                                                 why="need true or false"))
        if self.group_thresholds and self.paper_mode:
            raise ConfigError(ERR_SETTING.format(name="group_thresholds", value=True,
                                                 why="paper mode has no group-specific thresholds"))
        if isinstance(self.cv_below_rows, bool) or not isinstance(self.cv_below_rows, int) or self.cv_below_rows < 0:
            raise ConfigError(ERR_SETTING.format(name="cv_below_rows", value=self.cv_below_rows,
                                                 why="need an integer >= 0 (0: no cross-validated gate)"))
        if isinstance(self.cv_folds, bool) or not isinstance(self.cv_folds, int) or not 2 <= self.cv_folds <= 20:
            raise ConfigError(ERR_SETTING.format(name="cv_folds", value=self.cv_folds, why="need an integer in 2..20"))
        if self.cv_deploy not in ("ensemble", "searched"):
            raise ConfigError(ERR_SETTING.format(name="cv_deploy", value=self.cv_deploy,
                                                 why="need 'ensemble' or 'searched'"))
        if self.cv_deploy == "ensemble" and self.cv_folds < 3:
            raise ConfigError(ERR_ENSEMBLE_FOLDS.format(folds=self.cv_folds))
        if self.recommend_bootstrap < 20:
            raise ConfigError(ERR_SETTING.format(name="recommend_bootstrap", value=self.recommend_bootstrap,
                                                 why="need >= 20 resamples"))

    @property
    def paper_mode(self) -> bool:
        """The paper's threshold-free setting: AUC utility, no constraints, no fair-training knob."""
        return self.utility == "auc" and self.positive_rate_band is None and self.utility_tolerance is None

    @classmethod
    def paper(cls, **overrides: Any) -> FEUSettings:
        """The paper's FEU (reproduction only): utility AUC, no positive-rate band, no utility floor, no
        fair-training variable. Why not the default: AUC ignores the decision threshold while DP and
        GESD are 0 for a constant predictor, so the search walks to a low threshold and recommends a
        model that approves nearly everyone (DESIGN §4.3; benchmarks/feu_paper)."""
        base = cls(utility="auc", positive_rate_band=None, utility_tolerance=None, fairness_weight_bounds=None)
        return replace(base, **overrides)

    @classmethod
    def small(cls, **overrides: Any) -> FEUSettings:
        """Demo/CI setting: population 8, 3 generations, epochs 5..20, and a light GESD (40 rows drawn
        equally from the groups, 5 perturbations, KernelSHAP 32 coalitions x 10 background rows, LIME
        200 samples)."""
        base = cls(
            population=8,
            generations=3,
            epoch_bounds=(5, 20),
            gesd={
                "explainer": "shap+lime",
                "sample_size": 40,
                "n_perturbations": 5,
                "stratify": True,
                "min_group_size": 5,
                "explainer_params": {"kernelshap": {"n_samples": 32, "background_size": 10}, "lime": {"n_samples": 200}},
            },
        )
        return replace(base, **overrides)

    @classmethod
    def from_spec(cls, retraining: Any, **overrides: Any) -> FEUSettings:
        """Build from a monitor spec's ``retraining`` section (an object or a mapping).

        Fields read when present: ``split`` (a zero validation share becomes 0.2 taken from the
        training share), ``bounds`` (``lr``/``learning_rate``, ``epochs``,
        ``threshold``), ``population``, ``generations``, ``max_evaluations``, ``time_budget_s``,
        ``selection_weights`` (or ``weights``), ``selection_scale``, ``gesd``, ``utility``,
        ``positive_rate_band``, ``utility_tolerance`` and ``fairness_weight_bounds`` (for these three an
        explicit None switches the constraint or variable off), ``group_thresholds``, ``cv_below_rows``,
        ``cv_folds`` and ``cv_deploy``. Absent fields keep the defaults.

        Example
        -------
        >>> st = FEUSettings.from_spec({"utility": "auc", "positive_rate_band": None, "utility_tolerance": None})
        >>> st.utility, st.positive_rate_band, st.utility_tolerance, FEUSettings.from_spec({}).positive_rate_band
        ('auc', None, None, 0.1)
        """

        def get(obj: Any, key: str) -> Any:
            if obj is None:
                return None
            if isinstance(obj, dict):
                return obj.get(key)
            return getattr(obj, key, None)

        def has(obj: Any, key: str) -> bool:
            return obj is not None and (key in obj if isinstance(obj, dict) else hasattr(obj, key))

        kw: dict[str, Any] = {}
        for key in ("population", "generations", "max_evaluations", "time_budget_s", "selection_scale", "utility",
                    "group_thresholds", "cv_below_rows", "cv_folds", "cv_deploy"):
            v = get(retraining, key)
            if v is not None:
                kw[key] = v
        for key in ("positive_rate_band", "utility_tolerance", "fairness_weight_bounds"):  # null: switched off
            if has(retraining, key):
                v = get(retraining, key)
                kw[key] = tuple(v) if isinstance(v, list | tuple) else v
        split = get(retraining, "split")
        if split is not None:
            kw["split"] = _split_tuple(split)
        weights = get(retraining, "selection_weights")
        if weights is None:
            weights = get(retraining, "weights")
        if weights is not None:
            kw["weights"] = _triple(weights, ("auc", "dp", "gesd"))
        bounds = get(retraining, "bounds")
        for names, key in ((("lr", "learning_rate"), "lr_bounds"), (("epochs",), "epoch_bounds"),
                           (("threshold",), "threshold_bounds")):
            for n in names:
                v = get(bounds, n)
                if v is not None:
                    kw[key] = tuple(v)
                    break
        gesd = get(retraining, "gesd")
        if gesd is not None:
            kw["gesd"] = {**_default_gesd(), **(dict(gesd) if isinstance(gesd, dict) else gesd.model_dump())}
        kw.update(overrides)
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Validation share carved out of the training part when a spec's split has no validation part
#: (FEU selects on validation data and reports on test data, so it always needs one).
DEFAULT_VALIDATION = 0.2


def _split_tuple(split: Any) -> tuple[float, float, float]:
    if isinstance(split, dict) or hasattr(split, "train"):
        tr, va, te = _triple(split, ("train", "validation", "test"))
    else:
        vals = tuple(float(v) for v in split)
        if len(vals) != 3:
            raise ConfigError(ERR_SETTING.format(name="split", value=split, why="need train, validation, test"))
        tr, va, te = vals
    if va == 0.0:
        if tr <= DEFAULT_VALIDATION:
            raise ConfigError(ERR_SETTING.format(name="split", value=split, why="no room for a validation part"))
        tr, va = tr - DEFAULT_VALIDATION, DEFAULT_VALIDATION
    return (tr, va, te)


def _triple(obj: Any, keys: tuple[str, str, str]) -> tuple[float, float, float]:
    if isinstance(obj, dict):
        vals = [obj.get(k) for k in keys]
    elif hasattr(obj, keys[0]):
        vals = [getattr(obj, k, None) for k in keys]
    else:
        vals = list(obj)
    if len(vals) != 3 or any(v is None for v in vals):
        raise ConfigError(ERR_SETTING.format(name="/".join(keys), value=obj, why=f"need values for {keys}"))
    a, b, c = (float(v) for v in vals)  # type: ignore[arg-type]
    return (a, b, c)
