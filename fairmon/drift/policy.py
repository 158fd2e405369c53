"""The alert policy and :func:`decide`: from check violations to findings.

Determinism and history
-----------------------
:func:`decide` replays the checks and the policy over the **history passed in** (earlier completed
windows, oldest first) and then the current window, and returns the current window's findings. All
state — clean baselines, persistence counters, open drifts, cooldowns — is recomputed from the
windows' *data*, never read from earlier decisions. So re-running an old window with the history
that preceded it gives the same findings as the first time, and nothing a re-run writes can change
a later window's decision. Pass at least ``baseline.trailing_n + persistence_n + cooldown_windows``
earlier windows so the replay reaches a steady state (the pipeline's store query does).

Policy (per finding key ``kind:metric:group``)
----------------------------------------------
* **Persistence**: a drift *opens* when at least ``persistence_m`` of the last ``persistence_n``
  windows (this one included) violated the rule; before that a violation is stored as ``pending``.
* **Open** findings are notified, unless a drift of the same key opened less than
  ``cooldown_windows`` windows ago (flapping) or the severity is below ``min_severity``.
* While it stays open it is ``ongoing`` (stored, not notified, except an escalation to a higher
  severity, which is notified).
* **Resolution**: an open drift resolves when fewer than ``persistence_m`` of the last
  ``persistence_n`` windows violated; the ``resolved`` finding is notified when the opening was.

Example
-------
>>> from datetime import datetime, timedelta, UTC
>>> from fairmon.drift.window import WindowSummary
>>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
>>> rows = lambda v: [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": v,
...                    "ci_low": v - 0.02, "ci_high": v + 0.02, "n": 5000, "status": "ok"}]
>>> hist = [WindowSummary("m", t0 + timedelta(days=i), metrics=rows(0.3)) for i in range(1)]
>>> now = WindowSummary("m", t0 + timedelta(days=1), metrics=rows(0.3))
>>> from fairmon.drift.checks import CIOutsideRange
>>> [f.status for f in decide(now, hist, checks=[CIOutsideRange(metric="dp_difference", high=0.1)])]
['open']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from fairmon.drift.checks import Baseline, Check, Evaluation, SignificantChange, Violation, default_checks
from fairmon.drift.findings import SEVERITIES, Finding, Severity, severity_at_least
from fairmon.drift.window import COMPLETED, Measurement, WindowSummary
from fairmon.errors import ConfigError, MethodError

__all__ = ["AlertPolicy", "decide", "replay", "ERR_HISTORY_ORDER", "ERR_POLICY"]

ERR_HISTORY_ORDER = (
    "drift history must hold only windows before the current one ({current}); got a window starting {bad}"
)
ERR_POLICY = "alert policy: {problem}"


@dataclass(frozen=True)
class AlertPolicy:
    """Persistence (m of n), cooldown (in windows), minimum severity to notify, resolution messages."""

    persistence_m: int = 2
    persistence_n: int = 3
    cooldown_windows: int = 3
    min_severity: Severity = "warning"
    notify_resolution: bool = True
    #: cold-start rule "suppress": record but do not notify while fewer than this many earlier windows exist
    suppress_before: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.persistence_m <= self.persistence_n:
            raise ConfigError(ERR_POLICY.format(problem="needs 1 <= persistence_m <= persistence_n"))
        if self.cooldown_windows < 0:
            raise ConfigError(ERR_POLICY.format(problem="cooldown_windows must be >= 0"))
        if self.min_severity not in SEVERITIES:
            raise ConfigError(ERR_POLICY.format(problem=f"min_severity must be one of {SEVERITIES}"))


@dataclass
class _KeyState:
    clean: deque[Measurement]
    flags: deque[bool]
    active: bool = False
    severity: Severity = "info"
    since: datetime | None = None
    opened_notified: bool = False
    last_open_index: int | None = None
    kind: str = ""
    metric: str = ""
    group: str = ""


@dataclass
class _Context:
    baseline: Baseline
    states: dict[str, _KeyState]
    reference_window: WindowSummary | None
    previous_window: WindowSummary | None = None
    n_tests: int = 1

    def history(self, key: str) -> list[Measurement]:
        st = self.states.get(key)
        return list(st.clean) if st else []

    def reference(self, metric: str, group: str) -> Measurement | None:
        if self.reference_window is None:
            return None
        return self.reference_window.measurements().get((metric, group))

    @property
    def previous(self) -> WindowSummary | None:
        return self.previous_window


@dataclass
class _Replay:
    checks: Sequence[Check]
    baseline: Baseline
    policy: AlertPolicy
    states: dict[str, _KeyState] = field(default_factory=dict)

    def state(self, ev: Evaluation) -> _KeyState:
        st = self.states.get(ev.key)
        if st is None:
            st = _KeyState(
                clean=deque(maxlen=self.baseline.trailing_n), flags=deque(maxlen=self.policy.persistence_n),
                kind=ev.kind, metric=ev.metric, group=ev.group,
            )
            self.states[ev.key] = st
        return st

    def step(self, index: int, window: WindowSummary, ctx: _Context) -> list[Finding]:
        ctx.n_tests = max(1, sum(
            c.n_series(window) for c in self.checks
            if isinstance(c, SignificantChange) and c.correction == "bonferroni"
        ))
        evaluations: dict[str, Evaluation] = {}
        for check in self.checks:
            for e in check.evaluate(window, ctx):
                evaluations[e.key] = e
        for e in evaluations.values():
            self.state(e)
        findings: list[Finding] = []
        for key in sorted(self.states):
            st = self.states[key]
            ev = evaluations.get(key)
            violated = ev is not None and ev.violation is not None
            st.flags.append(violated)
            if ev is not None and not violated and ev.measurement is not None:
                st.clean.append(ev.measurement)
            firing = sum(st.flags) >= self.policy.persistence_m
            f = self._transition(index, window, st, ev, violated, firing)
            if f is not None:
                findings.append(f)
        return findings

    def _transition(
        self, index: int, window: WindowSummary, st: _KeyState, ev: Evaluation | None, violated: bool, firing: bool
    ) -> Finding | None:
        pol = self.policy
        viol: Violation | None = ev.violation if ev is not None else None
        meas = ev.measurement if ev is not None else None
        if firing and not st.active:
            sev = viol.severity if viol is not None else st.severity
            cooled = st.last_open_index is None or index - st.last_open_index >= pol.cooldown_windows
            notify = cooled and severity_at_least(sev, pol.min_severity) and index >= pol.suppress_before
            st.active, st.severity, st.since, st.opened_notified = True, sev, window.window_start, notify
            st.last_open_index = index
            numbers = dict(viol.numbers) if viol else {}
            if not cooled:
                numbers["suppressed"] = "cooldown"
            return self._finding(window, st, meas, viol, "open", sev, notify, numbers)
        if firing and st.active:
            sev = st.severity
            notify = False
            if viol is not None and SEVERITIES.index(viol.severity) > SEVERITIES.index(st.severity):
                sev = viol.severity
                notify = severity_at_least(sev, pol.min_severity)
                st.severity = sev
                st.opened_notified = st.opened_notified or notify
            return self._finding(window, st, meas, viol, "ongoing", sev, notify, dict(viol.numbers) if viol else {})
        if not firing and st.active:
            st.active = False
            notify = pol.notify_resolution and st.opened_notified
            return self._finding(window, st, meas, None, "resolved", st.severity, notify, {})
        if violated and viol is not None:
            return self._finding(window, st, meas, viol, "pending", viol.severity, False,
                                 {**viol.numbers, "persistence": f"{sum(st.flags)}/{pol.persistence_m}"})
        return None

    def _finding(
        self, window: WindowSummary, st: _KeyState, meas: Measurement | None, viol: Violation | None,
        status: str, severity: Severity, notify: bool, numbers: dict,
    ) -> Finding:
        if status == "resolved":
            label = f"{st.metric} for {st.group}" if st.group else st.metric
            value = "" if meas is None else f" (now {meas.value:.3f})"
            message = f"resolved: {label} is back within the rule{value}; drifting since {st.since:%Y-%m-%d}"
        else:
            message = viol.message if viol is not None else f"{st.metric} still drifting"
        if meas is not None and meas.ci is not None:
            numbers = {**numbers, "ci_level": meas.level}  # the interval's level, for whoever renders it
        return Finding(
            kind=st.kind, metric=st.metric, group=st.group, severity=severity,
            value=meas.value if meas is not None else None, monitor=window.monitor,
            window_start=window.window_start, window_end=window.window_end, message=message,
            ci=meas.ci if meas is not None else None, baseline=viol.baseline if viol is not None else None,
            numbers=numbers, status=status,  # type: ignore[arg-type]
            notify=notify, since=st.since,
        )


def _prepare_history(current: WindowSummary, history: Sequence[WindowSummary]) -> list[WindowSummary]:
    for w in history:
        if w.window_start >= current.window_start:
            raise MethodError(ERR_HISTORY_ORDER.format(current=current.window_start.isoformat(),
                                                       bad=w.window_start.isoformat()))
    done = [w for w in history if w.status == COMPLETED and w.monitor == current.monitor]
    return sorted(done, key=lambda w: w.window_start)


def replay(
    windows: Sequence[WindowSummary],
    *,
    checks: Sequence[Check] | None = None,
    baseline: Baseline | None = None,
    policy: AlertPolicy | None = None,
) -> list[list[Finding]]:
    """Findings of every window of a chronological sequence (each judged on the ones before it).

    ``replay(ws)[-1] == decide(ws[-1], ws[:-1])``; benchmarks use it to avoid the quadratic replay.
    """
    rep = _Replay(checks if checks is not None else default_checks(), baseline or Baseline(),
                  policy or AlertPolicy())
    b = rep.baseline
    ref = None
    out: list[list[Finding]] = []
    previous: WindowSummary | None = None
    for i, w in enumerate(windows):
        if b.mode == "reference" and ref is None and b.reference_start is not None:
            ref = next((h for h in windows[:i] if h.window_start == b.reference_start), None)
        ctx = _Context(b, rep.states, ref, previous)
        out.append(rep.step(i, w, ctx))
        if w.status == COMPLETED:
            previous = w
    return out


def decide(
    current: WindowSummary,
    history: Sequence[WindowSummary],
    *,
    checks: Sequence[Check] | None = None,
    baseline: Baseline | None = None,
    policy: AlertPolicy | None = None,
) -> list[Finding]:
    """Drift findings of ``current`` judged against earlier completed windows only.

    Parameters
    ----------
    current : WindowSummary
        The window being decided.
    history : sequence of WindowSummary
        Earlier windows of the same monitor (any order; non-completed ones are ignored; a window at
        or after ``current`` raises :class:`~fairmon.errors.MethodError`).
    checks : sequence of checks, optional
        Defaults to :func:`~fairmon.drift.checks.default_checks`.
    baseline, policy
        Defaults (those of ``fairmon.config.DriftSpec``): trailing 7 windows, cold start below 3;
        persistence 2 of 3, cooldown 3, notify from ``warning``.

    Returns
    -------
    list of Finding
        Sorted by key; those with ``notify`` set are to be sent.
    """
    hist = _prepare_history(current, history)
    b = baseline or Baseline()
    if b.mode == "reference" and not any(h.window_start == b.reference_start for h in hist):
        raise MethodError(
            f"drift baseline: reference window {b.reference_start} is not among the earlier completed windows"
        )
    return replay([*hist, current], checks=checks, baseline=b, policy=policy)[-1]
