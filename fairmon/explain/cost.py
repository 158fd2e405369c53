"""Cost model of a window's explanation and diagnose steps, and sample sizes fitted to a compute budget
(issue 21).

Model-agnostic explainers cost model evaluations: every explained row asks the model for
``kernelshap_samples x background_size`` (KernelSHAP) or ``lime_samples`` (LIME) synthetic rows. The
step's cost is therefore counted in *model row evaluations* and priced by the CPU seconds one row
costs on this model, measured at the start of the step (:func:`seconds_per_evaluation`: one timed
``predict_proba`` batch). Evaluations per window (``s`` = rows explained, capped by the window):

* GESD, per attribute: ``m (N + 1)`` explained rows (each sampled row and its N perturbations) times
  the cost of each ``+``-joined component;
* OpenXAI, per explainer: ``s`` explained rows; PGI and PGU ``s P`` evaluations each; the stability
  metrics (RIS/RRS/ROS) ``10 s P`` label evaluations for the draws and ``s P`` re-explained rows.

* the diagnose step's attribution gaps (:mod:`fairmon.explain.attribution_gap`), per group (at most
  two: RUMIE's and the most disadvantaged declared group; both counted): ``min(s, inside) +
  min(s, outside)`` explained rows (``s`` = ``attribution_gap.sample_size``; at most ``2 s``, capped
  by the window) in one batched call of ``attribution_gap.explainer``;
* the diagnose step's rescoring (:mod:`fairmon.fairness.rescore`, only in a window where a finding
  fired and the registry holds an earlier production version): one prediction of the earlier
  version per window row, ``rescore_rows`` (left out unless given: it cannot be shrunk to a budget).

Per explained row: KernelSHAP ``K B``, LIME ``L``, a gradient 3 (a forward and a backward pass),
SmoothGrad 300, integrated gradients 150, DeepSHAP ``3 B``, random 0. Parts named ``diagnose ...``
belong to the diagnose step (:meth:`ExplanationCost.evaluations_of`). The model leaves out the
explainers' own arithmetic (LIME's ridge fits, KernelSHAP's solves): it is a lower bound, close for
a scikit-learn pipeline, whose ``predict_proba`` dominates (monitors/README.md compares it with
measured CPU seconds).

Examples
--------
>>> from fairmon.config import ExplanationsSpec
>>> e = ExplanationsSpec(background_size=10, kernelshap_samples=20, lime_samples=50)
>>> cost = estimate(e, n_rows=1000, n_attributes=1, seconds_per_row=1e-6)
>>> cost.parts["gesd"] == 1 * 40 * (5 + 1) * (20 * 10 + 50)  # m (N + 1) explained rows
True
>>> cost.parts["diagnose attribution_gap"] == 2 * (200 + 200) * 20 * 10  # two groups, 2 s rows, K B each
True
>>> small, _ = fit_budget(e, budget_cpu_s=0.2, n_rows=1000, n_attributes=1, seconds_per_row=1e-6)
>>> estimate(small, n_rows=1000, n_attributes=1, seconds_per_row=1e-6).cpu_seconds <= 0.2
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairmon.config import ExplanationsSpec

__all__ = [
    "ExplanationCost",
    "estimate",
    "fit_budget",
    "seconds_per_evaluation",
    "ASSUMED_SECONDS_PER_ROW",
    "BUDGET_FLOORS",
    "ATTRIBUTION_GAP_GROUPS",
]

#: CPU seconds per model row evaluation assumed when the model cannot be timed (``fairmon spec check``
#: without the registry): measured for a 25-feature raw scikit-learn pipeline (HistGradientBoosting,
#: ColumnTransformer; 1.2e-5 with one OpenMP thread) and fairmon's 64-32 MLP on its 41 encoded columns
#: (6e-7 to 1.7e-5 on the loaded 2-core machine) (monitors/README.md, "Explanation cost").
ASSUMED_SECONDS_PER_ROW = {"sklearn": 1.2e-5, "torch": 1e-6}

#: the smallest sizes :func:`fit_budget` goes down to (below them the metrics stop meaning much:
#: KernelSHAP with fewer coalitions than twice the width, GESD without 10 rows per group, ...)
BUDGET_FLOORS = {
    "background_size": 10,
    "kernelshap_samples": 32,
    "lime_samples": 100,
    "gesd.sample_size": 20,
    "gesd.n_perturbations": 3,
    "openxai.sample_size": 20,
    "openxai.n_perturbations": 5,
    "attribution_gap.sample_size": 20,
}
#: the groups the diagnose step explains at most (RUMIE's and the most disadvantaged declared group)
ATTRIBUTION_GAP_GROUPS = 2
_SHRINK = 0.8
_STABILITY = ("RIS", "RRS", "ROS")
_ALIASES = {"shap": "kernelshap", "deep": "deepshap", "deepexplainer": "deepshap"}


@dataclass(frozen=True)
class ExplanationCost:
    """Model row evaluations of one window's explanation step, per part, priced at ``seconds_per_row``.

    Examples
    --------
    >>> ExplanationCost({"gesd": 2_000_000}, 1e-6).cpu_seconds
    2.0
    """

    parts: dict[str, int]
    seconds_per_row: float
    explained_rows: dict[str, int] = field(default_factory=dict)

    @property
    def evaluations(self) -> int:
        return int(sum(self.parts.values()))

    @property
    def cpu_seconds(self) -> float:
        return float(self.evaluations * self.seconds_per_row)

    def evaluations_of(self, step: Literal["explain", "diagnose"]) -> int:
        """Model row evaluations of one pipeline step's parts (the ``diagnose ...`` parts, or the others).

        Examples
        --------
        >>> ExplanationCost({"gesd": 5, "diagnose attribution_gap": 7}, 1.0).evaluations_of("diagnose")
        7
        """
        return int(sum(v for k, v in self.parts.items() if k.startswith("diagnose ") == (step == "diagnose")))

    def summary(self) -> str:
        """One line: total, then each part (CPU seconds and evaluations)."""
        parts = ", ".join(f"{k} {v * self.seconds_per_row:.3g} s ({v:.3g} evals)" for k, v in self.parts.items())
        return f"{self.cpu_seconds:.3g} CPU-s ({self.evaluations:.3g} model row evaluations: {parts or 'none'})"


def _per_row(method: str, e: ExplanationsSpec) -> int:
    """Model row evaluations to explain one row with ``method``."""
    m = _ALIASES.get(method, method)
    if m in ("kernelshap", "kernelshap-lib"):
        return e.kernelshap_samples * e.background_size
    if m in ("lime", "lime-lib"):
        return e.lime_samples
    return {"gradient": 3, "gradient_x_input": 3, "smoothgrad": 300, "integrated_gradients": 150,
            "deepshap": 3 * e.background_size}.get(m, 0)


def estimate(
    e: ExplanationsSpec, *, n_rows: int | None, n_attributes: int, seconds_per_row: float, rescore_rows: int = 0
) -> ExplanationCost:
    """The cost of the explanation and diagnose steps of a window of ``n_rows`` rows (None: at least
    every sample size) with ``n_attributes`` GESD attributes, under the settings ``e``; ``rescore_rows``
    window rows rescored by an earlier model version (0: no rescoring counted).

    Examples
    --------
    >>> estimate(ExplanationsSpec(enabled=False), n_rows=10, n_attributes=1, seconds_per_row=1.0).evaluations
    0
    """
    parts: dict[str, int] = {}
    rows: dict[str, int] = {}
    if not e.enabled:
        return ExplanationCost(parts, seconds_per_row, rows)

    def cap(n: int) -> int:
        return n if n_rows is None else min(n, n_rows)

    if e.gesd.enabled and n_attributes:
        g = e.gesd
        explained = n_attributes * cap(g.sample_size) * (g.n_perturbations + 1)
        rows["gesd"] = explained
        parts["gesd"] = explained * sum(_per_row(c, e) for c in g.explainer.split("+"))
    if e.openxai.enabled:
        ox = e.openxai
        s, p = cap(ox.sample_size), ox.n_perturbations
        stability = any(m in _STABILITY for m in ox.metrics)
        for method in e.explainers:
            c = _per_row(method, e)
            explained = s + (s * p if stability else 0)
            rows[f"openxai {method}"] = explained
            parts[f"openxai {method}"] = (
                explained * c + sum(s * p for m in ox.metrics if m in ("PGI", "PGU")) + (10 * s * p if stability else 0)
            )
    if e.attribution_gap.enabled:
        ag = e.attribution_gap
        explained = ATTRIBUTION_GAP_GROUPS * cap(2 * ag.sample_size)
        rows["diagnose attribution_gap"] = explained
        parts["diagnose attribution_gap"] = explained * _per_row(ag.explainer, e)
    if rescore_rows > 0:
        rows["diagnose rescore"] = parts["diagnose rescore"] = int(rescore_rows)
    return ExplanationCost(parts, seconds_per_row, rows)


def _sizes(e: ExplanationsSpec) -> dict[str, int]:
    return {"background_size": e.background_size, "kernelshap_samples": e.kernelshap_samples,
            "lime_samples": e.lime_samples, "gesd.sample_size": e.gesd.sample_size,
            "gesd.n_perturbations": e.gesd.n_perturbations, "openxai.sample_size": e.openxai.sample_size,
            "openxai.n_perturbations": e.openxai.n_perturbations,
            "attribution_gap.sample_size": e.attribution_gap.sample_size}


def _with_sizes(e: ExplanationsSpec, sizes: dict[str, int]) -> ExplanationsSpec:
    top: dict[str, Any] = {k: v for k, v in sizes.items() if "." not in k}
    for section in ("gesd", "openxai", "attribution_gap"):
        sub = {k.split(".")[1]: v for k, v in sizes.items() if k.startswith(section + ".")}
        top[section] = getattr(e, section).model_copy(update=sub)
    return e.model_copy(update=top)


def fit_budget(
    e: ExplanationsSpec, *, budget_cpu_s: float, n_rows: int | None, n_attributes: int, seconds_per_row: float
) -> tuple[ExplanationsSpec, bool]:
    """Settings within ``budget_cpu_s`` CPU seconds (the explain and diagnose steps' estimate, without
    rescoring): every size of ``e`` above its floor
    (:data:`BUDGET_FLOORS`) is multiplied by 0.8 (rounded down) until the estimated cost fits or every
    size is at its floor. Sizes are never raised. Returns the settings and whether they fit.

    Examples
    --------
    >>> e = ExplanationsSpec()
    >>> small, fits = fit_budget(e, budget_cpu_s=1e-9, n_rows=None, n_attributes=1, seconds_per_row=1e-6)
    >>> fits, small.kernelshap_samples, small.gesd.sample_size
    (False, 32, 20)
    """
    sizes = _sizes(e)
    floors = {k: min(v, max(BUDGET_FLOORS[k], 2 * e.gesd.min_group_size if k == "gesd.sample_size" else 0))
              for k, v in sizes.items()}
    current = e
    while estimate(current, n_rows=n_rows, n_attributes=n_attributes, seconds_per_row=seconds_per_row).cpu_seconds > budget_cpu_s:
        if all(sizes[k] <= floors[k] for k in sizes):
            return current, False
        sizes = {k: max(floors[k], int(v * _SHRINK)) if v > floors[k] else v for k, v in sizes.items()}
        current = _with_sizes(e, sizes)
    return current, True


def seconds_per_evaluation(model: Any, Z: np.ndarray, *, rows: int = 2048, repeats: int = 3) -> float:
    """CPU seconds (this process, all threads) of one model row evaluation: the median of ``repeats``
    timed ``predict_proba_encoded`` calls on ``rows`` rows tiled from the encoded rows ``Z``, after a
    small warm-up call (one call is noisy on a shared machine).

    Examples
    --------
    >>> class Const:
    ...     def predict_proba_encoded(self, Z):
    ...         return np.full((len(Z), 2), 0.5)
    >>> seconds_per_evaluation(Const(), np.zeros((3, 2)), rows=100) >= 0.0
    True
    """
    Z = np.asarray(Z, dtype=float)
    batch = np.resize(Z, (rows, Z.shape[1]))  # repeats Z's rows
    model.predict_proba_encoded(batch[: min(rows, 64)])
    times = []
    for _ in range(max(1, repeats)):
        start = time.process_time()
        model.predict_proba_encoded(batch)
        times.append(max(time.process_time() - start, 0.0))
    return float(np.median(times)) / rows
