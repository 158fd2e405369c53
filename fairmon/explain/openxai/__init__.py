"""OpenXAI explanation-quality metrics (faithfulness, stability, fairness) with the reference conventions.

Base metrics, each per instance: PRA, RC, FA, RA, SA, SRA (ground truth), PGI, PGU (predictive
faithfulness), RIS, RRS, ROS (relative stability); fairness: each metric's gap between groups.
:func:`evaluate` computes them as one tidy table; the single functions are exported for direct use.

>>> import numpy as np
>>> from fairmon.explain.openxai import fa
>>> E = np.array([[0.9, 0.1, 0.5, 0.0]])
>>> fa(E, np.array([1.0, 0.0, 0.0, 2.0]), np.array([1]), k=0.5).tolist()
[0.5]
"""

from fairmon.explain.openxai._fairness import GroupMeans, disparity, group_means
from fairmon.explain.openxai._groundtruth import fa, k_to_int, pra, ra, rc, sa, sra
from fairmon.explain.openxai._perturb import Layout, perturb
from fairmon.explain.openxai._predictive import pgi, pgu
from fairmon.explain.openxai._table import (
    BASE_METRICS,
    GROUND_TRUTH_METRICS,
    PRODUCTION_METRICS,
    evaluate,
    instance_metrics,
)
from fairmon.explain.openxai.stability import RRS_UNDEFINED_NOTE, StabilityResult, relative_stability

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
    "StabilityResult",
    "RRS_UNDEFINED_NOTE",
    "group_means",
    "GroupMeans",
    "disparity",
    "Layout",
    "perturb",
]
