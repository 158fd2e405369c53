"""The report's pictures: matplotlib (Agg, no pyplot state) figures returned as PNG bytes.

Each function takes plain store records (or the RUMIE tree JSON) and returns ``None`` when there is
nothing to draw, so the report says "not available" instead of showing an empty axis. Figures are
built with :class:`matplotlib.figure.Figure` directly (no global pyplot state, safe in worker
threads); matplotlib is imported inside the functions so ``import fairmon.report`` stays light.

>>> from fairmon.report.charts import fmt_num, tree_chart
>>> fmt_num(0.41234), fmt_num(None), tree_chart(None) is None
('0.412', 'n/a', True)
"""

from __future__ import annotations

from fairmon.report.charts._base import DPI, GROUP_COLOR, PER_GROUP_METRICS, REST_COLOR, fmt_num, fmt_p, png
from fairmon.report.charts._outcome import GroupStabilityRow, gesd_chart, outcome_chart
from fairmon.report.charts._tree import tree_chart, tree_layout
from fairmon.report.charts._trend import pareto_chart, trend_chart

__all__ = [
    "png",
    "outcome_chart",
    "tree_chart",
    "tree_layout",
    "gesd_chart",
    "GroupStabilityRow",
    "trend_chart",
    "pareto_chart",
    "DPI",
    "PER_GROUP_METRICS",
    "fmt_num",
    "fmt_p",
    "GROUP_COLOR",
    "REST_COLOR",
]
