"""The baseline's reference window and what a window was compared with.

A reference baseline is the scheduled window containing ``drift.baseline.window`` (the reference
date, :func:`fairmon.window.reference_day`); :func:`baseline_note` says in words what each window was
compared with (a trailing history, the reference window, or nothing yet and why).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from fairmon.drift.checks import Baseline
from fairmon.drift.window import COMPLETED, WindowSummary
from fairmon.errors import ConfigError, MethodError
from fairmon.window import reference_day as window_reference_day

__all__ = [
    "reference_day",
    "reference_window",
    "find_reference",
    "applies_reference",
    "baseline_note",
    "prepare_history",
    "ERR_HISTORY_ORDER",
    "ERR_NO_REFERENCE_START",
]

ERR_HISTORY_ORDER = (
    "drift history must hold only windows before the current one ({current}); got a window starting {bad}"
)
ERR_NO_REFERENCE_START = "drift baseline mode 'reference' needs reference_start"


def reference_day(baseline: Baseline) -> tuple[datetime, datetime]:
    """``[start, end)`` of the reference date (:func:`fairmon.window.reference_day` of
    ``baseline.reference_start``)."""
    if baseline.reference_start is None:
        raise ConfigError(ERR_NO_REFERENCE_START)
    return window_reference_day(baseline.reference_start)


def reference_window(windows: Iterable[WindowSummary], baseline: Baseline) -> WindowSummary | None:
    """The window that contains the reference date, among ``windows`` (any status).

    That is the first window starting on the date, in the timezone of ``baseline.reference_start``
    (with a ``0 3 * * *`` cron the one starting at 03:00 that day, as in Airflow's logical date), or,
    when none starts on it (windows longer than a day), the window spanning its midnight. None when
    no window touches the date. Pass every window around the date (the pipeline passes the
    scheduled ones): among a partial set a window spanning the midnight stands in for a missing one
    starting later that day.

    >>> from datetime import UTC
    >>> b = Baseline(mode="reference", reference_start=datetime(2026, 1, 2, tzinfo=UTC), min_history=2)
    >>> ws = [WindowSummary("m", datetime(2026, 1, d, 3, tzinfo=UTC), datetime(2026, 1, d + 1, 3, tzinfo=UTC))
    ...       for d in (1, 2, 3)]
    >>> reference_window(ws, b).window_start.day
    2
    """
    day_start, day_end = reference_day(baseline)

    def touches(w: WindowSummary) -> bool:
        if w.window_start >= day_end:
            return False
        return w.window_start >= day_start or (w.window_end is not None and w.window_end > day_start)

    found = [w for w in windows if touches(w)]
    return min(found, key=lambda w: (w.window_start < day_start, w.window_start), default=None)


def find_reference(
    current: WindowSummary, history: Sequence[WindowSummary], baseline: Baseline
) -> WindowSummary | None:
    """:func:`reference_window` among the monitor's windows passed to :func:`fairmon.drift.decide` (any status)."""
    return reference_window([*(h for h in history if h.monitor == current.monitor), current], baseline)


def applies_reference(reference: WindowSummary | None, window: WindowSummary) -> WindowSummary | None:
    """The reference as the baseline of ``window``: completed and strictly earlier, else None."""
    if reference is None or reference.status != COMPLETED or reference.window_start >= window.window_start:
        return None
    return reference


def baseline_note(
    current: WindowSummary,
    baseline: Baseline,
    *,
    reference: WindowSummary | None = None,
    history: Sequence[WindowSummary] = (),
) -> dict[str, Any]:
    """What ``current`` was compared with, in words, for the drift result and the logs.

    ``status`` is ``compared`` (a baseline exists), ``cold_start`` (nothing to compare with yet: too
    few earlier windows, or this is the reference window or one before it) or ``missing`` (reference
    mode: no completed window contains the reference date although this window is after it — the
    significance tests stay silent until one does). ``reference`` and ``history`` as for
    :func:`decide`.
    """
    if baseline.mode == "trailing":
        k = len(prepare_history(current, history))
        if k < baseline.min_history:
            return {"mode": "trailing", "status": "cold_start",
                    "reason": f"cold start: {k} earlier completed window(s), the significance tests need "
                              f"{baseline.min_history}; only rules without a baseline (allowed ranges, RUMIE "
                              f"threshold and new group) apply"}
        return {"mode": "trailing", "status": "compared",
                "reason": f"compared with the last {baseline.trailing_n} earlier completed windows in which "
                          f"the series was not drifting"}
    if reference is None:
        reference = find_reference(current, history, baseline)
    day_start, _ = reference_day(baseline)
    date = f"{day_start:%Y-%m-%d} ({day_start.tzinfo})"
    out: dict[str, Any] = {"mode": "reference", "reference_date": f"{day_start:%Y-%m-%d}",
                           "timezone": str(day_start.tzinfo), "reference_window": None}
    if reference is not None:
        out["reference_window"] = {"start": reference.window_start.isoformat(),
                                   "end": None if reference.window_end is None else reference.window_end.isoformat(),
                                   "status": reference.status}
    no_tests = ("the significance tests against the baseline are silent; rules without a baseline "
                "(allowed ranges, RUMIE threshold and new group) apply")
    if reference is not None and reference.window_start == current.window_start:
        return {**out, "status": "cold_start",
                "reason": f"this window is the reference window of {current.monitor} (reference date {date}): "
                          f"nothing to compare with; {no_tests}"}
    before = (reference.window_start > current.window_start) if reference is not None else (
        current.window_start < day_start)
    if before:
        return {**out, "status": "cold_start",
                "reason": f"this window precedes the reference window of {current.monitor} (reference date "
                          f"{date}): nothing to compare with yet; {no_tests}"}
    if reference is None or reference.status != COMPLETED:
        state = "no window contains it" if reference is None else (
            f"its window starting {reference.window_start.isoformat()}: {reference.status}")
        return {**out, "status": "missing",
                "reason": f"monitor {current.monitor} has no completed reference window for drift.baseline.window "
                          f"{date} ({state}): {no_tests}; run (or backfill) that window, or change the date"}
    return {**out, "status": "compared",
            "reason": f"compared with the reference window of {current.monitor} starting "
                      f"{reference.window_start.isoformat()} (reference date {date})"}


def prepare_history(current: WindowSummary, history: Sequence[WindowSummary]) -> list[WindowSummary]:
    """The completed windows of ``current``'s monitor in ``history``, oldest first; a window not before
    ``current`` is an error (history is the past)."""
    for w in history:
        if w.window_start >= current.window_start:
            raise MethodError(ERR_HISTORY_ORDER.format(current=current.window_start.isoformat(),
                                                       bad=w.window_start.isoformat()))
    done = [w for w in history if w.status == COMPLETED and w.monitor == current.monitor]
    return sorted(done, key=lambda w: w.window_start)
