"""Shared pieces of the report's charts: resolution, colours, the figure factory, PNG output, numbers."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


__all__ = ["png", "full_axes", "Margins", "place_axes", "text_width_in", "tick_labels_in", "line_in", "fmt_num", "DPI", "PER_GROUP_METRICS", "GROUP_COLOR", "REST_COLOR"]

#: resolution of every report image (keeps a report a few hundred KB)
DPI = 100
#: constrained layout's padding around the figure's content (matplotlib's default ``w_pad``, ``h_pad``)
_PAD_IN = 3.0 / 72.0
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


def _figure(width: float, height: float, *, layout: bool = True) -> Figure:
    """A figure on its own Agg canvas; ``layout``: constrained layout (off for a picture that places its
    one axes itself, :func:`full_axes`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained" if layout else None)
    FigureCanvasAgg(fig)
    return fig


def full_axes(fig: Figure) -> Any:
    """One axes filling the figure but for constrained layout's padding (3/72 inch a side): for a
    picture without axis decorations, whose content lies inside its data limits (the RUMIE tree),
    what constrained layout would compute, without measuring every text of the picture first."""
    width, height = fig.get_size_inches()
    pad_w, pad_h = _PAD_IN / float(width), _PAD_IN / float(height)
    return fig.add_axes((pad_w, pad_h, 1.0 - 2 * pad_w, 1.0 - 2 * pad_h))


#: points per inch, and the room (points) matplotlib's defaults give a tick: its length plus its label pad
_PT = 72.0
_TICK_PT = 3.5 + 3.5
#: a line of text at ``size`` points takes ``size * _LINE`` points (matplotlib's default line spacing)
_LINE = 1.2
#: an axes title's pad (matplotlib's ``axes.titlepad``) and the margin kept at the figure's edge
_TITLE_PAD_PT = 6.0
_EDGE_PT = 4.0


def text_width_in(fig: Figure, texts: Iterable[str], size: float) -> float:
    """Width in inches of the widest line of ``texts`` at ``size`` points, measured with the figure's
    renderer (one text layout per line, not a layout of the figure).

    >>> fig = _figure(2, 1, layout=False)
    >>> text_width_in(fig, ["a", "a longer label"], 9) > text_width_in(fig, ["a"], 9) > 0
    True
    """
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    prop = FontProperties(size=size)
    widest = 0.0
    for text in texts:
        for line in str(text).split("\n"):
            if line:
                widest = max(widest, float(renderer.get_text_width_height_descent(line, prop, ismath=False)[0]))
    return widest / float(fig.dpi)


def tick_labels_in(axis: Any, size: float) -> float:
    """Width in inches of the widest major tick label ``axis`` will draw (its locator and formatter
    at the current limits; multi-line labels by their widest line). Call it once the data is drawn.

    >>> fig = _figure(3, 2, layout=False)
    >>> ax = fig.subplots()
    >>> _ = ax.plot([0, 1], [0, 1000])
    >>> tick_labels_in(ax.yaxis, 8) > tick_labels_in(ax.xaxis, 8) > 0
    True
    """
    _ = axis.axes.viewLim  # applies a pending autoscale: the limits the figure will be drawn with
    lo, hi = sorted(axis.get_view_interval())
    locs = [float(v) for v in axis.get_major_locator()() if lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)]
    labels = axis.get_major_formatter().format_ticks(locs)
    return text_width_in(axis.get_figure(root=True), labels, size)


def line_in(size: float, lines: int = 1) -> float:
    """Height in inches of ``lines`` lines of text at ``size`` points."""
    return lines * size * _LINE / _PT


@dataclass(frozen=True)
class Margins:
    """Room in inches around a grid of axes (``left`` ... ``bottom``) and between its cells.

    Why not constrained layout: it measures every text of the figure with an extra draw, about half
    of a report chart's CPU (benchmarks/fleet/README.md); a chart knows its texts, so it sizes its
    margins from its widest labels (:func:`text_width_in`) and font sizes instead.
    """

    left: float
    right: float
    top: float
    bottom: float
    wspace: float = 0.0
    hspace: float = 0.0

    @staticmethod
    def ticks(label_width_in: float) -> float:
        """Room for tick labels ``label_width_in`` wide (or tall), with the ticks and the edge margin."""
        return label_width_in + (_TICK_PT + _EDGE_PT) / _PT

    @staticmethod
    def title(size: float = 10.0) -> float:
        """Room above an axes for a one-line title at ``size`` points."""
        return line_in(size) + (_TITLE_PAD_PT + _EDGE_PT) / _PT


def place_axes(fig: Figure, margins: Margins, *, nrows: int = 1, ncols: int = 1) -> None:
    """Place the figure's grid of ``nrows`` x ``ncols`` axes with fixed ``margins`` (inches).

    >>> fig = _figure(4, 2, layout=False)
    >>> ax = fig.subplots()
    >>> place_axes(fig, Margins(left=0.5, right=0.1, top=0.3, bottom=0.4))
    >>> [round(float(v), 3) for v in ax.get_position().bounds]
    [0.125, 0.2, 0.85, 0.65]
    """
    width, height = (float(v) for v in fig.get_size_inches())
    inner_w = width - margins.left - margins.right
    inner_h = height - margins.top - margins.bottom
    cell_w = (inner_w - (ncols - 1) * margins.wspace) / ncols
    cell_h = (inner_h - (nrows - 1) * margins.hspace) / nrows
    fig.subplots_adjust(left=margins.left / width, right=1.0 - margins.right / width,
                        bottom=margins.bottom / height, top=1.0 - margins.top / height,
                        wspace=margins.wspace / cell_w if ncols > 1 else 0.0,
                        hspace=margins.hspace / cell_h if nrows > 1 else 0.0)


def png(fig: Figure) -> bytes:
    """PNG bytes of a figure (no timestamp/software metadata, so the same figure gives the same bytes).

    A constrained layout is computed once, here, and the figure then drawn once: ``savefig`` would
    otherwise draw the whole figure an extra time, without output, just to lay it out (the same
    picture, byte for byte; about 7 % of a report's CPU).

    >>> fig = _figure(2, 1)
    >>> png(fig) == png(fig)
    True
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):
        engine.execute(fig)
        fig.set_layout_engine("none")
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


def fmt_p(p: Any) -> str:
    """A p-value as the report prints it: three decimals, scientific below 0.001; ``n/a`` for missing.

    >>> fmt_p(0.04321), fmt_p(2.8e-5), fmt_p(None)
    ('0.043', '2.8e-05', 'n/a')
    """
    if p is None or (isinstance(p, float) and not math.isfinite(p)):
        return "n/a"
    p = float(p)
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def fmt_num(v: Any, digits: int = 3) -> str:
    """Compact number text: ``30``, ``0.412``, ``1.2e-05``; ``n/a`` for missing.

    Examples
    --------
    >>> fmt_num(30.0), fmt_num(0.41234), fmt_num(12345.6), fmt_num(float("nan"))
    ('30', '0.412', '12,346', 'n/a')
    """
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
