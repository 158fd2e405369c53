"""The ``explanations`` section: explainers, GESD (explanation stability disparity) and OpenXAI metrics.

Examples
--------
>>> ExplanationsSpec().gesd.sample_size, ExplanationsSpec().openxai.metrics
(40, ('PGI', 'PGU', 'RIS', 'RRS', 'ROS'))
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from fairmon.config._limits import (
    MAX_ATTRIBUTION_GAP_SAMPLE_SIZE,
    MAX_BACKGROUND_SIZE,
    MAX_BOOTSTRAP,
    MAX_EXPLANATION_BUDGET_S,
    MAX_GESD_PERTURBATIONS,
    MAX_GESD_SAMPLE_SIZE,
    MAX_KERNELSHAP_SAMPLES,
    MAX_LIME_SAMPLES,
    MAX_OPENXAI_PERTURBATIONS,
    MAX_OPENXAI_SAMPLE_SIZE,
)
from fairmon.config._messages import ERR_NEEDS_GROUND_TRUTH, excerpt
from fairmon.config._parsers import PositiveInt, SpecSection, check_unique

__all__ = [
    "EXPLAINERS",
    "GESD_EXPLAINER_COMPONENTS",
    "OPENXAI_GROUND_TRUTH_METRICS",
    "OPENXAI_METRICS",
    "AttributionGapSpec",
    "Explainer",
    "ExplanationsSpec",
    "GesdSpec",
    "OpenXAIMetric",
    "OpenXAISpec",
]

Explainer = Literal[
    "lime",
    "kernelshap",
    "lime-lib",
    "kernelshap-lib",
    "gradient",
    "gradient_x_input",
    "smoothgrad",
    "integrated_gradients",
    "random",
]
EXPLAINERS: tuple[str, ...] = get_args(Explainer)
#: OpenXAI metrics a monitoring window can compute (no ground truth needed)
OpenXAIMetric = Literal["PGI", "PGU", "RIS", "RRS", "ROS"]
OPENXAI_METRICS: tuple[str, ...] = get_args(OpenXAIMetric)
#: OpenXAI metrics that need ground-truth importances (benchmarks only; refused in a spec)
OPENXAI_GROUND_TRUTH_METRICS: tuple[str, ...] = ("PRA", "RC", "FA", "RA", "SA", "SRA")


#: components of a GESD ``explainer`` ("shap+lime" = the mean of KernelSHAP and LIME attributions)
GESD_EXPLAINER_COMPONENTS = frozenset({"shap", "lime", "deepshap", "deep", "deepexplainer", *EXPLAINERS})


ERR_OPENXAI_MIN_GROUP = (
    "min_group_size {min_group} needs at least two groups of that size among sample_size {sample} rows "
    "(2 x {min_group} > {sample}): every fairness gap would be NULL; lower min_group_size or raise sample_size"
)


class GesdSpec(SpecSection):
    """GESD settings (defaults m=40 instances, N=5 perturbations, sigma 0.1, p 0.2, baseline 0; the
    paper's m=100, N=10 cost 4x as much, monitors/README.md "Explanation cost").

    ``explainer`` is a ``+``-joined list of components averaged per instance: ``shap+lime`` (default,
    batched KernelSHAP + LIME), ``deepshap+lime`` (the reference code's DeepExplainer, torch models), or
    any :func:`fairmon.explain.explain` method.

    ``attribute`` is the sensitive attribute whose groups are compared (default: each sensitive
    attribute, one GESD each, stored under the attribute's name; the cost grows with their number);
    groups with fewer than ``min_group_size`` sampled members are skipped. FEU's GESD objective uses
    ``attribute`` or, without one, the first sensitive attribute (its DP objective is for one attribute).

    ``stratify`` (default true) shares the ``sample_size`` rows equally among the attribute's groups
    (a smaller group gives all its rows), so a minority group present in the window is always
    sampled; ``false`` draws the paper's plain random sample, which misses a 1 % group about a third
    of the time. A group's mean stability is a mean over a random sample within the group either way,
    so stratifying changes the precision of GESD, not what it estimates. A window whose GESD is still
    undefined (the attribute has one group, or too few sampled members) stores it as NULL with the
    reason in ``status``; its other results are kept.
    """

    enabled: bool = True
    explainer: str = "shap+lime"
    attribute: str | None = None
    sample_size: Annotated[int, Field(ge=1, le=MAX_GESD_SAMPLE_SIZE)] = 40
    stratify: bool = True
    n_perturbations: Annotated[int, Field(ge=1, le=MAX_GESD_PERTURBATIONS)] = 5
    sigma: Annotated[float, Field(gt=0.0)] = 0.1
    mask_prob: Annotated[float, Field(ge=0.0, le=1.0)] = 0.2
    baseline: float = 0.0
    min_group_size: PositiveInt = 10

    @field_validator("explainer")
    @classmethod
    def _components(cls, v: str) -> str:
        names = [n.strip().lower() for n in v.split("+")]
        bad = [n for n in names if n not in GESD_EXPLAINER_COMPONENTS]
        if bad or not names:
            raise ValueError(
                f"unknown GESD explainer component(s) {excerpt(bad)}; use a '+'-joined list of {sorted(GESD_EXPLAINER_COMPONENTS)}"
            )
        return "+".join(names)


class OpenXAISpec(SpecSection):
    """OpenXAI metrics computed per window for each explainer.

    Only the metrics without ground truth (PGI, PGU, RIS, RRS, ROS) are allowed: the ground-truth
    metrics (PRA, RC, FA, RA, SA, SRA) need true feature importances, which a production model does
    not come with, so a spec naming one is refused instead of failing every window.

    Defaults 30 rows x 10 perturbations (OpenXAI's reference: 100 of 1000 draws): the stability metrics
    re-explain every kept perturbation, so their cost is ``sample_size x n_perturbations`` explained
    rows per explainer (monitors/README.md, "Explanation cost").

    ``min_group_size`` (default 5, at most half of ``sample_size``): the fewest sampled rows a protected
    group needs to take part in a ``<METRIC>_fairness`` gap. OpenXAI compares every group mean, so among
    50 sampled rows one row of a small group decided the demo's race gap; such a group keeps its own row,
    is named in the gap's note, and a gap left with fewer than two groups is NULL with the reason. It is a
    floor against one-row groups, not a significance test (the gap has no interval); 5 keeps a 30 %
    group of the default 30 rows in ~97 % of windows (10 would drop it in more than half). Raise
    ``sample_size`` to measure small groups.
    """

    enabled: bool = True
    metrics: tuple[OpenXAIMetric, ...] = OPENXAI_METRICS  # type: ignore[assignment]
    k_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.25
    n_perturbations: Annotated[int, Field(ge=1, le=MAX_OPENXAI_PERTURBATIONS)] = 10
    sample_size: Annotated[int, Field(ge=1, le=MAX_OPENXAI_SAMPLE_SIZE)] = 30
    min_group_size: Annotated[int, Field(ge=1)] = 5

    @model_validator(mode="after")
    def _two_groups_fit(self) -> OpenXAISpec:
        if self.enabled and 2 * self.min_group_size > self.sample_size:  # no gap could ever be computed
            raise ValueError(ERR_OPENXAI_MIN_GROUP.format(min_group=self.min_group_size, sample=self.sample_size))
        return self

    @field_validator("metrics", mode="before")
    @classmethod
    def _no_ground_truth(cls, v: Any) -> Any:
        if isinstance(v, list | tuple):
            gt = [m for m in v if isinstance(m, str) and m.upper() in OPENXAI_GROUND_TRUTH_METRICS]
            if gt:
                raise ValueError(ERR_NEEDS_GROUND_TRUTH.format(metrics=excerpt(gt), allowed=list(OPENXAI_METRICS)))
        return v

    @field_validator("metrics")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_unique(v)


class AttributionGapSpec(SpecSection):
    """"Why disfavored": mean attribution per feature inside a group minus outside it.

    For the window's RUMIE group and the declared group with the lowest favourable rate,
    ``sample_size`` seeded rows inside the group and as many outside it are explained with
    ``explainer`` (the ``explanations`` background and sample settings, ``random_state``); the
    difference of the mean attributions of P(favourable) gets a bootstrap interval of ``bootstrap``
    replicates, max-t simultaneous over the features (:func:`fairmon.explain.attribution_gap.attribution_gap`).
    The cost is ``2 x sample_size`` explanations per group.
    """

    enabled: bool = True
    explainer: Explainer = "kernelshap"
    sample_size: Annotated[int, Field(ge=1, le=MAX_ATTRIBUTION_GAP_SAMPLE_SIZE)] = 200
    bootstrap: Annotated[int, Field(ge=0, le=MAX_BOOTSTRAP)] = 200
    confidence: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.95


class ExplanationsSpec(SpecSection):
    """Explanation fairness: explainers, sample sizes, GESD and OpenXAI settings, compute budget.

    The defaults (background 20 rows, LIME 250 samples, KernelSHAP 96 coalitions, GESD 40 x 5, OpenXAI
    30 x 10) are sized so that a first window over a model-agnostic scikit-learn pipeline finishes in
    about a minute; the cost of every setting is in monitors/README.md ("Explanation cost").

    ``budget_cpu_s`` (default none: the configured sizes) bounds the CPU seconds of a window's
    explanation step: the step times one batch of the model's ``predict_proba`` and shrinks the
    sizes by the cost model of :mod:`fairmon.explain.cost` until the estimate fits, logging the choice.
    """

    enabled: bool = True
    explainers: tuple[Explainer, ...] = ("kernelshap", "lime")
    background_size: Annotated[int, Field(ge=1, le=MAX_BACKGROUND_SIZE)] = 20
    lime_samples: Annotated[int, Field(ge=1, le=MAX_LIME_SAMPLES)] = 250
    kernelshap_samples: Annotated[int, Field(ge=1, le=MAX_KERNELSHAP_SAMPLES)] = 96
    budget_cpu_s: Annotated[float | None, Field(gt=0.0, le=MAX_EXPLANATION_BUDGET_S)] = None
    gesd: GesdSpec = GesdSpec()
    openxai: OpenXAISpec = OpenXAISpec()
    attribution_gap: AttributionGapSpec = AttributionGapSpec()
    random_state: int = 0

    @field_validator("explainers")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_unique(v)
