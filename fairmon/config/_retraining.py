"""The ``retraining`` section: FEU candidates (proposed, never deployed) and the search bounds FEU uses.

The decision-variable bounds live here, with the section that configures them, and
:mod:`fairmon.feu.settings` imports them (never the reverse: the spec loader must not import FEU).

Examples
--------
>>> RetrainingSpec().bounds.epochs == EPOCH_BOUNDS
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, field_validator, model_validator

from fairmon.config._limits import (
    MAX_EPOCHS,
    MAX_EVALUATIONS,
    MAX_FAIRNESS_WEIGHT,
    MAX_GENERATIONS,
    MAX_N_JOBS,
    MAX_POPULATION,
    MAX_TIME_BUDGET_S,
)
from fairmon.config._messages import (
    ERR_BOUNDS,
    ERR_COST_LIMIT,
    ERR_ENSEMBLE_FOLDS,
    ERR_SPLIT_SUM,
    ERR_TRAINING_DATA,
    ERR_TRAINING_WINDOW,
    ERR_WEIGHT_BOUNDS,
)
from fairmon.config._parsers import Fraction, SpecSection
from fairmon.config._paths import SpecPath

__all__ = [
    "EPOCH_BOUNDS",
    "LR_BOUNDS",
    "THRESHOLD_BOUNDS",
    "RetrainingSpec",
    "SearchBounds",
    "SelectionWeights",
    "Split",
    "TrainingData",
    "Utility",
]

# Default decision-variable bounds: the one source of truth for the spec's ``retraining.bounds`` and
# fairmon.feu.FEUSettings. The paper gives no ranges; these are the settings benchmarks/feu_paper ran
# with (its recorded ``settings`` show them).
#: learning rate, searched log-uniformly
LR_BOUNDS: tuple[float, float] = (1e-4, 1e-1)
#: training epochs (integers, inclusive)
EPOCH_BOUNDS: tuple[int, int] = (5, 50)
#: decision threshold
THRESHOLD_BOUNDS: tuple[float, float] = (0.2, 0.8)

#: FEU's utility objective: threshold-aware (default balanced accuracy) or the paper's AUC
#: (``fairmon.feu.UTILITIES`` lists the same names; a test keeps them equal)
Utility = Literal["balanced_accuracy", "f1", "accuracy", "auc"]

class TrainingData(SpecSection):
    """Labelled training data for retraining: a CSV or Parquet file (``path``, spec-relative).

    It needs the features, the sensitive attribute FEU optimises for and ``columns.label``. Training
    data by ``window`` (the data source over a date range) is not supported: FEU reads one file, and
    a spec asking for a window is refused rather than failing at the first drift.
    """

    path: SpecPath
    format: Literal["csv", "parquet"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_window(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "window" in data:
            raise ValueError("window: " + ERR_TRAINING_WINDOW)
        return data


class Split(SpecSection):
    """Stratified train/validation/test fractions.

    FEU selects its candidate on the validation part and reports metrics on the untouched test part,
    so a validation share is required (the reference code's 70/30 split selects on test, which
    flatters the reported numbers).
    """

    train: Fraction = 0.5
    validation: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.2
    test: Fraction = 0.3
    stratify: bool = True

    @model_validator(mode="after")
    def _sum(self) -> Split:
        total = self.train + self.validation + self.test
        if abs(total - 1.0) > 1e-9:
            raise ValueError("train: " + ERR_SPLIT_SUM.format(total=round(total, 6)))
        return self


def _bounds(v: tuple[float, float]) -> tuple[float, float]:
    low, high = v
    if not 0 < low < high:
        raise ValueError(ERR_BOUNDS.format(value=[low, high]))
    return v


class SearchBounds(SpecSection):
    """FEU decision-variable bounds: learning rate (sampled log-uniformly), epochs, decision threshold.

    The defaults are this module's ``LR_BOUNDS``, ``EPOCH_BOUNDS`` and ``THRESHOLD_BOUNDS``, which
    :class:`fairmon.feu.FEUSettings` uses too, so a spec without ``bounds`` searches what
    ``FEUSettings()`` searches. ``epochs`` is at most ``MAX_EPOCHS`` (each candidate trains that long).
    """

    lr: tuple[float, float] = LR_BOUNDS
    epochs: tuple[int, int] = EPOCH_BOUNDS
    threshold: tuple[float, float] = THRESHOLD_BOUNDS

    @field_validator("lr")
    @classmethod
    def _positive_bounds(cls, v: tuple[float, float]) -> tuple[float, float]:
        return _bounds(v)

    @field_validator("epochs")
    @classmethod
    def _epochs(cls, v: tuple[int, int]) -> tuple[int, int]:
        _bounds(v)
        if v[1] > MAX_EPOCHS:
            raise ValueError(ERR_COST_LIMIT.format(value=v[1], limit=MAX_EPOCHS))
        return v

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, v: tuple[float, float]) -> tuple[float, float]:
        _bounds(v)
        if v[1] >= 1:
            raise ValueError(ERR_BOUNDS.format(value=list(v)) + " and high < 1")
        return v


class SelectionWeights(SpecSection):
    """Chebyshev weights (paper: 0.4 / 0.3 / 0.3): paper mode's pick of the recommended Pareto candidate.

    The default mode recommends the lowest DP among feasible candidates whose DP gain beats its
    bootstrap noise, on validation or out of fold below ``cv_below_rows`` (:mod:`fairmon.feu._recommend`),
    and records these scores for comparison.
    """

    auc: Annotated[float, Field(ge=0.0)] = 0.4
    dp: Annotated[float, Field(ge=0.0)] = 0.3
    gesd: Annotated[float, Field(ge=0.0)] = 0.3


class RetrainingSpec(SpecSection):
    """FEU retraining candidates (proposed, never deployed automatically).

    ``trigger``: ``on_drift`` runs FEU in every window whose drift alert opens; ``manual`` only on
    request (``fairmon feu --monitor SPEC --window DATE`` or the DAG's ``feu`` param, trigger conf
    ``{"feu": true}``), which also works for ``on_drift`` at a window without drift. Stops at
    whichever comes first: ``generations``, ``max_evaluations`` or ``time_budget_s`` (counted from the
    step's start, it covers the whole step: the baselines run first, the search leaves the estimated
    time of the out-of-fold refits of ``cv_below_rows`` below and of its front's test metrics, and only
    the candidates whose refits fit are refit, in order of validation DP).
    With retraining enabled, ``time_budget_s`` may be at most 80% of the FEU step's Airflow limit, the
    lower of its task timeout (4 x ``execution.task_timeout_s``) and the window run's (90% of
    the shortest schedule interval, when the next run is due); a longer budget would be cut, and the spec is refused.

    What makes a candidate deployable (issue 16; :class:`fairmon.feu.FEUSettings` has the same
    defaults): ``utility`` is the utility objective (``balanced_accuracy`` by default, ``f1``,
    ``accuracy``, or the paper's threshold-free ``auc``); ``positive_rate_band`` keeps a candidate's
    validation positive rate within this absolute distance of the production model's and
    ``utility_tolerance`` its utility no lower than production's minus this (both pymoo constraints
    in ``[0, 1]``; ``null`` switches one off); ``fairness_weight_bounds`` is the range of the
    demographic-parity penalty weight in the training loss (``null``: no such decision variable).
    The paper's setting is ``utility: auc`` with the other three ``null``.

    ``group_thresholds`` (opt-in, default ``false``): one more decision variable, the parity shift
    ``s`` in ``[0, 1]``, moving each protected group's threshold from the candidate's towards the score
    at which the group's training positive rate equals the overall one (groups with < 20 training
    rows keep the single threshold). Such a candidate reads the protected attribute when it decides
    — disparate treatment, unlawful in some domains (e.g. credit decisions under ECOA) — so it is
    off unless the team switches it on; the registered candidate records its group thresholds
    (:mod:`fairmon.feu._group_thresholds`). Needs the sensitive column among the features; not in the
    paper's setting. Only with it on may fairlearn's tuned ThresholdOptimizer, which decides with
    group-specific thresholds too, withhold a candidate it beats (:mod:`fairmon.feu._versus_mitigator`);
    off, the recommendation only says that comparison.

    ``cv_below_rows`` (default 5000; ``0`` switches it off) and ``cv_folds`` (default 5): when the
    validation split has fewer rows than ``cv_below_rows``, the recommendation gate does not read the
    validation split alone but refits every feasible candidate's recipe (and FEU's production
    stand-in) on ``cv_folds`` stratified folds of train ∪ validation and applies the same rule to the
    out-of-fold decisions (:mod:`fairmon.feu._crossval`): on a small validation split the searched
    candidates' validation figures are optimistic, since the search selected on them (measured
    on Adult's 1,200-row split too, hence 5000: ``benchmarks/feu_paper/README.md``, "Session 14").
    ``cv_deploy`` (default ``"ensemble"``) says what that gate registers: the chosen recipe's fold
    ensemble (the ``cv_folds`` fold models the gate judged, averaging their probabilities;
    :mod:`fairmon.feu._ensemble`) or ``"searched"``, the searched model (the band then also held by
    its own validation rate).

    ``target`` (default ``"auto"``): whose groups FEU's DP and GESD compare. ``auto`` retrains for
    what drifted: when the window's alert is about RUMIE's most discriminated group (its honest DScore,
    which is that group's DP against the rest; also when FEU is requested at such a window), the group
    its rules define on the training data against everyone else; otherwise, and when the rules cannot
    draw the same group there (columns missing, a rule matching no row, a share far from the window's,
    fewer than 100 rows a side) or ``group_thresholds`` is on (it reads the declared attribute), the
    declared attribute (``explanations.gesd.attribute``, else the first sensitive column), which
    ``attribute`` always uses. The result records which, and why. When the rules use model inputs (the
    case ``fairmon spec check`` warns about), the group may be one the model is meant to separate: the
    follow-up says so; ``attribute`` keeps FEU on the declared attribute.
    """

    enabled: bool = False
    trigger: Literal["on_drift", "manual"] = "on_drift"
    training_data: TrainingData | None = None
    split: Split = Split()
    bounds: SearchBounds = SearchBounds()
    population: Annotated[int, Field(ge=2, le=MAX_POPULATION)] = 30
    generations: Annotated[int, Field(ge=1, le=MAX_GENERATIONS)] = 15
    max_evaluations: Annotated[int, Field(ge=1, le=MAX_EVALUATIONS)] | None = None
    time_budget_s: Annotated[float, Field(gt=0.0, le=MAX_TIME_BUDGET_S)] | None = None
    selection_weights: SelectionWeights = SelectionWeights()
    utility: Utility = "balanced_accuracy"
    positive_rate_band: Annotated[float, Field(ge=0.0, le=1.0)] | None = 0.10
    utility_tolerance: Annotated[float, Field(ge=0.0, le=1.0)] | None = 0.02
    fairness_weight_bounds: (
        tuple[Annotated[float, Field(ge=0.0, le=MAX_FAIRNESS_WEIGHT)], Annotated[float, Field(ge=0.0, le=MAX_FAIRNESS_WEIGHT)]]
        | None
    ) = (0.0, 30.0)
    group_thresholds: StrictBool = False
    cv_below_rows: Annotated[int, Field(ge=0)] = 5000
    cv_folds: Annotated[int, Field(ge=2, le=20)] = 5
    cv_deploy: Literal["ensemble", "searched"] = "ensemble"
    target: Literal["auto", "attribute"] = "auto"
    n_jobs: Annotated[int, Field(ge=1, le=MAX_N_JOBS)] = 1
    random_state: int = 42

    @field_validator("fairness_weight_bounds")
    @classmethod
    def _weight_bounds(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not 0 <= v[0] <= v[1]:
            raise ValueError(ERR_WEIGHT_BOUNDS.format(value=list(v)))
        return v

    @model_validator(mode="after")
    def _data(self) -> RetrainingSpec:
        if self.enabled and self.training_data is None:
            raise ValueError("training_data: " + ERR_TRAINING_DATA)
        if self.cv_deploy == "ensemble" and self.cv_folds < 3:
            raise ValueError("cv_folds: " + ERR_ENSEMBLE_FOLDS.format(folds=self.cv_folds))
        return self
