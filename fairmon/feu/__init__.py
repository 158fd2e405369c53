"""FEU: NSGA-II retraining candidates trading utility (AUC), outcome fairness (DP) and GESD.

``search(data, ...) -> FEUResult`` runs the search and saves the selected model as a registry
``candidate`` (never deployed automatically); ``pareto_plot(result, path)`` draws the front.
Names resolve lazily so ``import fairmon.feu`` does not load torch or pymoo.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["search", "FEUResult", "Candidate", "FEUSettings", "pareto_plot", "chebyshev_select", "non_dominated"]

_LAZY = {
    "search": "fairmon.feu.nsga",
    "FEUResult": "fairmon.feu.nsga",
    "Candidate": "fairmon.feu.nsga",
    "chebyshev_select": "fairmon.feu.nsga",
    "non_dominated": "fairmon.feu.nsga",
    "FEUSettings": "fairmon.feu.settings",
    "pareto_plot": "fairmon.feu.plot",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fairmon.feu' has no attribute {name!r}")
