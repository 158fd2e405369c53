"""Drift checks as data: frozen specs bound to a window's series (the evidently habit).

Each check is a small frozen dataclass with an ``evaluate(window, ctx)`` that returns one
:class:`Evaluation` per series it looked at — with a :class:`Violation` when the series breaks the
rule. The policy (:mod:`fairmon.drift.policy`) turns violations into findings (persistence,
cooldown, resolution); the checks know nothing about alerting.

Statistics
----------
* :class:`CIOutsideRange` — ``judge="interval"`` (default), the SageMaker Clarify rule: the window's
  confidence interval lies entirely outside the allowed range ``[low, high]`` (without an interval,
  the point value); ``judge="value"``: the point value lies outside it (a compliance rule such as the
  four-fifths rule, ``dp_ratio >= 0.8``, is read on the value). ``numbers["judge"]`` says which.
* :class:`SignificantChange` — one-sided (or two-sided) test of the current value against the
  baseline. *Trailing* baseline: the last ``trailing_n`` earlier completed windows in which this
  series was not drifting — no ``pending``, ``open`` or ``ongoing`` finding of the same key (see
  :mod:`fairmon.drift.policy`), so a drift, however long, does not become its own baseline; the statistic is the
  prediction-interval t statistic ``(x − mean) / (sd · sqrt(1 + 1/k))`` with ``k − 1`` degrees of
  freedom, which accounts for both sampling noise and genuine window-to-window variation. The
  scale is at least the current window's bootstrap standard error (CI width / 2z at the interval's
  level) so a constant history cannot make every wiggle significant. *Reference* baseline: a z test of the difference
  with both windows' bootstrap standard errors (series without an interval fall back to the
  trailing rule); the reference window itself, windows before it, and every window while no
  completed reference window exists have nothing to compare with, and the check is silent there.
  With fewer than ``min_history`` baseline windows the check is silent (cold start).
  A change must also exceed ``min_effect`` in the metric's units (practical significance).
* RUMIE: :class:`DScoreAbove` (honest DScore above a threshold with split-sample ``p ≤ alpha``),
  :class:`SignificantChange` on ``rumie_honest_dscore`` (kind ``rumie_rise``), :class:`NewGroup`
  (Jaccard overlap with the previous window's group below ``min_jaccard``, see
  :class:`~fairmon.drift.window.WindowSummary.group_overlap`) and :class:`KeyAttributesChanged`.
* GESD: :class:`SignificantChange` on ``gesd`` (kind ``gesd_rise``).
* Who: a violation of a disparity (``dp_difference``/``dp_ratio``: selection rates; ``eop_difference``:
  true-positive rates; ``eodds_difference``: whichever of TPR/FPR spreads more) names the grouping's
  groups with the lowest and the highest rate — the disadvantaged and the advantaged group, every rate
  being a rate of *favorable* decisions — with their values and sizes (``numbers["groups"]``, see
  :func:`compared_groups`). It needs the per-group rows in the window (``selection_rate`` / ``tpr`` /
  ``fpr`` among the monitor's ``outcome.metrics``); without them the message names the grouping only.
* Interval levels: a series' interval is at its :attr:`Measurement.level` (outcome rows: the monitor's
  ``outcome.confidence``); standard errors are ``width / (2 z)`` at that level and messages print it.
* Multiplicity: a window tests many series (every metric × grouping, RUMIE, GESD). With
  ``correction="bonferroni"`` (what :func:`checks_from_spec` uses) the significance level is the
  *family-wise* level of the window: each series is tested at ``alpha / n_tests``, ``n_tests`` being the
  number of bonferroni-corrected series evaluated in that window. Without it, a stationary monitor
  with a dozen series would raise an alert most weeks.

Example
-------
>>> c = CIOutsideRange(metric="dp_difference", high=0.1)
>>> c.kind
'ci_outside_range'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fairmon.drift.check_types import (
    ERR_BASELINE,
    Baseline,
    Check,
    CheckContext,
    Evaluation,
    Violation,
    _fmt,
    _label,
    _matching,
    _se,
    _who,
    compared_groups,
    level_text,
)
from fairmon.drift.findings import Severity, finding_key
from fairmon.drift.window import Measurement, WindowSummary

__all__ = [
    "Baseline",
    "CheckContext",
    "Evaluation",
    "Violation",
    "Check",
    "CIOutsideRange",
    "SignificantChange",
    "DScoreAbove",
    "NewGroup",
    "KeyAttributesChanged",
    "default_checks",
    "compared_groups",
    "level_text",
    "ERR_BASELINE",
]


@dataclass(frozen=True)
class CIOutsideRange:
    """``metric`` lies outside ``[low, high]``: its whole interval (``judge="interval"``, the SageMaker
    Clarify rule) or its point value (``judge="value"``, e.g. the four-fifths rule).

    ``attribute`` restricts it to one grouping (None: every grouping). The finding is ``critical``
    when the judged interval (or value) is beyond the range by more than ``critical_margin``.

    >>> CIOutsideRange(metric="dp_ratio", low=0.8).high
    inf
    >>> w = WindowSummary.build("m", "2026-01-01", "2026-01-02", outcome=[{"metric": "dp_ratio",
    ...     "attribute": "sex", "value": 0.794, "ci_low": 0.70, "ci_high": 0.88, "n": 395}])
    >>> CIOutsideRange(metric="dp_ratio", low=0.8).evaluate(w, None)[0].violation is None  # CI reaches 0.88
    True
    >>> CIOutsideRange(metric="dp_ratio", low=0.8, judge="value").evaluate(w, None)[0].violation.numbers["judge"]
    'value'
    """

    metric: str
    low: float = -math.inf
    high: float = math.inf
    attribute: str | None = None
    severity: Severity = "warning"
    critical_margin: float | None = None
    kind: str = "ci_outside_range"
    judge: Literal["interval", "value"] = "interval"

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        out = []
        for group, meas in _matching(window, self.metric, self.attribute):
            on_value = self.judge == "value" or meas.ci is None
            lo, hi = (meas.value, meas.value) if on_value else (meas.ci or (meas.value, meas.value))
            gap = max(lo - self.high, self.low - hi)
            violation = None
            if gap > 0:
                sev: Severity = self.severity
                if self.critical_margin is not None and gap > self.critical_margin:
                    sev = "critical"
                side = f"above the allowed maximum {self.high:g}" if lo > self.high else (
                    f"below the allowed minimum {self.low:g}")
                groups = compared_groups(window, self.metric, group)
                numbers: dict[str, Any] = {"allowed_low": self.low, "allowed_high": self.high, "n": meas.n,
                                           "gap": gap, "judge": self.judge}
                if groups is not None:
                    numbers["groups"] = groups
                if meas.ci is not None and self.judge == "interval":
                    interval = f" ({level_text(meas.level)} CI {_fmt(lo)}–{_fmt(hi)}), the whole interval {side}"
                elif meas.ci is not None:
                    c_lo, c_hi = meas.ci
                    interval = (f", {side} (judged on the value; {level_text(meas.level)} CI "
                                f"{_fmt(c_lo)}–{_fmt(c_hi)})")
                else:
                    interval = f", {side}"
                who = _who(groups, self.metric, group)
                verb = " is" if groups is None else ""
                violation = Violation(sev, f"{who}{verb} {_fmt(meas.value)}{interval}", numbers=numbers)
            out.append(Evaluation(self.kind, self.metric, group, meas, violation))
        return out


@dataclass(frozen=True)
class SignificantChange:
    """``metric`` moved significantly from the baseline (see module docstring for the test).

    ``direction``: ``increase`` (a disparity growing), ``decrease`` (a ratio falling) or ``both``.
    ``critical_alpha`` (default ``alpha / 10``) upgrades the severity to critical.

    A window whose own interval contains the baseline is never a significant change. With a symmetric
    95% interval and the default ``alpha`` (0.01) this never binds: the test's scale is at least the
    interval's standard error, so significance already puts the baseline outside it (with a one-sided
    ``alpha`` above 0.025 it can bind: a change is then claimed only beyond the window's own interval).
    It binds where the interval is skewed — a 30-row group with no favourable
    decision has ``dp_ratio`` 0 with interval [0, 1] — and there the t-test on the interval's
    half-width called a ratio of 0 "significant" beside a baseline of 0.89 (12 notified openings in
    100 stationary windows without any disparity; session 23).
    """

    metric: str
    attribute: str | None = None
    direction: Literal["increase", "decrease", "both"] = "increase"
    alpha: float = 0.01
    min_effect: float = 0.0
    severity: Severity = "warning"
    critical_alpha: float | None = None
    kind: str = "significant_change"
    correction: Literal["none", "bonferroni"] = "none"

    def n_series(self, window: WindowSummary) -> int:
        """How many series of ``window`` this check tests (for the family-wise correction)."""
        return len(_matching(window, self.metric, self.attribute))

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        out = []
        for group, meas in _matching(window, self.metric, self.attribute):
            key = finding_key(self.kind, self.metric, group)
            violation = self._test(meas, key, group, ctx)
            groups = compared_groups(window, self.metric, group) if violation is not None else None
            if violation is not None and groups is not None:
                violation = Violation(
                    violation.severity, f"{_who(groups, self.metric, group)} {violation.message}",
                    violation.baseline, {**violation.numbers, "groups": groups},
                )
            elif violation is not None:
                violation = Violation(violation.severity, f"{_label(self.metric, group)} {violation.message}",
                                      violation.baseline, violation.numbers)
            out.append(Evaluation(self.kind, self.metric, group, meas, violation))
        return out

    def _test(self, meas: Measurement, key: str, group: str, ctx: CheckContext) -> Violation | None:
        """The significance test; the violation's message starts after its subject (added by the caller)."""
        from scipy import stats

        se_cur = _se(meas) or 0.0
        ref = None
        if ctx.baseline.mode == "reference":
            if not ctx.has_reference:
                return None  # the reference window itself, one before it, or none stored: nothing to compare
            ref = ctx.reference(self.metric, group)
        if ref is not None and ref.ci is not None and meas.ci is not None:
            base = ref.value
            se_ref = _se(ref) or 0.0
            scale = max(math.hypot(se_cur, se_ref), 1e-9)  # two zero-width intervals: no division by 0
            dist = "z"
            k = 1
        else:
            hist = ctx.history(key)
            k = len(hist)
            if k < ctx.baseline.min_history:
                return None  # cold start: not enough history to judge
            values = [h.value for h in hist]
            base = sum(values) / k
            sd = math.sqrt(sum((v - base) ** 2 for v in values) / (k - 1))
            scale = max(sd * math.sqrt(1.0 + 1.0 / k), se_cur, 1e-9)
            dist = "t"
        diff = meas.value - base
        stat = diff / scale
        def sf(x: float) -> float:
            return float(stats.norm.sf(x)) if dist == "z" else float(stats.t.sf(x, k - 1))

        alpha = self.alpha / max(1, ctx.n_tests) if self.correction == "bonferroni" else self.alpha
        if self.direction == "increase":
            p = sf(stat)
        elif self.direction == "decrease":
            p = sf(-stat)
        else:
            p = min(1.0, 2 * sf(abs(stat)))
        if p > alpha or abs(diff) < self.min_effect:
            return None
        if meas.noise_floor is not None and (abs(diff) <= meas.noise_floor or meas.value <= meas.noise_floor):
            return None  # a change within the metric's own noise floor (GESD's permutation null) is no change
        if meas.ci is not None and meas.ci[0] <= base <= meas.ci[1]:
            return None  # the window's own interval holds the baseline (see the class docstring)
        if self.direction == "increase" and diff <= 0 or self.direction == "decrease" and diff >= 0:
            return None
        crit = self.critical_alpha if self.critical_alpha is not None else alpha / 10
        sev: Severity = "critical" if p <= crit else self.severity
        word = "rose" if diff > 0 else "fell"
        where = "the reference window" if dist == "z" else f"the last {k} earlier windows it was not drifting in"
        return Violation(
            sev,
            f"{word} to {_fmt(meas.value)} from a baseline of {_fmt(base)} "
            f"({where}; change {diff:+.3f}, p = {p:.2g})",
            baseline=base,
            numbers={"p_value": p, "statistic": stat, "history": k, "scale": scale, "test": dist,
                     "direction": self.direction,
                     "alpha": alpha, "n_tests": ctx.n_tests if self.correction == "bonferroni" else 1, "min_effect": self.min_effect, "change": diff},
        )


@dataclass(frozen=True)
class DScoreAbove:
    """RUMIE's honest DScore is *significantly* above ``threshold``.

    One-sided Wald test of ``DScore <= threshold`` with the held-out standard error
    (:func:`~fairmon.drift.window.honest_dscore_se`, the interval of the series): a group whose true
    DScore sits just under the threshold does not alert every time sampling noise lifts the estimate
    over it (the Clarify rule applied to RUMIE). The split-sample p-value must also be ``≤ alpha``.
    Without a standard error the point value is compared.
    """

    threshold: float = 0.1
    alpha: float = 0.05
    severity: Severity = "warning"
    critical_threshold: float | None = None
    kind: str = "rumie_dscore"
    metric: str = "rumie_honest_dscore"

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        from statistics import NormalDist

        meas = window.measurements().get((self.metric, ""))
        if meas is None:
            return []
        violation = None
        p = meas.p_value
        se = _se(meas)
        p_thr = 1.0 - NormalDist().cdf((meas.value - self.threshold) / se) if se else (
            0.0 if meas.value > self.threshold else 1.0)
        if meas.value > self.threshold and p_thr <= self.alpha and p is not None and p <= self.alpha:
            sev: Severity = self.severity
            if self.critical_threshold is not None and meas.value > self.critical_threshold:
                sev = "critical"
            violation = Violation(
                sev,
                f"the most discriminated group found by RUMIE has an honest DScore of {_fmt(meas.value)}, "
                f"significantly above the threshold {self.threshold:g} (p = {p_thr:.2g})",
                numbers={"threshold": self.threshold, "p_value": p_thr, "p_value_zero": p, "alpha": self.alpha,
                         "se": se},
            )
        return [Evaluation(self.kind, self.metric, "", meas, violation)]


def _discriminated(window: WindowSummary, alpha: float, min_dscore: float) -> tuple[float | None, float | None, bool]:
    """RUMIE's honest DScore p-value and value, and whether its group is *discriminated*: significant
    (``p <= alpha``) with an honest DScore above ``min_dscore`` (:class:`NewGroup`, :class:`KeyAttributesChanged`)."""
    ev = window.measurements().get(("rumie_honest_dscore", ""))
    p = ev.p_value if ev is not None else None
    honest = ev.value if ev is not None else None
    return p, honest, p is not None and p <= alpha and honest is not None and honest > min_dscore


@dataclass(frozen=True)
class NewGroup:
    """RUMIE's group barely overlaps the previous window's group (Jaccard < ``min_jaccard``).

    Only a *discriminated* current group counts — significant (``p ≤ alpha``) and with an honest DScore
    above ``min_dscore`` (the monitor's DScore threshold): under a stationary model with little
    discrimination, the most discriminated group is weakly identified and wanders between windows,
    which is not news. Needs :attr:`WindowSummary.group_overlap`; skipped when it is unknown.
    """

    min_jaccard: float = 0.5
    alpha: float = 0.01
    min_dscore: float = 0.0
    severity: Severity = "warning"
    kind: str = "rumie_new_group"
    metric: str = "rumie_group_overlap"

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        if window.group_overlap is None or ctx.previous is None or ctx.previous.evidence is None:
            return []
        meas = Measurement(float(window.group_overlap))
        violation = None
        p, honest, discriminated = _discriminated(window, self.alpha, self.min_dscore)
        if window.group_overlap < self.min_jaccard and discriminated:
            violation = Violation(
                self.severity,
                f"RUMIE found a new discriminated group: overlap with the previous window's group is "
                f"{window.group_overlap:.2f} (Jaccard; minimum {self.min_jaccard:g})",
                numbers={"jaccard": window.group_overlap, "min_jaccard": self.min_jaccard, "p_value": p,
                         "honest_dscore": honest, "min_dscore": self.min_dscore,
                         "previous_rules": (list(ctx.previous.evidence.rules)
                                            if ctx.previous.evidence is not None else None)},
            )
        return [Evaluation(self.kind, self.metric, "", meas, violation)]


@dataclass(frozen=True)
class KeyAttributesChanged:
    """The key attributes of RUMIE's group differ from the previous window's, and the group is discriminated.

    As for :class:`NewGroup`, only a *discriminated* current group counts — significant (``p <= alpha``)
    and with an honest DScore above ``min_dscore`` (the monitor's DScore threshold). Before session 18
    significance alone counted: on the demo's stable production model (honest DScore 0.02-0.05, far
    below its 0.12 threshold, yet significant on 5,000 rows) the weakly identified group changed its
    attributes every window, and the finding stayed open for five windows of an unchanged model.
    """

    alpha: float = 0.01
    min_dscore: float = 0.0
    severity: Severity = "info"
    kind: str = "rumie_key_attributes"
    metric: str = "rumie_key_attributes"

    def evaluate(self, window: WindowSummary, ctx: CheckContext) -> list[Evaluation]:
        prev = ctx.previous
        if window.evidence is None or prev is None or prev.evidence is None:
            return []
        now, before = set(window.key_attributes), set(prev.key_attributes)
        union = now | before
        jacc = len(now & before) / len(union) if union else 1.0
        p, honest, discriminated = _discriminated(window, self.alpha, self.min_dscore)
        violation = None
        if now != before and discriminated:
            violation = Violation(
                self.severity,
                f"RUMIE's key attributes changed from {sorted(before)} to {sorted(now)}",
                numbers={"added": sorted(now - before), "removed": sorted(before - now), "jaccard": jacc,
                         "p_value": p, "honest_dscore": honest, "min_dscore": self.min_dscore},
            )
        return [Evaluation(self.kind, self.metric, "", Measurement(jacc), violation)]


def default_checks(
    *,
    allowed: dict[str, tuple[float, float]] | None = None,
    judge: Mapping[str, Literal["interval", "value"]] | None = None,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    dscore_threshold: float = 0.1,
    min_jaccard: float = 0.5,
    gesd_threshold: float | None = None,
    metrics: Sequence[str] = ("dp_difference", "dp_ratio", "eop_difference", "eodds_difference"),
) -> tuple[Check, ...]:
    """The rule set of a monitor; the defaults are those of ``fairmon.config.DriftSpec``.

    * ``allowed``: metric → ``(low, high)``; the Clarify CI rule per metric (outcome metrics,
      ``rumie_honest_dscore``, ``rumie_dscore`` or ``gesd``). Default: ``dp_ratio`` in [0.8, 1]
      (four-fifths rule).
    * ``judge``: metric → ``"interval"`` (default: the whole CI outside the range) or ``"value"``
      (the point value outside).
    * ``alpha``: family-wise significance level per window (Bonferroni over the tested series) of
      the significant-change tests and the level of RUMIE's split-sample p-value.
    * ``min_effect``: practical-significance floor of every significant change.
    * ``dscore_threshold``, ``min_jaccard``: RUMIE threshold and new-group overlap.
    * ``gesd_threshold``: optional absolute GESD level.

    >>> [type(c).__name__ for c in default_checks()][:2]
    ['CIOutsideRange', 'SignificantChange']
    """
    ranges = {"dp_ratio": (0.8, 1.0)} if allowed is None else dict(allowed)
    checks: list[Check] = []
    judged = dict(judge or {})
    for m, (lo, hi) in sorted(ranges.items()):
        checks.append(CIOutsideRange(metric=m, low=float(lo), high=float(hi), judge=judged.get(m, "interval")))
    for m in metrics:
        direction: Literal["increase", "decrease"] = "decrease" if m == "dp_ratio" else "increase"
        checks.append(SignificantChange(metric=m, direction=direction, alpha=alpha, min_effect=min_effect,
                                        correction="bonferroni"))
    checks.append(DScoreAbove(threshold=dscore_threshold, alpha=alpha))
    checks.append(SignificantChange(metric="rumie_honest_dscore", alpha=alpha, min_effect=min_effect,
                                    kind="rumie_rise", correction="bonferroni"))
    checks.append(NewGroup(min_jaccard=min_jaccard, alpha=alpha, min_dscore=dscore_threshold))
    checks.append(KeyAttributesChanged(alpha=alpha, min_dscore=dscore_threshold))
    checks.append(SignificantChange(metric="gesd", alpha=alpha, min_effect=min_effect, kind="gesd_rise",
                                    correction="bonferroni"))
    if gesd_threshold is not None:
        checks.append(CIOutsideRange(metric="gesd", high=gesd_threshold))
    return tuple(checks)
