"""The vocabulary of drift checks: the baseline setting, a check's evaluation and violation, the
protocol a check implements, and the helpers that name compared groups and format numbers.

See :mod:`fairmon.drift.checks` for the checks themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from fairmon.drift.findings import Severity, finding_key
from fairmon.drift.window import Measurement, WindowSummary
from fairmon.errors import ConfigError

__all__ = [
    "Baseline",
    "CheckContext",
    "Evaluation",
    "Violation",
    "Check",
    "compared_groups",
    "level_text",
    "ERR_BASELINE",
]

ERR_BASELINE = "drift baseline {problem}"

#: disparity metric → the per-group rate(s) it compares (all rates of favorable decisions)
_GROUP_RATES: dict[str, tuple[str, ...]] = {
    "dp_difference": ("selection_rate",),
    "dp_ratio": ("selection_rate",),
    "eop_difference": ("tpr",),
    "eodds_difference": ("tpr", "fpr"),
}
_RATE_NAMES = {"selection_rate": "selection rate", "tpr": "true-positive rate", "fpr": "false-positive rate"}


def _z(level: float) -> float:
    """Two-sided normal quantile of a confidence level (1.96 at 0.95)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _se(meas: Measurement) -> float | None:
    """Standard error implied by a measurement's interval at its level (None without one)."""
    return (meas.ci[1] - meas.ci[0]) / (2 * _z(meas.level)) if meas.ci else None


def level_text(level: float) -> str:
    """``0.95`` → ``'95%'``, ``0.975`` → ``'97.5%'``."""
    return f"{level * 100:.4g}%"


@dataclass(frozen=True)
class Baseline:
    """How the comparison baseline is formed.

    ``mode="trailing"`` uses the last ``trailing_n`` earlier windows in which the series was not
    drifting; ``"reference"`` one fixed
    completed window: the one containing the reference date that starts at ``reference_start``
    (midnight in the monitor's timezone) — see :func:`fairmon.drift.policy.reference_window`.
    ``min_history`` is the cold-start rule: fewer baseline windows → no significance decision.
    """

    mode: Literal["trailing", "reference"] = "trailing"
    trailing_n: int = 7
    min_history: int = 3
    reference_start: datetime | None = None

    def __post_init__(self) -> None:
        if self.trailing_n < 2 or self.min_history < 2 or self.min_history > self.trailing_n:
            raise ConfigError(ERR_BASELINE.format(problem="needs 2 <= min_history <= trailing_n"))
        if self.mode == "reference" and self.reference_start is None:
            raise ConfigError(ERR_BASELINE.format(problem="mode 'reference' needs reference_start"))
        if self.reference_start is not None and self.reference_start.utcoffset() is None:
            raise ConfigError(ERR_BASELINE.format(
                problem=f"reference_start {self.reference_start.isoformat()} needs a timezone"))


@dataclass(frozen=True)
class Violation:
    """A series broke a rule in this window."""

    severity: Severity
    message: str
    baseline: float | None = None
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Evaluation:
    """A check looked at one series of one window (``violation`` None = clean)."""

    kind: str
    metric: str
    group: str
    measurement: Measurement | None
    violation: Violation | None = None

    @property
    def key(self) -> str:
        return finding_key(self.kind, self.metric, self.group)


class CheckContext(Protocol):
    """What a check may know beyond the current window (earlier completed windows only)."""

    baseline: Baseline
    #: number of series tested with ``correction="bonferroni"`` in this window (at least 1)
    n_tests: int

    def history(self, key: str) -> list[Measurement]:
        """Clean baseline measurements of this check key, oldest first (trailing window)."""
        ...

    @property
    def has_reference(self) -> bool:
        """Reference mode: whether a completed reference window precedes the window being judged."""
        ...

    def reference(self, metric: str, group: str) -> Measurement | None:
        """The reference window's measurement of a series (reference mode), else None."""
        ...

    @property
    def previous(self) -> WindowSummary | None:
        """The latest earlier completed window, if any."""
        ...


class Check(Protocol):
    """A drift rule bound to the series it watches."""

    @property
    def kind(self) -> str:
        """Finding kind this check produces."""
        ...

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        """Evaluate every matching series of ``window``."""
        ...


def _matching(window: WindowSummary, metric: str, attribute: str | None) -> list[tuple[str, Measurement]]:
    out = []
    for (m, g), meas in window.measurements().items():
        if m != metric:
            continue
        if attribute is not None and g != attribute and not g.startswith(f"{attribute}="):
            continue
        out.append((g, meas))
    return sorted(out, key=lambda t: t[0])


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.3f}"


def _label(metric: str, group: str) -> str:
    return f"{metric} for {group}" if group else metric


def _group_entry(name: str, meas: Measurement) -> dict[str, Any]:
    return {"group": name, "value": meas.value, "n": meas.n,
            "ci_low": meas.ci[0] if meas.ci else None, "ci_high": meas.ci[1] if meas.ci else None}


def compared_groups(window: WindowSummary, metric: str, attribute: str) -> dict[str, Any] | None:
    """The groups a disparity of ``attribute`` compares in ``window``: lowest and highest rate.

    Every rate is a rate of favorable decisions, so the lowest is the disadvantaged group and the
    highest the advantaged one. For ``eodds_difference`` the rate (TPR or FPR) with the larger spread,
    as the metric takes it. None for other metrics or when fewer than two groups have a value.

    >>> from datetime import datetime, UTC
    >>> rows = [{"metric": "selection_rate", "attribute": "sex", "group": g, "value": v, "n": n}
    ...         for g, v, n in (("Female", 0.3, 412), ("Male", 0.5, 588))]
    >>> g = compared_groups(WindowSummary("m", datetime(2026, 1, 1, tzinfo=UTC), metrics=rows), "dp_ratio", "sex")
    >>> g["disadvantaged"]["group"], g["advantaged"]["group"], g["rate"]
    ('Female', 'Male', 'selection_rate')
    """
    best: dict[str, Any] | None = None
    if not attribute or "=" in attribute:
        return None
    prefix = f"{attribute}="
    for rate in _GROUP_RATES.get(metric, ()):
        members = [(g[len(prefix):], m) for g, m in _matching(window, rate, attribute) if g.startswith(prefix)]
        if len(members) < 2:
            continue
        low = min(members, key=lambda t: (t[1].value, t[0]))
        high = max(members, key=lambda t: (t[1].value, t[0]))
        spread = high[1].value - low[1].value
        if best is None or spread > best["spread"]:
            best = {"rate": rate, "spread": spread, "disadvantaged": _group_entry(*low),
                    "advantaged": _group_entry(*high)}
    return best


def _who(groups: dict[str, Any] | None, metric: str, attribute: str) -> str:
    """Message subject: ``sex: Female selection rate 0.300 (n=412) vs Male 0.500 (n=588): dp_ratio``."""
    if groups is None:
        return _label(metric, attribute)

    def one(g: dict[str, Any]) -> str:
        n = f" (n={g['n']:,})" if isinstance(g.get("n"), int) else ""
        return f"{_fmt(g['value'])}{n}"

    lo, hi = groups["disadvantaged"], groups["advantaged"]
    rate = _RATE_NAMES.get(groups["rate"], groups["rate"])
    return f"{attribute}: {lo['group']} {rate} {one(lo)} vs {hi['group']} {one(hi)}: {metric}"
