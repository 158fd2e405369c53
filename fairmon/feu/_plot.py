"""Pareto-front figure of an FEU search for the report (PNG, matplotlib's Agg backend).

Two panels over the validation objectives the search optimised: AUC against DP difference and AUC
against GESD. Every evaluated candidate is a grey dot, the Pareto set is coloured by its third
objective, and the selected (Chebyshev) candidate is a red star.

Example
-------
>>> pareto_plot(result, "pareto.png")  # doctest: +SKIP
PosixPath('pareto.png')
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from fairmon.feu._result import FEUResult

__all__ = ["pareto_plot"]


def pareto_plot(result: FEUResult, path: str | Path, *, title: str | None = None, dpi: int = 110) -> Path:
    """Write the Pareto-front PNG of ``result`` to ``path`` and return the path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ok = [c for c in result.evaluations if c.error is None]
    allF = np.array([c.objectives for c in ok]) if ok else np.zeros((0, 3))
    P = np.array([c.objectives for c in result.pareto])
    utility = result.settings.utility.replace("_", " ")
    prod = result.baselines.get("production", {}).get("validation", {})
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    panels = ((1, "DP difference (validation)", 2, "GESD"), (2, "GESD (validation)", 1, "DP"))
    for ax, (j, label, c, cname) in zip(axes, panels):
        ax.scatter(allF[:, j], 1 - allF[:, 0], s=10, color="0.75", label="evaluated")
        sc = ax.scatter(P[:, j], 1 - P[:, 0], s=36, c=P[:, c], cmap="viridis", edgecolors="k", linewidths=0.4,
                        label="Pareto set")
        if result.selected is not None:  # at its Pareto point (a fold ensemble's validation is not held out)
            sel = next((c.objectives for c in result.pareto if c.id == result.selected.id), result.selected.objectives)
            ens = (result.selected.deployment or {}).get("model") == "fold_ensemble"
            ax.scatter([sel[j]], [1 - sel[0]], s=160, marker="*", color="red", edgecolors="k",
                       label="recommended (its fold ensemble deployed)" if ens else "recommended")
        x_prod = prod.get("dp") if j == 1 else prod.get("gesd")
        if x_prod is not None and prod.get(result.settings.utility) is not None:
            ax.scatter([x_prod], [prod[result.settings.utility]], s=90, marker="s", color="orange", edgecolors="k",
                       label="production")
        ax.set_xlabel(label)
        ax.set_ylabel(f"{utility} (validation)")
        fig.colorbar(sc, ax=ax, label=f"{cname} (colour)")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or f"FEU Pareto front: {len(result.pareto)} of {len(result.evaluations)} candidates")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
