"""FEU's results (the candidates on the Pareto front and the chosen one) and how one is chosen."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairmon.errors import ConfigError
from fairmon.feu.settings import FEUSettings

if TYPE_CHECKING:
    from fairmon.registry.model import Model
    from fairmon.registry.registry import SnapshotInfo

__all__ = ["FEUResult", "Candidate", "chebyshev_select", "non_dominated", "WORST", "OBJECTIVES"]

WORST = (1.0, 1.0, 1.0)
#: the minimised objectives (utility = ``FEUSettings.utility``: balanced accuracy by default, AUC in paper mode)
OBJECTIVES = ("1-utility", "dp", "gesd")


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class Candidate:
    """One evaluated configuration: hyperparameters, validation objectives and (Pareto) test metrics."""

    id: int
    lr: float
    epochs: int
    threshold: float
    seed: int
    objectives: tuple[float, float, float]  #: (1 - utility, DP, GESD) on validation, minimised
    validation: dict[str, float]
    test: dict[str, float] = field(default_factory=dict)
    chebyshev: float | None = None
    generation: int = 0
    error: str | None = None
    fairness_weight: float = 0.0  #: the DP-penalty weight it was trained with (0: the paper's network)
    constraints: tuple[float, ...] = ()  #: pymoo constraint values on validation (<= 0: satisfied)
    #: simultaneous 95% lower bound of DP(production) - DP(this) on validation, over all feasible
    #: candidates (per-candidate one-sided bound before session 7)
    dp_improvement_lb: float | None = None
    #: why it is (in)eligible for recommendation (feasible front candidates in the default mode):
    #: DP gain, its SE, simultaneous and per-candidate bounds, critical value, positive-rate
    #: difference, its SE and margin, band, ``gain_ok`` / ``band_ok`` / ``eligible``
    recommendation_gate: dict[str, Any] | None = None
    parity_shift: float | None = None  #: the group-threshold variable s (None: the setting is off)
    group_thresholds: dict[str, float] | None = None  #: {group: threshold} when group thresholds are on
    #: the recommended candidate only: which model is deployed — ``{"model": "searched"}`` (this network) or
    #: ``{"model": "fold_ensemble", ...}`` (the recipe's fold models, :mod:`fairmon.feu._ensemble`; then
    #: ``validation`` / ``test`` / ``objectives`` are the ensemble's and its validation is not held out)
    deployment: dict[str, Any] | None = None

    @property
    def feasible(self) -> bool:
        """Whether every constraint holds (no constraints: feasible)."""
        return self.error is None and all(c <= 0 for c in self.constraints)

    @property
    def hyperparameters(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"lr": self.lr, "epochs": self.epochs, "threshold": self.threshold,
                                       "fairness_weight": self.fairness_weight}
        if self.parity_shift is not None:
            out["parity_shift"] = self.parity_shift
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "generation": self.generation,
            "hyperparameters": self.hyperparameters,
            "seed": self.seed,
            "objectives": dict(zip(OBJECTIVES, self.objectives)),
            "validation": _clean(self.validation),
            "test": _clean(self.test),
            "chebyshev": self.chebyshev,
            "error": self.error,
            "constraints": list(self.constraints),
            "feasible": self.feasible,
            "dp_improvement_lb": self.dp_improvement_lb,
            "recommendation_gate": self.recommendation_gate,
            "group_thresholds": self.group_thresholds,
            "deployment": self.deployment,
        }


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """NaN (e.g. GESD with one sampled group) becomes None so the dict is valid JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


@dataclass
class FEUResult:
    """Pareto set, the recommended candidate (saved as a registry ``candidate``) and the baselines.

    ``selected`` is None when no feasible candidate is better than production by more than noise
    (``recommendation`` then says so and nothing is registered). It is the **deployed** model: the
    Pareto candidate of the same ``id``, or with the cross-validated gate's fold ensemble
    (``FEUSettings.cv_deploy``) that ensemble's figures (``selected.deployment`` says which).
    """

    pareto: list[Candidate]
    selected: Candidate | None
    evaluations: list[Candidate]
    model: Model | None
    snapshot: SnapshotInfo | None
    settings: FEUSettings
    random_state: int
    generations_run: int
    stopped_by: str
    elapsed_s: float
    data: dict[str, Any] = field(default_factory=dict)
    recommendation: str = ""
    baselines: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    gesd_noise_floor: float | None = None
    #: which rows the recommendation gate read: ``{"selection": "validation", ...}`` or, below
    #: ``FEUSettings.cv_below_rows`` validation rows, ``"cv5"`` with folds, out-of-fold rows, production's
    #: out-of-fold metrics and the CPU seconds the refits took (:mod:`fairmon.feu._crossval`); with
    #: ``time_budget_s`` which candidates were refit and why (:mod:`fairmon.feu._budget`); ``timing``:
    #: seconds of the baselines, the tail after the refits (estimate and measured) and the mitigator check
    selection: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "feu",
            "selection": self.selection,
            "selected": None if self.selected is None else self.selected.to_dict(),
            "recommendation": self.recommendation,
            "baselines": {k: {part: _clean(m) for part, m in v.items()} for k, v in self.baselines.items()},
            "gesd_noise_floor": self.gesd_noise_floor,
            "pareto": [c.to_dict() for c in self.pareto],
            "n_evaluations": len(self.evaluations),
            "generations_run": self.generations_run,
            "stopped_by": self.stopped_by,
            "elapsed_s": self.elapsed_s,
            "random_state": self.random_state,
            "settings": self.settings.to_dict(),
            "snapshot": None if self.snapshot is None else self.snapshot.to_dict(),
            "data": self.data,
        }


# ---------------------------------------------------------------------- selection helpers
def non_dominated(F: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``F`` (minimised objectives) that no other row dominates.

    Example
    -------
    >>> non_dominated(np.array([[0, 1], [1, 0], [1, 1]])).tolist()
    [0, 1]
    """
    F = np.asarray(F, dtype=float)
    keep = []
    for i in range(len(F)):
        dominated = np.any(np.all(F <= F[i], axis=1) & np.any(F < F[i], axis=1))
        if not dominated:
            keep.append(i)
    return np.asarray(keep, dtype=int)


def chebyshev_select(
    F: np.ndarray, weights: Sequence[float], *, scale: Literal["unit", "range"] = "unit"
) -> tuple[int, np.ndarray]:
    """Index minimising the Chebyshev score ``T = max_i w_i * (f_i - z*_i) / s_i`` and all scores.

    ``z*`` is the ideal point (per-objective minimum over the rows of ``F``, objectives minimised).
    ``scale="unit"`` keeps the objectives on their own scale (``s_i = 1``; right for objectives that
    share one scale, such as FEU's ``1 - AUC``, DP and GESD in ``[0, 1]``); ``scale="range"`` divides
    by each objective's spread over the rows (min-max normalisation; a constant objective gets
    ``s_i = 1``). Ties go to the lowest index.

    Example
    -------
    >>> F = np.array([[0.20, 0.10, 0.010], [0.25, 0.02, 0.005], [0.40, 0.00, 0.000]])
    >>> chebyshev_select(F, (0.4, 0.3, 0.3))[0], chebyshev_select(F, (0.4, 0.3, 0.3), scale="range")[0]
    (1, 1)
    """
    F = np.asarray(F, dtype=float)
    if scale not in ("unit", "range"):
        raise ConfigError(f"chebyshev_select scale must be 'unit' or 'range', got {scale!r}")
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0) if scale == "range" else np.ones_like(lo)
    T = (np.asarray(weights, dtype=float)[None, :] * (F - lo) / span).max(axis=1)
    return int(np.argmin(T)), T


def feasible_row(r: dict[str, Any]) -> bool:
    """Whether an evaluation of the archive trained and meets every constraint (:attr:`Candidate.feasible`)."""
    return r["error"] is None and all(c <= 0 for c in r["constraints"])


def reported_front(archive: Sequence[dict[str, Any]]) -> list[int]:
    """Archive indices of the Pareto set FEU reports: the non-dominated feasible evaluations when any is
    feasible (infeasible ones are never recommended), else the non-dominated trained ones, all marked
    infeasible; ``[]`` when none trained.

    Example
    -------
    >>> row = lambda obj, c: {"objectives": obj, "constraints": [c], "error": None, "state": {}}
    >>> reported_front([row([0.2, 0.1, 0.0], 0.0), row([0.1, 0.0, 0.0], 0.5), row([0.3, 0.0, 0.0], -0.1)])
    [0, 2]
    """
    valid = [i for i, r in enumerate(archive) if r["state"] is not None]
    ids = [i for i in valid if feasible_row(archive[i])] or valid
    if not ids:
        return []
    return [ids[k] for k in non_dominated(np.asarray([archive[i]["objectives"] for i in ids], dtype=float))]


def front_feasible(archive: Sequence[dict[str, Any]], front: Sequence[int]) -> bool:
    """Whether :func:`reported_front` holds feasible candidates (then all of them are), so that one can be
    recommended."""
    return bool(front) and feasible_row(archive[front[0]])


def candidate_of(
    r: dict[str, Any], *, test: dict[str, float] | None = None, chebyshev: float | None = None,
    dp_lb: float | None = None, gate: dict[str, Any] | None = None,
) -> Candidate:
    """A :class:`Candidate` from one evaluation of the search's archive."""
    return Candidate(
        id=int(r["id"]),
        lr=float(r["lr"]),
        epochs=int(r["epochs"]),
        threshold=float(r["threshold"]),
        seed=int(r["seed"]),
        objectives=tuple(float(v) for v in r["objectives"]),  # type: ignore[arg-type]
        validation=dict(r["validation"]),
        test=dict(test or {}),
        chebyshev=chebyshev,
        generation=int(r["generation"]),
        error=r["error"],
        fairness_weight=float(r.get("fairness_weight", 0.0)),
        constraints=tuple(float(v) for v in r.get("constraints", ())),
        dp_improvement_lb=dp_lb,
        recommendation_gate=gate,
        parity_shift=None if r.get("parity_shift") is None else float(r["parity_shift"]),
        group_thresholds=None if r.get("group_thresholds") is None else dict(r["group_thresholds"]),
    )
