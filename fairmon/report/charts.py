"""The report's pictures: matplotlib (Agg, no pyplot state) figures returned as PNG bytes.

Each function takes plain store records (or the RUMIE tree JSON) and returns ``None`` when there is
nothing to draw, so the report says "not available" instead of showing an empty axis. Figures are
built with :class:`matplotlib.figure.Figure` directly (no global pyplot state, safe in worker
threads); matplotlib is imported inside the functions so ``import fairmon.report`` stays light.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from fairmon.report.data import TrendPoint
    from fairmon.store import FEUCandidateRecord, MetricRecord

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
    "GROUP_COLOR",
    "REST_COLOR",
]

#: resolution of every report image (keeps a report a few hundred KB)
DPI = 100
#: colour of the discriminated group (RUMIE leaves inside S') and of "bad" markers
GROUP_COLOR = "#d1495b"
#: colour of everything else
REST_COLOR = "#8d99ae"
_ACCENT = "#2e86ab"
_PALETTE = ("#2e86ab", "#edae49", "#66a182", "#8e6c8a", "#d1495b", "#00798c", "#30638e")
#: per-group outcome metrics, in display order
PER_GROUP_METRICS = ("selection_rate", "tpr", "fpr", "fnr")
_PER_GROUP = PER_GROUP_METRICS
_TITLES = {
    "selection_rate": "selection rate (favorable)",
    "tpr": "true-positive rate",
    "fpr": "false-positive rate",
    "fnr": "false-negative rate",
}


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def png(fig: Figure) -> bytes:
    """PNG bytes of a figure (no timestamp/software metadata, so the same figure gives the same bytes).

    >>> fig = _figure(2, 1)
    >>> png(fig) == png(fig)
    True
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None}, facecolor="white")
    return buf.getvalue()


def _ok(v: Any) -> TypeGuard[float]:
    """A finite number (not None/NaN/inf)."""
    if v is None:
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def fmt_num(v: Any, digits: int = 3) -> str:
    """Compact number text: ``30``, ``0.412``, ``1.2e-05``; ``n/a`` for missing."""
    if v is None:
        return "n/a"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return "n/a"
    if f == int(f) and abs(f) < 1e15:
        return f"{int(f):,}" if abs(f) >= 10_000 else str(int(f))
    if abs(f) >= 1000:  # never scientific notation for big values
        return f"{f:,.0f}"
    if abs(f) < 10 ** (-digits):
        return f"{f:.1e}"
    return f"{f:.{digits}g}" if abs(f) >= 1 else f"{f:.{digits}f}".rstrip("0").rstrip(".")


# ------------------------------------------------------------------------------------ outcome


def _group_sort_key(m: MetricRecord) -> tuple[int, str, str]:
    return ("&" in m.attribute, m.attribute, m.group)  # type: ignore[return-value]


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
    fig = _figure(min(4.2 * len(panels) + 1.6, 13.0), height)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    attrs = sorted({a for a, _ in rows}, key=lambda a: ("&" in a, a))
    colors = {a: _PALETTE[i % len(_PALETTE)] for i, a in enumerate(attrs)}
    for ax, name in zip(axes, panels, strict=True):
        by = {(m.attribute, m.group): m for m in metrics if m.metric == name and m.group != ""}
        for y, key in enumerate(rows):
            m = by.get(key)
            if m is None or not _ok(m.value):
                continue
            v = float(m.value)  # type: ignore[arg-type]
            lo = float(m.ci_low) if _ok(m.ci_low) else v
            hi = float(m.ci_high) if _ok(m.ci_high) else v
            ax.errorbar(
                v, y, xerr=[[max(v - lo, 0.0)], [max(hi - v, 0.0)]], fmt="o", color=colors[key[0]],
                ecolor=colors[key[0]], elinewidth=2, capsize=4, markersize=6,
            )
        ax.set_title(_TITLES.get(name, name), fontsize=10)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=9)
    axes[0].set_yticks(range(len(rows)), labels)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    return png(fig)


# ------------------------------------------------------------------------------------ RUMIE tree


@dataclass(frozen=True)
class _Placed:
    node: Mapping[str, Any]
    x: float
    depth: int
    parent: int | None
    edge: str  # label of the edge from the parent


def _fmt_threshold(v: Any) -> str:
    """A split threshold in original units, with the precision the rules use (41,250.5; 0.2155)."""
    if _ok(v) and abs(v) >= 1000 and v != int(v):
        return f"{v:,.1f}"
    return fmt_num(v, 4)


def _edge_labels(split: Mapping[str, Any]) -> tuple[str, str]:
    if "threshold" in split:
        t = _fmt_threshold(split.get("threshold"))
        return f"{split.get('left', '<=')} {t}".replace("<=", "≤"), f"{split.get('right', '>')} {t}"
    cat = str(split.get("category", "?"))
    return f"{split.get('left', '!=')} {cat}".replace("!=", "≠"), f"{split.get('right', '=')} {cat}"


def tree_layout(tree: Mapping[str, Any]) -> list[_Placed] | None:
    """Nodes of a RUMIE tree JSON (``{"root": {...}}``) with x positions (leaves 0, 1, 2, ...) and depth.

    Returns None when the JSON is not a RUMIE IE-DT tree (e.g. an evidence row without a tree).

    >>> t = {"root": {"split": {"column": "age", "threshold": 30, "left": "<=", "right": ">"},
    ...      "left": {"leaf": 1, "size": 4, "fraction": 0.4, "p_fav": 0.25, "in_group": True},
    ...      "right": {"leaf": 2, "size": 6, "fraction": 0.6, "p_fav": 0.5, "in_group": False}}}
    >>> [(p.x, p.depth, p.edge) for p in tree_layout(t)]
    [(0.5, 0, ''), (0.0, 1, '≤ 30'), (1.0, 1, '> 30')]
    """
    root = tree.get("root") if isinstance(tree, Mapping) else None
    if not isinstance(root, Mapping):
        return None
    placed: list[_Placed] = []
    counter = [0.0]

    def visit(node: Mapping[str, Any], depth: int, parent: int | None, edge: str) -> float | None:
        idx = len(placed)
        placed.append(_Placed(node, 0.0, depth, parent, edge))
        if "leaf" in node:
            x = counter[0]
            counter[0] += 1.0
        elif isinstance(node.get("split"), Mapping) and isinstance(node.get("left"), Mapping) and isinstance(
            node.get("right"), Mapping
        ):
            left_lab, right_lab = _edge_labels(node["split"])
            xl = visit(node["left"], depth + 1, idx, left_lab)
            xr = visit(node["right"], depth + 1, idx, right_lab)
            if xl is None or xr is None:
                return None
            x = (xl + xr) / 2.0
        else:
            return None
        placed[idx] = _Placed(node, x, depth, parent, edge)
        return x

    if visit(root, 0, None, "") is None:
        return None
    return placed


def _pct(frac: float) -> str:
    return f"{frac:.0%}" if frac >= 0.01 or frac == 0 else f"{frac:.1%}"


def tree_chart(tree: Mapping[str, Any] | None) -> bytes | None:
    """The IE-DT decision tree like the RUMIE paper's Fig. 1.

    Internal nodes name the split attribute, edges carry the condition in original units, leaves show
    their size (rows and share of the window) and P(favorable); leaves inside the discriminated group
    S' are highlighted.

    >>> t = {"root": {"split": {"column": "age", "threshold": 30, "left": "<=", "right": ">"},
    ...      "left": {"leaf": 1, "size": 4, "fraction": 0.4, "p_fav": 0.25, "in_group": True},
    ...      "right": {"leaf": 2, "size": 6, "fraction": 0.6, "p_fav": 0.5, "in_group": False}}}
    >>> tree_chart(t)[1:4] == b"PNG", tree_chart({"feature": "age"})
    (True, None)
    """
    if not tree:
        return None
    placed = tree_layout(tree)
    if not placed:
        return None
    from matplotlib.patches import Patch

    n_leaves = sum(1 for p in placed if "leaf" in p.node)
    depth = max(p.depth for p in placed)
    # wide trees stay legible: the page scrolls the picture horizontally instead of shrinking it
    width = min(max(6.0, (1.3 if n_leaves <= 8 else 1.1) * n_leaves + 1.0), 40.0)
    height = max(2.6, 1.1 * (depth + 1) + 0.6)
    fontsize = 9 if n_leaves <= 8 else (8 if width / n_leaves >= 1.05 else 7)
    fig = _figure(width, height)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_xlim(-0.7, n_leaves - 0.3)
    ax.set_ylim(-depth - 0.6, 0.55)
    for p in placed:
        if p.parent is None:
            continue
        q = placed[p.parent]
        ax.annotate(
            "", xy=(p.x, -p.depth + 0.22), xytext=(q.x, -q.depth - 0.22),
            arrowprops={"arrowstyle": "-|>", "color": "#5c677d", "lw": 1.1, "shrinkA": 0, "shrinkB": 0},
        )
        ax.text(  # nearer the child than the parent, so sibling labels do not collide
            q.x + 0.62 * (p.x - q.x), -(q.depth + 0.62 * (p.depth - q.depth)), p.edge, ha="center", va="center", fontsize=fontsize,
            color="#33415c", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.9},
        )
    for p in placed:
        node = p.node
        if "leaf" in node:
            in_group = bool(node.get("in_group"))
            size = node.get("size")
            frac = node.get("fraction")
            text = (
                f"n = {int(size):,}" if size is not None else "n = ?"
            ) + (f" ({_pct(frac)})" if _ok(frac) else "") + f"\nP(fav) = {fmt_num(node.get('p_fav'), 2)}"
            if in_group:
                text = "discriminated\n" + text
            style = {
                "boxstyle": "round,pad=0.45",
                "fc": "#fbe3e6" if in_group else "#eef1f5",
                "ec": GROUP_COLOR if in_group else REST_COLOR,
                "lw": 2.0 if in_group else 1.0,
            }
            ax.text(p.x, -p.depth, text, ha="center", va="center", fontsize=fontsize, bbox=style,
                    fontweight="bold" if in_group else "normal", color="#1d2433")
        else:
            col = str(node["split"].get("column", "?"))
            ax.text(p.x, -p.depth, col, ha="center", va="center", fontsize=fontsize + 1, color="white",
                    fontweight="bold", bbox={"boxstyle": "round,pad=0.4", "fc": _ACCENT, "ec": _ACCENT})
    ax.legend(
        handles=[
            Patch(fc="#fbe3e6", ec=GROUP_COLOR, lw=2, label="leaf in the discriminated group S'"),
            Patch(fc="#eef1f5", ec=REST_COLOR, label="other leaves"),
        ],
        loc="upper left", fontsize=8, frameon=False,
    )
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
    import numpy as np

    fig = _figure(max(4.5, 1.6 * len(rows) + 2.0), 3.3)
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
    return png(fig)


# ------------------------------------------------------------------------------------ trends


def trend_chart(trend: Sequence[TrendPoint], *, current: datetime | None = None) -> bytes | None:
    """The key metrics across windows (from the store): DP difference and ratio per attribute (CI
    bands), RUMIE DScore (held-out and in-sample) and GESD per attribute; the current window, model-version changes
    and windows with an active drift finding are marked.

    >>> from datetime import datetime, UTC
    >>> from fairmon.report.data import TrendPoint
    >>> p = TrendPoint(datetime(2026, 1, 1, tzinfo=UTC), "succeeded", "v1", dp_difference={"sex": (0.1, 0.08, 0.12)})
    >>> trend_chart([p])[1:4] == b"PNG", trend_chart([])
    (True, None)
    """
    if not trend:
        return None
    import matplotlib.dates as mdates

    xs = [p.window_start for p in trend]
    attrs = sorted({a for p in trend for a in (*p.dp_difference, *p.dp_ratio) if "&" not in a})[:4]
    fig = _figure(11.5, 5.6)
    axes = fig.subplots(2, 2, sharex=True).ravel()
    panels: list[tuple[Any, str]] = [
        (axes[0], "DP difference (max − min selection rate)"),
        (axes[1], "DP ratio (disparate impact)"),
        (axes[2], "RUMIE DScore of the mined group"),
        (axes[3], "GESD (explanation-stability gap)"),
    ]

    def series(getter: Any) -> tuple[list[datetime], list[float], list[float], list[float]]:
        t, v, lo, hi = [], [], [], []
        for p in trend:
            val = getter(p)
            if val is None or not _ok(val[0]):
                continue
            t.append(p.window_start)
            v.append(float(val[0]))
            lo.append(float(val[1]) if _ok(val[1]) else float(val[0]))
            hi.append(float(val[2]) if _ok(val[2]) else float(val[0]))
        return t, v, lo, hi

    for i, attr in enumerate(attrs):
        c = _PALETTE[i % len(_PALETTE)]
        for ax, key in ((axes[0], "dp_difference"), (axes[1], "dp_ratio")):
            t, v, lo, hi = series(lambda p, k=key, a=attr: getattr(p, k).get(a))
            if t:
                ax.fill_between(t, lo, hi, color=c, alpha=0.15, linewidth=0)
                ax.plot(t, v, "o-", color=c, label=attr, markersize=4)
    axes[1].axhline(0.8, color="#5c677d", ls=":", lw=1)
    axes[1].text(xs[0], 0.8, " 0.8 (four-fifths rule)", fontsize=7, color="#5c677d", va="bottom")
    t, v, _, _ = series(lambda p: (p.honest_dscore, None, None))
    if t:
        axes[2].plot(t, v, "o-", color=GROUP_COLOR, label="held-out (honest)", markersize=4)
    t, v, _, _ = series(lambda p: (p.dscore, None, None))
    if t:
        axes[2].plot(t, v, "s--", color=REST_COLOR, label="in-sample", markersize=3)
    for i, attr in enumerate(sorted({a for p in trend for a in p.gesd})[:4]):
        t, v, _, _ = series(lambda p, a=attr: (p.gesd.get(a), None, None))
        if t:
            axes[3].plot(t, v, "o-", color=_PALETTE[(i + 3) % len(_PALETTE)], label=attr or "GESD", markersize=4)
    drift_x = [p.window_start for p in trend if p.drift]
    prev_version = trend[0].model_version
    changes = []
    for p in trend[1:]:
        if p.model_version != prev_version:
            changes.append((p.window_start, p.model_version))
            prev_version = p.model_version
    for ax, title in panels:
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
        for x in drift_x:
            ax.axvline(x, color=GROUP_COLOR, alpha=0.35, lw=4)
        for x, _version in changes:
            ax.axvline(x, color="#33415c", ls="--", lw=1)
        if current is not None:
            ax.axvline(current, color=_ACCENT, lw=6, alpha=0.18)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="best", frameon=False)
    for x, version in changes:
        axes[0].annotate(f"model {version}", (x, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                         xytext=(-3, -10), textcoords="offset points", color="#33415c", ha="right")
    if drift_x:
        axes[2].plot([], [], color=GROUP_COLOR, alpha=0.35, lw=4, label="active drift finding")
        axes[2].legend(fontsize=8, loc="best", frameon=False)
    for ax in axes:
        if len(xs) <= 14:  # one tick per window
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d"))
        else:
            locator = mdates.AutoDateLocator(minticks=3, maxticks=10)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    if len(xs) == 1:  # one window: give the axis a width
        from datetime import timedelta

        for ax in axes:
            ax.set_xlim(xs[0] - timedelta(days=1), xs[0] + timedelta(days=1))
    return png(fig)


# ------------------------------------------------------------------------------------ FEU


def _test_metric(c: FEUCandidateRecord, name: str) -> float | None:
    m = c.metrics or {}
    for src in (m.get("test"), m):
        if isinstance(src, Mapping) and _ok(src.get(name)):
            return float(src[name])
    return None


def pareto_chart(candidates: Sequence[FEUCandidateRecord]) -> bytes | None:
    """FEU candidates: AUC against DP difference, coloured by GESD, the recommended one starred.

    The Pareto set is three-dimensional (AUC, DP, GESD), so its 2-D projection is drawn as points
    (a connecting line would suggest a front that is not there).

    >>> from fairmon.store import FEUCandidateRecord
    >>> c = FEUCandidateRecord(0, metrics={"test": {"auc": 0.8, "dp": 0.05, "gesd": 0.01}}, pareto=True,
    ...                        selected=True)
    >>> pareto_chart([c])[1:4] == b"PNG", pareto_chart([])
    (True, None)
    """
    pts: list[tuple[FEUCandidateRecord, float, float, float | None]] = []
    for c in candidates:
        dp, auc = _test_metric(c, "dp"), _test_metric(c, "auc")
        if dp is not None and auc is not None:
            pts.append((c, dp, auc, _test_metric(c, "gesd")))
    if not pts:
        return None
    fig = _figure(6.4, 4.0)
    ax = fig.add_subplot()
    g = [p[3] for p in pts]
    if all(v is not None for v in g):
        sc = ax.scatter([p[1] for p in pts], [p[2] for p in pts], c=[float(v or 0.0) for v in g], cmap="viridis", s=70,
                        edgecolors="#1d2433", linewidths=0.6, zorder=3)
        fig.colorbar(sc, ax=ax, label="GESD (test)")
    else:
        ax.scatter([p[1] for p in pts], [p[2] for p in pts], color=_ACCENT, s=70, zorder=3)
    for c, dp, auc, _ in pts:
        ax.annotate(f"#{c.candidate_index}", (dp, auc), xytext=(5, 4), textcoords="offset points", fontsize=8)
        if c.selected:
            ax.scatter([dp], [auc], marker="*", s=420, facecolors="none", edgecolors=GROUP_COLOR,
                       linewidths=1.8, zorder=4, label="recommended")
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("DP difference (test, lower is fairer)")
    ax.set_ylabel("AUC (test)")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.grid(alpha=0.3)
    if len(pts) == 1:  # one candidate: centre it in a readable window
        _, dp, auc, _ = pts[0]
        ax.set_xlim(max(0.0, dp - 0.05), dp + 0.05)
        ax.set_ylim(auc - 0.05, auc + 0.05)
    if any(c.selected for c, *_ in pts):
        ax.legend(fontsize=8, loc="best", frameon=True)
    return png(fig)
