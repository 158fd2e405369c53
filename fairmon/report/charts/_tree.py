"""The RUMIE decision tree drawn from its JSON: split labels on the edges, the group's leaves coloured."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover

    pass
from fairmon.report.charts._base import (
    _ACCENT,
    GROUP_COLOR,
    REST_COLOR,
    _figure,
    _ok,
    fmt_num,
    full_axes,
    png,
)

__all__ = ["tree_chart", "tree_layout"]


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
    their size (rows and share of the window) and P(favorable); IE-DT's group S' (the leaves where most
    rows are in IE's group, whatever the leaf's own P(favorable)) is highlighted.

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
    fig = _figure(width, height, layout=False)  # no decorations: the axes fills the picture
    ax = full_axes(fig)
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
                text = "in S'\n" + text
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
            Patch(fc="#fbe3e6", ec=GROUP_COLOR, lw=2, label="leaf in IE-DT's group S' (most of its rows in IE's group)"),
            Patch(fc="#eef1f5", ec=REST_COLOR, label="other leaves"),
        ],
        loc="upper left", fontsize=8, frameon=False,
    )
    return png(fig)
