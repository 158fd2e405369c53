"""How RUMIE's discriminated group of a window relates to the previous window's: same group, new group,
changed rules, DScore then and now — from the stored evidence of the earlier window.

Definition (what the alert's "same group (Jaccard 0.83 ...)" means): the overlap is the Jaccard index
``|A ∩ B| / |A ∪ B|`` of two row sets **of the current window**: ``A`` the rows in the current group
(this window's mask) and ``B`` the rows the previous window's rules select when applied to this
window's rows (:func:`fairmon.pipeline.compute.run_rumie` computes it, the drift check
:class:`~fairmon.drift.checks.NewGroup` uses the same number). Comparing on the same rows makes the
overlap a property of the rules, not of which people happened to arrive in each window. The group is
"the same" when the overlap is at least the monitor's ``drift.rumie.min_jaccard`` (default 0.5), "new"
below it. The rule change lists the conditions (their text) that appear in only one of the two rule
sets: ``+`` added this window, ``−`` gone since the previous one.

Examples
--------
>>> from datetime import datetime, UTC
>>> h = GroupHistory(previous_window=datetime(2026, 1, 7, tzinfo=UTC), jaccard=0.83, min_jaccard=0.5,
...                  dscore_before=0.12, dscore_now=0.19, added=("region = north",), removed=())
>>> h.lines()
['same group (Jaccard 0.83 with the 2026-01-07 window’s group), honest DScore 0.12 → 0.19', 'rules changed: +`region = north`']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["GroupHistory", "group_history", "condition_texts"]


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.2f}"


@dataclass(frozen=True)
class GroupHistory:
    """The current RUMIE group against the previous completed window's.

    ``previous_window`` None: no earlier window with a RUMIE group (the first one, or the previous
    window found none). ``jaccard`` None with a previous window: the overlap could not be computed
    (e.g. a rule on a column this window lacks).
    """

    previous_window: datetime | None
    jaccard: float | None
    min_jaccard: float
    dscore_before: float | None
    dscore_now: float | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def relation(self) -> str:
        """``first`` (no earlier group), ``unknown`` (no overlap), ``new`` or ``same``."""
        if self.previous_window is None:
            return "first"
        if self.jaccard is None:
            return "unknown"
        return "same" if self.jaccard >= self.min_jaccard else "new"

    def lines(self) -> list[str]:
        """What the alert says (plain text; backticks around conditions), one or two lines."""
        dscore = f"honest DScore {_fmt(self.dscore_before)} → {_fmt(self.dscore_now)}"
        if self.previous_window is None:
            return ["new group (no RUMIE group in an earlier window)"]
        when = f"the {self.previous_window:%Y-%m-%d} window’s group"
        rel = self.relation
        if rel == "unknown":
            head = f"overlap with {when} unknown (its rules could not be applied to this window), {dscore}"
        elif rel == "new":
            head = (f"new group (Jaccard {self.jaccard:.2f} with {when}, below {self.min_jaccard:g}), "
                    f"{dscore}")
        else:
            head = f"same group (Jaccard {self.jaccard:.2f} with {when}), {dscore}"
        changes = [f"+`{c}`" for c in self.added] + [f"−`{c}`" for c in self.removed]
        return [head, "rules changed: " + ", ".join(changes) if changes else "rules unchanged"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (report, summaries)."""
        return {"previous_window": None if self.previous_window is None else self.previous_window.isoformat(),
                "jaccard": self.jaccard, "min_jaccard": self.min_jaccard, "relation": self.relation,
                "dscore_before": self.dscore_before, "dscore_now": self.dscore_now,
                "added": list(self.added), "removed": list(self.removed)}


def condition_texts(rule_conditions: Sequence[Sequence[Any]] | None, rules: Sequence[str] = ()) -> list[str]:
    """The distinct condition texts of a rule set, in order (the rules' own text when no conditions).

    >>> condition_texts([[{"column": "age", "op": "<=", "value": 30, "text": "age <= 30"}],
    ...                  [{"column": "region", "op": "=", "value": "n", "text": "region = n"},
    ...                   {"column": "age", "op": "<=", "value": 30, "text": "age <= 30"}]])
    ['age <= 30', 'region = n']
    """
    out: list[str] = []
    for rule in rule_conditions or ():
        for cond in rule:
            text = cond.get("text") if isinstance(cond, dict) else getattr(cond, "text", None)
            if text and text not in out:
                out.append(str(text))
    if not out:
        out = [str(r) for r in rules if r]
    return out


def _finite(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def group_history(
    current: Any, previous: Any | None, *, overlap: float | None, min_jaccard: float,
    previous_window: datetime | None,
) -> GroupHistory | None:
    """The history of ``current`` (an :class:`~fairmon.fairness.rumie.Evidence`) against ``previous``
    (the previous completed window's Evidence, None without one); None when the current window has no
    group to talk about (RUMIE status not ``ok``).

    ``overlap`` is the Jaccard overlap defined in the module docstring (the rumie step's
    ``group_overlap``).

    >>> from types import SimpleNamespace as NS
    >>> cur = NS(status="ok", honest_dscore=0.19, rule_conditions=[[{"text": "age <= 30"}],
    ...          [{"text": "region = north"}]], rules=[])
    >>> old = NS(status="ok", honest_dscore=0.12, rule_conditions=[[{"text": "age <= 30"}]], rules=[])
    >>> from datetime import datetime, UTC
    >>> h = group_history(cur, old, overlap=0.83, min_jaccard=0.5, previous_window=datetime(2026, 1, 7, tzinfo=UTC))
    >>> h.relation, h.added
    ('same', ('region = north',))
    """
    if current is None or getattr(current, "status", None) != "ok":
        return None
    now = condition_texts(current.rule_conditions, current.rules)
    prev = previous if previous is not None and getattr(previous, "status", "ok") == "ok" else None
    if prev is None:
        return GroupHistory(previous_window=None, jaccard=None, min_jaccard=float(min_jaccard), dscore_before=None,
                            dscore_now=_finite(current.honest_dscore))
    before = condition_texts(prev.rule_conditions, prev.rules)
    return GroupHistory(
        previous_window=previous_window,
        jaccard=_finite(overlap),
        min_jaccard=float(min_jaccard),
        dscore_before=_finite(prev.honest_dscore),
        dscore_now=_finite(current.honest_dscore),
        added=tuple(c for c in now if c not in before),
        removed=tuple(c for c in before if c not in now),
    )
