"""The report's cheaper drawing: one layout pass instead of savefig's two, fixed margins sized from the
charts' own labels instead of constrained layout (every text stays inside the picture, no axes
overlap), one error-bar call per colour instead of one per group, a template compiled once per process."""

from __future__ import annotations

import io
from typing import Any

import numpy as np


def _pixels(png: bytes) -> Any:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _capture(module: Any, draw: Any) -> Any:
    """The figure ``draw`` hands to ``module.png`` (the chart's figure, laid out as it is saved)."""
    seen: list[Any] = []
    real = module.png

    def keep(fig: Any) -> bytes:
        seen.append(fig)
        return bytes(real(fig))

    module.png = keep
    try:
        draw()
    finally:
        module.png = real
    assert len(seen) == 1
    return seen[0]


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
    from fairmon.report.charts import _outcome, outcome_chart, png
    from fairmon.report.charts._base import _PALETTE, _TITLES, _figure
    from fairmon.store import MetricRecord

    groups = [("sex", "F", 0.30, 0.25, 0.36), ("sex", "M", 0.52, 0.47, 0.57), ("age", "old", 0.41, 0.30, 0.50),
              ("age", "young", 0.61, None, None)]
    metrics = [MetricRecord(metric, v, attribute=a, group=g, ci_low=lo, ci_high=hi)
               for metric in ("selection_rate", "tpr") for a, g, v, lo, hi in groups]
    # the drawing before: one errorbar call per group, in the chart's row order
    rows = [("age", "old"), ("age", "young"), ("sex", "F"), ("sex", "M")]
    colors = {"age": _PALETTE[0], "sex": _PALETTE[1]}
    ours = _capture(_outcome, lambda: outcome_chart(metrics))
    fig = _figure(min(4.2 * 2 + 1.6, 13.0), max(2.2, 0.34 * len(rows) + 1.3), layout=False)
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
    for ax, placed in zip(axes, ours.axes, strict=True):  # the chart's own layout, the old marks
        ax.set_position(placed.get_position())
    np.testing.assert_array_equal(_pixels(outcome_chart(metrics) or b""), _pixels(png(fig)))


def test_the_report_template_compiles_once_per_process() -> None:
    from fairmon.report.render import compiled_template

    assert compiled_template() is compiled_template()


def _inside_and_apart(fig: Any) -> None:
    """Every axes with what it draws around it (tick labels, title, axis labels, legend, texts) lies
    inside the picture, and no two of them overlap."""
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    W, H = fig.bbox.width, fig.bbox.height
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    for box in boxes:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= W + 1 and box.y1 <= H + 1, (box, W, H)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap_w = min(a.x1, b.x1) - max(a.x0, b.x0)
            overlap_h = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert overlap_w <= 1 or overlap_h <= 1, (a, b)


def test_fixed_layouts_keep_every_text_inside_the_picture() -> None:
    from datetime import UTC, datetime, timedelta

    from fairmon.report.charts import _gap, _outcome, _trend
    from fairmon.report.data import TrendPoint
    from fairmon.store import MetricRecord

    long = "a_rather_long_attribute_name&another_one"
    metrics = [MetricRecord(metric, v, attribute=a, group=g, ci_low=v - 0.05, ci_high=v + 0.05)
               for metric in ("selection_rate", "tpr", "fpr", "fnr")
               for a, g, v in (("sex", "F", 0.3), (long, "some value&another value", 0.6))]
    _inside_and_apart(_capture(_outcome, lambda: _outcome.outcome_chart(metrics)))
    stability = [_outcome.GroupStabilityRow("sex=female", 0.81234, std=0.1, size=30),
                 _outcome.GroupStabilityRow("age_band=very old and long", 0.7, std=0.05, size=1200)]
    _inside_and_apart(_capture(_outcome, lambda: _outcome.gesd_chart(stability)))
    features = [{"feature": f"feature_with_a_long_name_{i}", "difference": (-1) ** i * 0.01 * i,
                 "ci_low": -0.05, "ci_high": 0.05} for i in range(8)]
    _inside_and_apart(_capture(_gap, lambda: _gap.attribution_gap_chart(features, title="sex=female")))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for n in (1, 5, 30):  # one window, one tick per window, the concise date axis
        trend = [TrendPoint(t0 + timedelta(days=k), "succeeded", "v1" if k < n // 2 else "v2",
                            dp_difference={"sex": (0.1 + 0.001 * k, 0.05, 0.15)},
                            dp_ratio={"sex": (0.81234, 0.7, 0.9)}, dscore=12345.678 * k, honest_dscore=0.05,
                            gesd={"sex": 0.000123 * k}, drift=k == n - 1)
                 for k in range(n)]
        _inside_and_apart(_capture(_trend, lambda trend=trend: _trend.trend_chart(trend)))
