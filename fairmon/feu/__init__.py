"""FEU: NSGA-II retraining candidates trading utility (balanced accuracy; AUC in paper mode), outcome fairness (DP) and GESD.

``search(data, ...) -> FEUResult`` runs the search and saves the selected model as a registry
``candidate`` (never deployed automatically); ``pareto_plot(result, path)`` draws the front;
``chebyshev_select`` / ``non_dominated`` pick from any objective matrix. The MLP trainer
(``train_mlp``, ``train_mlps``, ``predict_proba``) and the outcome metrics (``dp_difference``,
``eod_difference``, ``outcome_metrics``) are the pieces the search is built from.
Names resolve lazily so ``import fairmon.feu`` does not load pandas, torch or pymoo.

>>> import numpy as np
>>> from fairmon.feu import non_dominated
>>> non_dominated(np.array([[0.1, 0.2], [0.2, 0.1], [0.3, 0.3]])).tolist()
[0, 1]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairmon._lazy import lazy_attribute

if TYPE_CHECKING:
    from fairmon.feu._metrics import dp_difference, eod_difference, outcome_metrics
    from fairmon.feu._plot import pareto_plot
    from fairmon.feu._result import Candidate, FEUResult, chebyshev_select, non_dominated
    from fairmon.feu._search import search
    from fairmon.feu._train import predict_proba, train_mlp, train_mlps
    from fairmon.feu.settings import FEUSettings

__all__ = [
    # the search and its result
    "search",
    "FEUResult",
    "Candidate",
    "FEUSettings",
    "pareto_plot",
    "chebyshev_select",
    "non_dominated",
    # the pieces it is built from
    "train_mlp",
    "train_mlps",
    "predict_proba",
    "dp_difference",
    "eod_difference",
    "outcome_metrics",
]

_LAZY = {
    "search": "fairmon.feu._search",
    "FEUResult": "fairmon.feu._result",
    "Candidate": "fairmon.feu._result",
    "chebyshev_select": "fairmon.feu._result",
    "non_dominated": "fairmon.feu._result",
    "FEUSettings": "fairmon.feu.settings",
    "pareto_plot": "fairmon.feu._plot",
    "train_mlp": "fairmon.feu._train",
    "train_mlps": "fairmon.feu._train",
    "predict_proba": "fairmon.feu._train",
    "dp_difference": "fairmon.feu._metrics",
    "eod_difference": "fairmon.feu._metrics",
    "outcome_metrics": "fairmon.feu._metrics",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
