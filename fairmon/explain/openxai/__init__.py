"""OpenXAI explanation-quality metrics (faithfulness, stability, fairness) with the reference conventions.

Base metrics, each per instance: PRA, RC, FA, RA, SA, SRA (ground truth), PGI, PGU (predictive
faithfulness), RIS, RRS, ROS (relative stability); fairness: each metric's gap between groups.
"""

from fairmon.explain.openxai.fairness import disparity, group_means
from fairmon.explain.openxai.groundtruth import fa, k_to_int, pra, ra, rc, sa, sra
from fairmon.explain.openxai.perturb import Layout, perturb
from fairmon.explain.openxai.predictive import pgi, pgu
from fairmon.explain.openxai.stability import relative_stability
from fairmon.explain.openxai.table import (
    BASE_METRICS,
    GROUND_TRUTH_METRICS,
    PRODUCTION_METRICS,
    evaluate,
    instance_metrics,
)

__all__ = [
    "evaluate",
    "instance_metrics",
    "BASE_METRICS",
    "GROUND_TRUTH_METRICS",
    "PRODUCTION_METRICS",
    "pra",
    "rc",
    "fa",
    "ra",
    "sa",
    "sra",
    "k_to_int",
    "pgi",
    "pgu",
    "relative_stability",
    "group_means",
    "disparity",
    "Layout",
    "perturb",
]
