"""Progress lines during long steps: ``label: done/total (pct) after N s``, every ~30 s.

A step runs inside :func:`track` (the pipeline runner wraps every step); a step with countable units
sets the total and advances with :func:`advance`, which is a no-op outside a tracked step. A daemon
thread writes the line while the step runs, so a task log is never silent for minutes even while one
unit (a KernelSHAP batch, a FEU generation) is still being computed; ``track`` logs the final line
(all units done) when the step returns.

Examples
--------
>>> import logging, sys
>>> lg = logging.getLogger("fairmon.doctest.progress")
>>> lg.addHandler(logging.StreamHandler(sys.stdout)); lg.setLevel(logging.INFO)
>>> with track("demo 2026-01-03 explain", total=3, every_s=30, logger=lg) as p:
...     advance(2)
...     p.done, p.total
(2, 3)
demo 2026-01-03 explain: 3/3 (100%) after 0 s, done
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Progress", "track", "advance", "set_total", "current", "PROGRESS_EVERY_S"]

log = logging.getLogger("fairmon.progress")

#: seconds between two progress lines of a running step
PROGRESS_EVERY_S = 30.0

_CURRENT: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("fairmon_progress", default=None)


class Progress:
    """Done/total of one running step (thread-safe: the heartbeat thread reads it)."""

    def __init__(self, label: str, total: int = 1) -> None:
        self.label = label
        self._total = max(int(total), 1)
        self._done = 0
        self._t0 = time.monotonic()
        self._lock = threading.Lock()

    @property
    def done(self) -> int:
        """Units done so far."""
        with self._lock:
            return self._done

    @property
    def total(self) -> int:
        """Units of the step."""
        with self._lock:
            return self._total

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done (never above the total)."""
        with self._lock:
            self._done = min(self._done + int(n), self._total)

    def set_total(self, total: int) -> None:
        """The step's number of units, once it knows it (at least 1)."""
        with self._lock:
            self._total = max(int(total), 1)
            self._done = min(self._done, self._total)

    def line(self) -> str:
        """``label: done/total (pct) after N s``.

        Examples
        --------
        >>> p = Progress("rumie", 4); p.advance()
        >>> p.line()
        'rumie: 1/4 (25%) after 0 s'
        """
        with self._lock:
            done, total = self._done, self._total
        return f"{self.label}: {done}/{total} ({100 * done / total:.0f}%) after {time.monotonic() - self._t0:.0f} s"


def current() -> Progress | None:
    """The tracked step's progress in this context (None outside :func:`track`)."""
    return _CURRENT.get()


def advance(n: int = 1) -> None:
    """Advance the tracked step by ``n`` units (no-op outside :func:`track`)."""
    p = _CURRENT.get()
    if p is not None:
        p.advance(n)


def set_total(total: int) -> None:
    """Set the tracked step's number of units (no-op outside :func:`track`)."""
    p = _CURRENT.get()
    if p is not None:
        p.set_total(total)


@contextmanager
def track(
    label: str, total: int = 1, *, every_s: float = PROGRESS_EVERY_S, logger: logging.Logger | None = None
) -> Iterator[Progress]:
    """Track a step: a progress line every ``every_s`` seconds while it runs, and one when it ends."""
    lg = logger or log
    p = Progress(label, total)
    stop = threading.Event()

    def _beat() -> None:
        while not stop.wait(every_s):
            lg.info(p.line())

    beat = threading.Thread(target=_beat, name=f"fairmon-progress-{label}", daemon=True)
    token = _CURRENT.set(p)
    beat.start()
    ok = False
    try:
        yield p
        ok = True
    finally:
        stop.set()
        beat.join(timeout=1.0)
        _CURRENT.reset(token)
        if ok:  # a step that returned has done all its units
            p.advance(p.total)
            lg.info("%s, done", p.line())
