"""The report's cheaper drawing draws the same pictures: one layout pass instead of savefig's two, one
error-bar call per colour instead of one per group, and a template compiled once per process."""

from __future__ import annotations

import io
from typing import Any

import numpy as np


def _pixels(png: bytes) -> Any:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _labelled(fig: Any) -> None:
    ax = fig.subplots()
    ax.plot([0, 1, 2], [0.2, 0.5, 0.4], "o-")
    ax.set_yticks([0.2, 0.4], ["a long tick label", "b"])
    ax.set_title("a title the layout must fit")
    ax.set_xlabel("x label")


def test_png_lays_out_once_and_gives_savefigs_bytes() -> None:
    from matplotlib.figure import Figure

    from fairmon.report.charts import png
    from fairmon.report.charts._base import DPI, _figure

    ours = _figure(4, 2)
    _labelled(ours)
    reference = Figure(figsize=(4, 2), dpi=DPI, layout="constrained")  # savefig lays it out itself
    _labelled(reference)
    buf = io.BytesIO()
    reference.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, facecolor="white")
    assert png(ours) == buf.getvalue()
    assert png(ours) == buf.getvalue()  # drawn again after the layout: the same picture


def test_outcome_chart_is_the_per_group_drawing() -> None:
    from fairmon.report.charts import outcome_chart, png
    from fairmon.report.charts._base import _PALETTE, _TITLES, _figure
    from fairmon.store import MetricRecord

    groups = [("sex", "F", 0.30, 0.25, 0.36), ("sex", "M", 0.52, 0.47, 0.57), ("age", "old", 0.41, 0.30, 0.50),
              ("age", "young", 0.61, None, None)]
    metrics = [MetricRecord(metric, v, attribute=a, group=g, ci_low=lo, ci_high=hi)
               for metric in ("selection_rate", "tpr") for a, g, v, lo, hi in groups]
    # the drawing before: one errorbar call per group, in the chart's row order
    rows = [("age", "old"), ("age", "young"), ("sex", "F"), ("sex", "M")]
    colors = {"age": _PALETTE[0], "sex": _PALETTE[1]}
    fig = _figure(min(4.2 * 2 + 1.6, 13.0), max(2.2, 0.34 * len(rows) + 1.3))
    axes = fig.subplots(1, 2, sharey=True, squeeze=False)[0]
    for ax, name in zip(axes, ("selection_rate", "tpr"), strict=True):
        for y, (a, g) in enumerate(rows):
            _, _, v, lo, hi = next(t for t in groups if t[:2] == (a, g))
            lo, hi = (v if lo is None else lo), (v if hi is None else hi)
            ax.errorbar(v, y, xerr=[[v - lo], [hi - v]], fmt="o", color=colors[a], ecolor=colors[a],
                        elinewidth=2, capsize=4, markersize=6)
        ax.set_title(_TITLES[name], fontsize=10)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=9)
    axes[0].set_yticks(range(len(rows)), [f"{a} = {g}" for a, g in rows])
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    np.testing.assert_array_equal(_pixels(outcome_chart(metrics) or b""), _pixels(png(fig)))


def test_the_report_template_compiles_once_per_process() -> None:
    from fairmon.report.render import compiled_template

    assert compiled_template() is compiled_template()
