"""Pictures across windows and candidates: the key numbers' trends and the FEU Pareto front."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fairmon.feu.labels import BASELINES, baseline_label
from fairmon.report.charts._base import (
    _ACCENT,
    _PALETTE,
    GROUP_COLOR,
    REST_COLOR,
    Margins,
    _figure,
    _ok,
    line_in,
    place_axes,
    png,
    tick_labels_in,
)

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.report.data import TrendPoint
    from fairmon.store import FEUCandidateRecord

__all__ = ["trend_chart", "pareto_chart"]


# ------------------------------------------------------------------------------------ trends

#: dotted lines: windows computed under another spec than the previous window (spec_changed events)
_SPEC_COLOR = "#9c6500"


def trend_attributes(trend: Sequence[TrendPoint]) -> list[str]:
    """The groupings the DP panels draw: every declared attribute (at most four) and the intersection with
    the largest DP difference in the last window, where disparity often is largest (the table's
    "max DP difference" is over all of them; a chart without it showed a lower worst case).

    >>> from datetime import datetime, UTC
    >>> from fairmon.report.data import TrendPoint
    >>> p = TrendPoint(datetime(2026, 1, 1, tzinfo=UTC), "succeeded", "v1", dp_difference={
    ...     "race": (0.05, 0.0, 0.1), "sex": (0.02, 0.0, 0.05), "race&sex": (0.09, 0.0, 0.2), "age&sex": (0.07, 0, 0.1)})
    >>> trend_attributes([p])
    ['race', 'sex', 'race&sex']
    """
    singles = sorted({a for p in trend for a in (*p.dp_difference, *p.dp_ratio) if "&" not in a})[:4]
    last = trend[-1].dp_difference if trend else {}
    crossed = [(v[0], a) for a, v in last.items() if "&" in a and v and v[0] is not None]
    return singles + ([max(crossed)[1]] if crossed else [])


def trend_chart(trend: Sequence[TrendPoint], *, current: datetime | None = None) -> bytes | None:
    """The key metrics across windows (from the store): DP difference and ratio per attribute (CI
    bands), RUMIE DScore (held-out and in-sample) and GESD per attribute; the current window, model-version changes,
    spec changes (dotted) and windows with an active drift finding are marked.

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
    attrs = trend_attributes(trend)
    fig = _figure(11.5, 5.6, layout=False)
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
    spec_x = [p.window_start for p in trend if p.spec_changed]
    for ax, title in panels:
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
        for x in drift_x:
            ax.axvline(x, color=GROUP_COLOR, alpha=0.35, lw=4)
        for x, _version in changes:
            ax.axvline(x, color="#33415c", ls="--", lw=1)
        for x in spec_x:
            ax.axvline(x, color=_SPEC_COLOR, ls=":", lw=1.5)
        if current is not None:
            ax.axvline(current, color=_ACCENT, lw=6, alpha=0.18)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="best", frameon=False)
    for x, version in changes:
        axes[0].annotate(f"model {version}", (x, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                         xytext=(-3, -10), textcoords="offset points", color="#33415c", ha="right")
    for x in spec_x:
        axes[0].annotate("spec changed", (x, 0.0), xycoords=("data", "axes fraction"), fontsize=7,
                         xytext=(-3, 4), textcoords="offset points", color=_SPEC_COLOR, ha="right")
    if drift_x:
        axes[2].plot([], [], color=GROUP_COLOR, alpha=0.35, lw=4, label="active drift finding")
        axes[2].legend(fontsize=8, loc="best", frameon=False)
    for ax in axes:
        if len(xs) <= 14:  # one tick per window
            ax.set_xticks(xs)
            ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d"))  # type: ignore[no-untyped-call]
        else:
            locator = mdates.AutoDateLocator(minticks=3, maxticks=10)  # type: ignore[no-untyped-call]
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    if len(xs) == 1:  # one window: give the axis a width
        from datetime import timedelta

        for ax in axes:
            ax.set_xlim(xs[0] - timedelta(days=1), xs[0] + timedelta(days=1))
    # margins from the tick labels the axes will draw (8 pt; the top row shares the bottom row's
    # dates); the vertical ones first, since how many y ticks an axis gets depends on its height
    date_lines = 1 if len(xs) <= 14 else 2  # ConciseDateFormatter adds an offset line (year, month)
    rows = {"top": Margins.title(), "bottom": Margins.ticks(line_in(8, date_lines)), "hspace": Margins.title() + 0.05}
    place_axes(fig, Margins(left=0.6, right=0.1, wspace=0.75, **rows), nrows=2, ncols=2)
    left_w = max(tick_labels_in(axes[i].yaxis, 8) for i in (0, 2))
    right_w = max(tick_labels_in(axes[i].yaxis, 8) for i in (1, 3))
    place_axes(fig, Margins(left=Margins.ticks(left_w), right=0.1, wspace=Margins.ticks(right_w) + 0.15, **rows),
               nrows=2, ncols=2)
    return png(fig)


# ------------------------------------------------------------------------------------ FEU


def _test_metric(c: FEUCandidateRecord, name: str) -> float | None:
    m = c.metrics or {}
    for src in (m.get("test"), m):
        if isinstance(src, Mapping) and _ok(src.get(name)):
            return float(src[name])
    return None


#: the marker of each baseline an FEU result is compared with (``feu_baselines``), in legend order
_BASELINE_MARKERS = dict(zip(BASELINES, ("s", "X", "^", "v", "<"), strict=True))


def pareto_chart(candidates: Sequence[FEUCandidateRecord],
                 baselines: Mapping[str, Mapping[str, Any]] | None = None) -> bytes | None:
    """FEU candidates: utility against DP difference on test, coloured by GESD, the recommended one
    starred, beside the baselines it was compared with (production, approve-everyone, fairlearn's
    mitigators).

    The utility axis is the utility the candidates were searched on (stored with them: balanced
    accuracy by default, AUC in paper mode); for rows stored without it, balanced accuracy when every
    candidate has it, AUC otherwise. The Pareto set is three-dimensional
    (utility, DP, GESD), so its 2-D projection is drawn as points (a connecting line would suggest a
    front that is not there).

    >>> from fairmon.store import FEUCandidateRecord
    >>> c = FEUCandidateRecord(0, metrics={"test": {"auc": 0.8, "dp": 0.05, "gesd": 0.01}}, pareto=True,
    ...                        selected=True)
    >>> pareto_chart([c])[1:4] == b"PNG", pareto_chart([])
    (True, None)
    >>> base = {"production": {"test": {"auc": 0.82, "balanced_accuracy": 0.7, "dp": 0.12}}}
    >>> pareto_chart([c], base)[1:4] == b"PNG"
    True
    """
    searched = {str((c.metrics or {}).get("utility")) for c in candidates} - {"None"}
    y_name = searched.pop() if len(searched) == 1 else "balanced_accuracy" if candidates and all(
        _test_metric(c, "balanced_accuracy") is not None for c in candidates) else "auc"
    pts: list[tuple[FEUCandidateRecord, float, float, float | None]] = []
    for c in candidates:
        dp, y = _test_metric(c, "dp"), _test_metric(c, y_name)
        if dp is not None and y is not None:
            pts.append((c, dp, y, _test_metric(c, "gesd")))
    if not pts:
        return None
    marks = []  # (label, marker, colour, dp, utility) of each baseline with both numbers on test
    for (name, marker), color in zip(_BASELINE_MARKERS.items(), _PALETTE[1:] + _PALETTE):
        test = ((baselines or {}).get(name) or {}).get("test") or {}
        if _ok(test.get("dp")) and _ok(test.get(y_name)):
            marks.append((baseline_label(name, test.get("tol")), marker, color, float(test["dp"]), float(test[y_name])))
    fig = _figure(6.4, 4.0)
    ax = fig.add_subplot()
    g = [p[3] for p in pts]
    if all(v is not None for v in g):
        sc = ax.scatter([p[1] for p in pts], [p[2] for p in pts], c=[float(v or 0.0) for v in g], cmap="viridis", s=70,
                        edgecolors="#1d2433", linewidths=0.6, zorder=3)
        fig.colorbar(sc, ax=ax, label="GESD (test)")
    else:
        ax.scatter([p[1] for p in pts], [p[2] for p in pts], color=_ACCENT, s=70, zorder=3)
    for c, dp, y, _ in pts:
        ax.annotate(f"#{c.candidate_index + 1}", (dp, y), xytext=(5, 4), textcoords="offset points", fontsize=8)
        if c.selected:
            ax.scatter([dp], [y], marker="*", s=420, facecolors="none", edgecolors=GROUP_COLOR,
                       linewidths=1.8, zorder=4, label="recommended")
    for label, marker, color, dp, y in marks:
        ax.scatter([dp], [y], marker=marker, s=60, color=color, edgecolors="#1d2433", linewidths=0.5, zorder=2,
                   label=label)
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("DP difference (test, lower is fairer)")
    ax.set_ylabel({"balanced_accuracy": "balanced accuracy", "auc": "AUC", "f1": "F1"}.get(y_name, y_name) + " (test)")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.grid(alpha=0.3)
    if len(pts) == 1 and not marks:  # one candidate alone: centre it in a readable window
        _, dp, y, _ = pts[0]
        ax.set_xlim(max(0.0, dp - 0.05), dp + 0.05)
        ax.set_ylim(y - 0.05, y + 0.05)
    if marks or any(c.selected for c, *_ in pts):
        ax.legend(fontsize=7, loc="best", frameon=True)
    return png(fig)
