"""Shared pieces of the report's charts: resolution, colours, the figure factory, PNG output, numbers."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


__all__ = ["png", "full_axes", "fmt_num", "DPI", "PER_GROUP_METRICS", "GROUP_COLOR", "REST_COLOR"]

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
