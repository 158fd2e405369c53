"""Per-group pictures: outcome metrics with their confidence intervals, and GESD stability per group."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover

    from fairmon.store import MetricRecord
from fairmon.report.charts._base import (
    _PALETTE,
    _PER_GROUP,
    _TITLES,
    Margins,
    _figure,
    _ok,
    fmt_num,
    line_in,
    place_axes,
    png,
    text_width_in,
    tick_labels_in,
)

__all__ = ["outcome_chart", "gesd_chart", "GroupStabilityRow"]


# ------------------------------------------------------------------------------------ outcome


def _group_sort_key(m: MetricRecord) -> tuple[int, str, str]:
    return ("&" in m.attribute, m.attribute, m.group)


def outcome_chart(metrics: Sequence[MetricRecord]) -> bytes | None:
    """Per-group rates with their confidence intervals, one panel per metric (error-bar chart).

    Groups below the minimum size (stored without a value) are left out of the picture; the table
    next to it lists them.

    >>> from fairmon.store import MetricRecord
    >>> png = outcome_chart([MetricRecord("selection_rate", 0.4, attribute="sex", group="F",
    ...                                   ci_low=0.35, ci_high=0.45)])
    >>> png[1:4] == b"PNG", outcome_chart([])
    (True, None)
    """
    panels = [
        name
        for name in _PER_GROUP
        if any(m.metric == name and m.group != "" and _ok(m.value) for m in metrics)
    ]
    if not panels:
        return None
    rows = sorted(
        {(m.attribute, m.group) for m in metrics if m.metric in panels and m.group != "" and _ok(m.value)},
        key=lambda ag: ("&" in ag[0], ag[0], ag[1]),
    )
    labels = [f"{a} = {g}" for a, g in rows]
    height = max(2.2, 0.34 * len(rows) + 1.3)
    fig = _figure(min(4.2 * len(panels) + 1.6, 13.0), height, layout=False)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    attrs = sorted({a for a, _ in rows}, key=lambda a: ("&" in a, a))
    colors = {a: _PALETTE[i % len(_PALETTE)] for i, a in enumerate(attrs)}
    for ax, name in zip(axes, panels, strict=True):
        by = {(m.attribute, m.group): m for m in metrics if m.metric == name and m.group != ""}
        # one error-bar call per attribute (its colour), not per group: the same marks, a fraction of
        # the artists to build, lay out and draw
        points: dict[str, list[tuple[float, float, float, float]]] = {}
        for y, key in enumerate(rows):
            m = by.get(key)
            if m is None or not _ok(m.value):
                continue
            v = float(m.value)
            lo = float(m.ci_low) if _ok(m.ci_low) else v
            hi = float(m.ci_high) if _ok(m.ci_high) else v
            points.setdefault(key[0], []).append((v, float(y), max(v - lo, 0.0), max(hi - v, 0.0)))
        for attr, pts in points.items():
            v_, y_, below, above = (list(c) for c in zip(*pts, strict=True))
            ax.errorbar(
                v_, y_, xerr=[below, above], fmt="o", color=colors[attr], ecolor=colors[attr], elinewidth=2,
                capsize=4, markersize=6,
            )
        ax.set_title(_TITLES.get(name, name), fontsize=10)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=9)
    axes[0].set_yticks(range(len(rows)), labels)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    # the shared y axis labels only the first panel; the x ticks are fixed by the limits
    place_axes(fig, Margins(left=Margins.ticks(text_width_in(fig, labels, 9)), right=0.25, top=Margins.title(),
                            bottom=Margins.ticks(line_in(9)), wspace=0.3), ncols=len(panels))
    return png(fig)


# ------------------------------------------------------------------------------------ GESD


@dataclass(frozen=True)
class GroupStabilityRow:
    """Explanation stability of one protected group (``instances``: per-row S(x) when stored)."""

    label: str
    stability: float | None
    std: float | None = None
    size: int | None = None
    instances: tuple[float, ...] = ()


def gesd_chart(rows: Sequence[GroupStabilityRow]) -> bytes | None:
    """Per-group explanation stability: the distribution of per-instance S(x) when stored (violin +
    points + mean), else the group means with ±1 std bars and the sample sizes.

    >>> gesd_chart([GroupStabilityRow("sex=F", 0.8, std=0.05, size=30),
    ...             GroupStabilityRow("sex=M", 0.84, std=0.04, size=30)])[1:4] == b"PNG"
    True
    """
    rows = [r for r in rows if _ok(r.stability) or len(r.instances) > 0]
    if not rows:
        return None

    fig = _figure(max(4.5, 1.6 * len(rows) + 2.0), 3.3, layout=False)
    ax = fig.add_subplot()
    xs = np.arange(len(rows))
    if all(len(r.instances) >= 2 for r in rows):
        data = [np.asarray(r.instances, dtype=float) for r in rows]
        parts = ax.violinplot(data, positions=xs, widths=0.7, showextrema=False)
        bodies: Any = parts["bodies"]
        for i, body in enumerate(bodies):
            body.set_facecolor(_PALETTE[i % len(_PALETTE)])
            body.set_alpha(0.35)
        rng = np.random.default_rng(0)  # jitter only; fixed so the picture is reproducible
        for i, d in enumerate(data):
            ax.scatter(xs[i] + rng.uniform(-0.12, 0.12, len(d)), d, s=9, color=_PALETTE[i % len(_PALETTE)],
                       alpha=0.7, linewidths=0)
            ax.scatter([xs[i]], [float(np.mean(d))], marker="_", s=900, color="#1d2433", linewidths=2)
        ax.set_ylabel("per-instance stability S(x)")
        labels = [f"{r.label}\n(n = {len(r.instances)})" for r in rows]
    else:
        vals = [float(r.stability) if _ok(r.stability) else 0.0 for r in rows]
        errs = [float(r.std) if _ok(r.std) else 0.0 for r in rows]
        ax.bar(xs, vals, yerr=errs, capsize=5, width=0.55,
               color=[_PALETTE[i % len(_PALETTE)] for i in range(len(rows))], alpha=0.85)
        for x, v in zip(xs, vals, strict=True):
            ax.text(float(x), v / 2, fmt_num(v), ha="center", va="center", color="white", fontsize=9, fontweight="bold")
        ax.set_ylabel("mean stability S_g (±1 std)")
        labels = [f"{r.label}\n(n = {r.size if r.size is not None else '?'})" for r in rows]
    ax.set_xticks(xs, labels)
    ax.tick_params(labelsize=9)
    ax.grid(axis="y", alpha=0.3)
    # two-line group labels below; the y label (10 pt, rotated) left of the y tick labels
    vertical = {"top": 0.15, "bottom": Margins.ticks(line_in(9, 2)), "right": 0.15}
    place_axes(fig, Margins(left=0.9, **vertical))
    place_axes(fig, Margins(left=Margins.ticks(tick_labels_in(ax.yaxis, 9)) + line_in(10) + 0.05, **vertical))
    return png(fig)
