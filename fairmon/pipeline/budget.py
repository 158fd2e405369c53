"""The compute budget of a window's explanation and diagnose steps (``explanations.budget_cpu_s``, issue 21).

Unset, the steps use the configured sizes. Set, each step (explain, then diagnose for its attribution
gaps) prices one model row evaluation on this
model (:func:`fairmon.explain.cost.seconds_per_evaluation`, one timed ``predict_proba`` batch of the
window's encoded rows), estimates the window's cost with :func:`fairmon.explain.cost.estimate` and
shrinks the sizes with :func:`fairmon.explain.cost.fit_budget` until the estimate fits; one log line
states the budget, the price, the estimates and the chosen sizes.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from fairmon.config import ExplanationsSpec, MonitorSpec
from fairmon.explain.cost import estimate, fit_budget, seconds_per_evaluation

__all__ = ["explanations_within_budget", "sizes_line"]

log = logging.getLogger(__name__)


def sizes_line(e: ExplanationsSpec) -> str:
    """The sizes the cost depends on, as one ``key=value`` string.

    Examples
    --------
    >>> sizes_line(ExplanationsSpec())
    'background_size=20 kernelshap_samples=96 lime_samples=250 gesd=40x5 openxai=30x10 attribution_gap=200'
    """
    return (f"background_size={e.background_size} kernelshap_samples={e.kernelshap_samples} "
            f"lime_samples={e.lime_samples} gesd={e.gesd.sample_size}x{e.gesd.n_perturbations} "
            f"openxai={e.openxai.sample_size}x{e.openxai.n_perturbations} "
            f"attribution_gap={e.attribution_gap.sample_size}")


def explanations_within_budget(spec: MonitorSpec, model: Any, frame: pd.DataFrame) -> ExplanationsSpec:
    """The explanation settings of this window: ``spec.explanations`` itself without a budget, else
    sizes fitted to ``explanations.budget_cpu_s`` at the price of this model on ``frame``'s rows.

    Examples
    --------
    >>> from fairmon.config import parse_spec
    >>> spec = parse_spec("spec_version: 1\\nidentity: {name: m}\\nmodel: {registry_uri: r}\\n"
    ...     "data: {files: {pattern: 'd/{start:%Y-%m-%d}.csv'}}\\ncolumns: {features: [x, s], sensitive: [s]}\\n"
    ...     "schedule: {start_date: 2026-01-01}\\n")
    >>> explanations_within_budget(spec, None, pd.DataFrame()) is spec.explanations
    True
    """
    e = spec.explanations
    if e.budget_cpu_s is None or not e.enabled:
        return e
    features = list(spec.columns.features)
    Z = model.schema.transform(frame[features].iloc[: min(len(frame), 256)])
    price = seconds_per_evaluation(model, np.asarray(Z))
    n_attr = len(spec.gesd_attributes)
    before = estimate(e, n_rows=len(frame), n_attributes=n_attr, seconds_per_row=price)
    chosen, fits = fit_budget(e, budget_cpu_s=e.budget_cpu_s, n_rows=len(frame), n_attributes=n_attr,
                              seconds_per_row=price)
    after = estimate(chosen, n_rows=len(frame), n_attributes=n_attr, seconds_per_row=price)
    log.info(
        "explanation budget %.4g CPU-s: %.3g CPU-s per model row (measured); configured %s estimated %.4g CPU-s; "
        "chosen %s estimated %.4g CPU-s%s",
        e.budget_cpu_s, price, sizes_line(e), before.cpu_seconds, sizes_line(chosen), after.cpu_seconds,
        "" if fits else " (the smallest sizes allowed exceed the budget)",
    )
    return chosen
