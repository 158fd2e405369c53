"""The "why disfavored" picture: per feature, the mean attribution inside the group minus outside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fairmon.report.charts._base import (
    GROUP_COLOR,
    REST_COLOR,
    Margins,
    _figure,
    _ok,
    line_in,
    place_axes,
    png,
    text_width_in,
)

__all__ = ["attribution_gap_chart", "MAX_BARS"]

#: features drawn per group (the table lists every feature)
MAX_BARS = 10


def attribution_gap_chart(features: Sequence[Mapping[str, Any]], *, title: str = "") -> bytes | None:
    """Horizontal bars of ``difference`` per feature (largest |difference| on top) with the bootstrap
    interval as error bars; red where the feature lowers P(favorable) more inside the group.

    >>> png = attribution_gap_chart([{"feature": "age", "difference": -0.1, "ci_low": -0.12, "ci_high": -0.08}])
    >>> png[1:4] == b"PNG", attribution_gap_chart([])
    (True, None)
    """
    rows = [f for f in features if _ok(f.get("difference"))][:MAX_BARS]
    if not rows:
        return None
    fig = _figure(7.0, max(1.8, 0.34 * len(rows) + 1.0), layout=False)
    ax = fig.subplots()
    diffs, below, above = [], [], []
    for f in rows:
        d = float(f["difference"])
        lo = float(f["ci_low"]) if _ok(f.get("ci_low")) else d
        hi = float(f["ci_high"]) if _ok(f.get("ci_high")) else d
        diffs.append(d)
        below.append(max(d - lo, 0.0))
        above.append(max(hi - d, 0.0))
    ys = list(range(len(rows)))  # one call each for the bars and the intervals (not one per feature)
    ax.barh(ys, diffs, color=[GROUP_COLOR if d < 0 else REST_COLOR for d in diffs], height=0.6)
    ax.errorbar(diffs, ys, xerr=[below, above], fmt="none", ecolor="#333333", capsize=3)
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [str(f["feature"]) for f in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("mean attribution of P(favorable): inside − outside the group", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(labelsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    names = [str(f["feature"]) for f in rows]  # the feature names left, x ticks and the x label below
    place_axes(fig, Margins(left=Margins.ticks(text_width_in(fig, names, 9)), right=0.25,
                            top=Margins.title() if title else 0.15,
                            bottom=Margins.ticks(line_in(9)) + line_in(9) + 0.05))
    return png(fig)
