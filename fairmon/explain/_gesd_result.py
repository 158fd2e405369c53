"""Result objects of GESD (:mod:`fairmon.explain.gesd`): per-group stability, pairwise tests, the result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["GESDResult", "GroupStability", "PairwiseTest"]


@dataclass(frozen=True)
class GroupStability:
    """Stability of one protected group among the sampled rows."""

    group: Any
    size: int  #: sampled rows of the group (the ``S_g`` average is over these)
    population: int  #: rows of the group in the evaluated data
    stability: float  #: ``S_g``: mean per-instance stability
    std: float
    sufficient: bool  #: ``size >= min_group_size``; insufficient groups are not in the GESD value

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": _jsonable(self.group),
            "size": self.size,
            "population": self.population,
            "stability": _nan_to_none(self.stability),
            "std": _nan_to_none(self.std),
            "sufficient": self.sufficient,
        }


@dataclass(frozen=True)
class PairwiseTest:
    """Two-sided Mann-Whitney U test between two groups' per-instance stabilities."""

    group_a: Any
    group_b: Any
    u_statistic: float
    p_value: float
    p_adjusted: float  #: Holm-adjusted over all pairs (equal to ``p_value`` for two groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_a": _jsonable(self.group_a),
            "group_b": _jsonable(self.group_b),
            "u_statistic": _nan_to_none(self.u_statistic),
            "p_value": _nan_to_none(self.p_value),
            "p_adjusted": _nan_to_none(self.p_adjusted),
        }


@dataclass(frozen=True)
class GESDResult:
    """Value, per-group stability and per-instance evidence of one GESD evaluation.

    ``value`` is ``nan`` (and ``status`` explains) when fewer than two groups are sufficient.
    ``components`` maps each component explainer to its own per-group stabilities and GESD value
    (``explainer="shap+lime"`` gives the SHAP-only and LIME-only numbers beside the combined one).
    ``noise_floor`` is the ``noise_floor_quantile`` of GESD under a permutation null over the group
    labels of the sampled rows (``noise_floor_permutations`` relabellings of the same per-instance
    stabilities): a value at or below it is indistinguishable from exchangeable groups
    (:attr:`within_noise`). ``nan`` when the floor was not computed.
    """

    value: float
    p_value: float
    groups: tuple[GroupStability, ...]
    pairwise: tuple[PairwiseTest, ...]
    instance_index: np.ndarray  #: row positions in X of the sampled rows
    instance_group: np.ndarray  #: group of each sampled row
    instance_stability: np.ndarray  #: ``S(x)`` of each sampled row
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    elapsed_s: float = 0.0
    noise_floor: float = float("nan")
    noise_floor_quantile: float = 0.95
    noise_floor_permutations: int = 0

    @property
    def insufficient_groups(self) -> list[Any]:
        return [g.group for g in self.groups if not g.sufficient]

    @property
    def group_stability(self) -> dict[Any, float]:
        return {g.group: g.stability for g in self.groups}

    @property
    def within_noise(self) -> bool:
        """Whether the value is at or below its noise floor (False when either is unknown)."""
        return bool(np.isfinite(self.value) and np.isfinite(self.noise_floor) and self.value <= self.noise_floor)

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the groups' stabilities differ at level ``alpha`` (False when untestable)."""
        return bool(np.isfinite(self.p_value) and self.p_value < alpha)

    def to_dict(self, *, instances: bool = True) -> dict[str, Any]:
        """JSON-ready form (``nan`` becomes ``None``); ``instances=False`` drops per-row arrays."""
        out: dict[str, Any] = {
            "metric": "gesd",
            "value": _nan_to_none(self.value),
            "p_value": _nan_to_none(self.p_value),
            "status": self.status,
            "noise_floor": _nan_to_none(self.noise_floor),
            "noise_floor_quantile": self.noise_floor_quantile,
            "noise_floor_permutations": self.noise_floor_permutations,
            "groups": [g.to_dict() for g in self.groups],
            "insufficient_groups": [_jsonable(g) for g in self.insufficient_groups],
            "pairwise": [p.to_dict() for p in self.pairwise],
            "components": {
                name: {
                    "value": _nan_to_none(c["value"]),
                    "p_value": _nan_to_none(c["p_value"]),
                    "noise_floor": _nan_to_none(c.get("noise_floor")),
                    "groups": {str(_jsonable(g)): _nan_to_none(v) for g, v in c["groups"].items()},
                }
                for name, c in self.components.items()
            },
            "settings": self.settings,
            "elapsed_s": self.elapsed_s,
        }
        if instances:
            out["instances"] = [
                {"index": int(i), "group": _jsonable(g), "stability": float(s)}
                for i, g, s in zip(self.instance_index, self.instance_group, self.instance_stability)
            ]
        return out



def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _nan_to_none(v: Any) -> Any:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f
