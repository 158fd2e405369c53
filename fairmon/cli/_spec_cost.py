"""``fairmon spec check``'s cost line: the estimated CPU seconds of a window's explain and diagnose steps.

The same cost model the pipeline's budget uses (:mod:`fairmon.explain.cost`): model row evaluations
of the spec's settings, priced per row. When the spec's registry holds the model, one batch of its
``predict_proba`` is timed on 2,048 encoded rows of zeros (each standardised column at its mean, the
first category of each categorical); otherwise the price of
:data:`fairmon.explain.cost.ASSUMED_SECONDS_PER_ROW` is assumed (a 25-feature raw scikit-learn
pipeline, the slower kind) and the line says so. Window rows are assumed to be at least every sample
size (a smaller window explains fewer rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairmon.errors import FairmonError
from fairmon.explain.cost import ASSUMED_SECONDS_PER_ROW, estimate, fit_budget, seconds_per_evaluation
from fairmon.pipeline.budget import sizes_line
from fairmon.registry import Registry

__all__ = ["window_cost"]


def _price(spec: Any) -> tuple[float, str]:
    """CPU seconds per model row and what it is based on."""
    try:
        model = Registry(spec.resolve_path(spec.model.registry_uri)).load(spec.model.name, spec.model.version, device="cpu")
    except (FairmonError, OSError, ValueError, ImportError) as exc:
        price = ASSUMED_SECONDS_PER_ROW["sklearn"]
        return price, (f"model not loaded ({type(exc).__name__}: {str(exc)[:120]}); assumed {price:.2g} CPU-s per "
                       "model row (a 25-feature raw scikit-learn pipeline)")
    price = seconds_per_evaluation(model, np.zeros((1, model.schema.n_encoded)))
    kind = f"{model.framework}" + (f" ({model.input} input)" if model.framework == "sklearn" else "")
    return price, (f"model {spec.model.name} {spec.model.version}: {kind}, {len(model.schema.names)} features "
                   f"({model.schema.n_encoded} encoded); {price:.2g} CPU-s per model row measured")


def window_cost(spec: Any) -> dict[str, Any]:
    """``{"cpu_s", "line", ...}``: the estimated explanation cost of one window of ``spec``.

    Examples
    --------
    >>> from fairmon.config import parse_spec
    >>> spec = parse_spec("spec_version: 1\\nidentity: {name: m}\\nmodel: {registry_uri: /nonexistent}\\n"
    ...     "data: {files: {pattern: 'd/{start:%Y-%m-%d}.csv'}}\\ncolumns: {features: [x, s], sensitive: [s]}\\n"
    ...     "schedule: {start_date: 2026-01-01}\\n")
    >>> out = window_cost(spec)
    >>> out["assumed"], out["cpu_s"] > 0
    (True, True)
    """
    e = spec.explanations
    price, basis = _price(spec)
    n_attr = len(spec.gesd_attributes)
    cost = estimate(e, n_rows=None, n_attributes=n_attr, seconds_per_row=price)
    out: dict[str, Any] = {"cpu_s": cost.cpu_seconds, "evaluations": cost.evaluations, "seconds_per_row": price,
                           "assumed": basis.startswith("model not loaded"), "basis": basis, "sizes": sizes_line(e),
                           "budget_cpu_s": e.budget_cpu_s}
    if not e.enabled:
        out["line"] = "explanations disabled: no explanation cost"
        return out
    line = (f"explanations ≈ {cost.summary()} per window at {sizes_line(e)}, {n_attr} GESD attribute(s), "
            f"windows of at least the sample sizes (explain and diagnose steps; a window where a finding fires "
            f"adds one model row per window row to rescore it); {basis}")
    if e.budget_cpu_s is not None:
        chosen, fits = fit_budget(e, budget_cpu_s=e.budget_cpu_s, n_rows=None, n_attributes=n_attr, seconds_per_row=price)
        after = estimate(chosen, n_rows=None, n_attributes=n_attr, seconds_per_row=price)
        out.update(budget_sizes=sizes_line(chosen), budget_estimate_cpu_s=after.cpu_seconds, budget_fits=fits)
        line += (f"; budget_cpu_s {e.budget_cpu_s:g}: {sizes_line(chosen)} ≈ {after.cpu_seconds:.3g} CPU-s"
                 + ("" if fits else " (the smallest sizes allowed exceed the budget)"))
    out["line"] = line
    return out
