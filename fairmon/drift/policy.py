"""The alert policy and :func:`decide`: from check violations to findings.

Determinism and history
-----------------------
:func:`decide` replays the checks and the policy over the **history passed in** (earlier completed
windows, oldest first) and then the current window, and returns the current window's findings. All
state — clean baselines, persistence counters, open drifts, cooldowns — is recomputed from the
windows' *data*, never read from earlier decisions — the one exception being the start of a drift
older than the history (``open_since``, below), taken from the latest decision *before* the window.
So re-running an old window with the history that preceded it gives the same findings as the first
time, and a re-run never rewrites a later window's stored decision. Pass at least
``baseline.trailing_n + persistence_n + cooldown_windows`` earlier windows so the replay reaches a steady state, and, while a drift is open, those windows
before its start too (the pipeline's store query does; see *Trailing baseline* below).

Two things are older than any bounded history, so the pipeline reads them from the store instead:

* the **reference window** of a reference baseline (``reference=``, see :func:`reference_window`),
  which may lie months back; the reference window itself and windows before it have nothing to
  compare with (their significance tests are silent, as in a cold start — :func:`baseline_note` says
  why), and so does every window while no completed reference window exists;
* the **start of a drift** that has lasted longer than the history (``open_since=``): the replay can
  only date such a drift to the first window it sees, so a continuing drift keeps the ``since`` the
  store recorded when it opened — which also keeps its resolution threaded under the opening alert.

Policy (per finding key ``kind:metric:group``)
----------------------------------------------
* **Persistence**: a drift *opens* when at least ``persistence_m`` of the last ``persistence_n``
  windows (this one included) violated the rule; before that a violation is stored as ``pending``.
* **Open** findings are notified, unless a drift of the same key opened less than
  ``cooldown_windows`` windows ago (flapping) or the severity is below ``min_severity``.
* While it stays open it is ``ongoing`` (stored, not notified, except an escalation to a higher
  severity, which is notified).
* **Resolution**: an open drift resolves when fewer than ``persistence_m`` of the last
  ``persistence_n`` windows violated; the ``resolved`` finding is notified when the opening was and
  no other drift that opened notified in the same window (the same alert message) is still active —
  until then it is stored with ``numbers["held"]``, and the last one's lists the rules that cleared
  earlier (``numbers["cleared_earlier"]``): one resolution per alert.
  A window in which the series is not measured (a group below ``min_group_size``, no RUMIE evidence)
  counts neither way: the drift stays ``ongoing`` and says why, and closes (saying it could not be
  measured) only after ``persistence_n`` such windows in a row; a window whose labels are pending
  never counts towards that. So "``m`` of the last ``n`` windows" means the last ``n`` *measured*
  windows of the series: a series measured rarely (a small group on busy days only) can open a drift
  from violations several windows apart.
* **Trailing baseline**: a series' baseline is its last ``trailing_n`` earlier completed windows in
  which it was *not drifting* — windows whose finding for the same key was ``pending``, ``open`` or
  ``ongoing`` stay out (the window that resolved a drift is back in). A sustained shift therefore
  never becomes its own baseline: the drift stays ``ongoing`` until the metric returns to the
  pre-drift level, and then resolves with a message threaded under the opening alert. The replay
  can only tell which windows drifted from the windows it is given, so the history must reach back
  before the start of the oldest open drift (the pipeline's store query loads from ``trailing_n +
  persistence_n + cooldown_windows + 2`` windows before it, up to a cap, and says when the cap cut
  the history short).

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

import dataclasses
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fairmon.drift.checks import Baseline, Check, Evaluation, SignificantChange, Violation, default_checks
from fairmon.drift.findings import SEVERITIES, Finding, Severity, severity_at_least
from fairmon.drift.reference import (
    ERR_HISTORY_ORDER,
    applies_reference,
    baseline_note,
    find_reference,
    prepare_history,
    reference_day,
    reference_window,
)
from fairmon.drift.resolutions import one_resolution_per_alert
from fairmon.drift.window import COMPLETED, Measurement, WindowSummary
from fairmon.errors import ConfigError

__all__ = [
    "AlertPolicy",
    "decide",
    "replay",
    "reference_day",
    "reference_window",
    "baseline_note",
    "ERR_HISTORY_ORDER",
    "ERR_POLICY",
]

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
    unmeasured: int = 0  # consecutive windows without a measurement while active
    #: the alert (its ``since``) whose resolution this key's held resolution waits in, kept if it reopens
    held_for: datetime | None = None
    kind: str = ""
    metric: str = ""
    group: str = ""


@dataclass
class _Context:
    baseline: Baseline
    states: dict[str, _KeyState]
    #: the completed reference window when it precedes the window being judged, else None
    reference_window: WindowSummary | None
    previous_window: WindowSummary | None = None
    n_tests: int = 1

    def history(self, key: str) -> list[Measurement]:
        st = self.states.get(key)
        return list(st.clean) if st else []

    @property
    def has_reference(self) -> bool:
        return self.reference_window is not None

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
    #: the store's start of drifts older than the history (:func:`decide`'s ``open_since``)
    open_since: Mapping[str, datetime] = field(default_factory=dict)

    def since_of(self, key: str, since: datetime | None) -> datetime | None:
        """A drift's start: the replay's, or the store's when that is earlier (a drift older than the history)."""
        stored = self.open_since.get(key)
        return stored if stored is not None and since is not None and stored < since else since

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
            if ev is None:  # not measured this window: it neither violates nor complies
                f = self._unmeasured(window, st)
                if f is not None:
                    findings.append(f)
                continue
            st.unmeasured = 0
            violated = ev.violation is not None
            st.flags.append(violated)
            firing = sum(st.flags) >= self.policy.persistence_m
            f = self._transition(index, window, st, ev, violated, firing)
            if f is not None:
                findings.append(f)
            if ev is not None and ev.measurement is not None and _joins_baseline(ev, f):
                st.clean.append(ev.measurement)
        return one_resolution_per_alert(findings, self.states, self.since_of)

    def _unmeasured(self, window: WindowSummary, st: _KeyState) -> Finding | None:
        """A series without a measurement (a group below ``min_group_size`` on a quiet day, no RUMIE
        evidence) adds no persistence flag: counting it as compliant resolved an open drift — and
        notified "back within the rule" — on every low-traffic day, and reopened it the next. An open
        drift stays ``ongoing``; after ``persistence_n`` such windows in a row it closes, saying so."""
        if not st.active:
            return None
        why = _unmeasured_reason(window, st.metric, st.group)
        if why != LABELS_PENDING:  # labels arrive later: such windows never count towards closing the drift
            st.unmeasured += 1
        label = f"{st.metric} for {st.group}" if st.group else st.metric
        if st.unmeasured <= self.policy.persistence_n:
            message = f"{label} not measured in this window ({why}); the drift since {st.since:%Y-%m-%d} stays open"
            return self._finding(window, st, None, None, "ongoing", st.severity, False,
                                 {"unmeasured": st.unmeasured, "unmeasured_reason": why}, message=message)
        st.active, st.unmeasured = False, 0
        st.flags.clear()
        message = (f"closed: {label} has not been measured for {self.policy.persistence_n + 1} windows in a row "
                   f"({why}), so it cannot be shown back within the rule; drifting since {st.since:%Y-%m-%d}")
        return self._finding(window, st, None, None, "resolved", st.severity,
                             self.policy.notify_resolution and st.opened_notified, {"unmeasured": True}, message=message)

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
        status: str, severity: Severity, notify: bool, numbers: dict[str, Any], message: str | None = None,
    ) -> Finding:
        if message is None and status == "resolved":
            message = _resolved_message(st.metric, st.group, None if meas is None else meas.value, st.since)
        elif message is None:
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


LABELS_PENDING = "labels pending"


def _unmeasured_reason(window: WindowSummary, metric: str, key: str) -> str:
    """Why ``window`` has no value for the series ``(metric, key)``, from its stored row's status."""
    row = window.metric_row(metric, key)
    if row is not None:
        status = str(row.get("status", "ok"))
        if status == "labels_pending":
            return LABELS_PENDING
        return "a group below outcome.min_group_size" if status == "insufficient" else f"status {status}"
    if metric.startswith("rumie") or metric == "gesd":
        return "no RUMIE group or GESD value this window"
    return "the metric was not computed"


def _joins_baseline(ev: Evaluation | None, finding: Finding | None) -> bool:
    """Whether this window's measurement of a series joins the series' trailing baseline.

    Only a window in which the series is not drifting does: no finding, or the window that resolved
    the drift. A pending, open or ongoing window stays out even when it did not violate itself (the
    quiet window inside a 2-of-3 persistence), so a drift never becomes its own baseline: the
    baseline stays the pre-drift level however long the drift lasts, and the drift stays ongoing
    until the metric comes back.
    """
    if ev is None or ev.measurement is None or ev.violation is not None:
        return False
    return finding is None or finding.status == "resolved"


def _resolved_message(metric: str, group: str, value: float | None, since: datetime | None) -> str:
    label = f"{metric} for {group}" if group else metric
    now = "" if value is None else f" (now {value:.3f})"
    return f"resolved: {label} is back within the rule{now}; drifting since {since:%Y-%m-%d}"


def _continued(finding: Finding, open_since: Mapping[str, datetime]) -> Finding:
    """A drift the store already holds open keeps the start recorded when it opened.

    The replay can date a drift only to the first window of the history it was given, so for a drift
    older than that history it is too late, never too early: the earlier of the two is the truth.
    """
    stored = open_since.get(finding.key)
    if finding.status not in ("ongoing", "resolved") or stored is None:
        return finding
    if finding.since is not None and finding.since <= stored:
        return finding
    message = finding.message
    if finding.status == "resolved":
        message = _resolved_message(finding.metric, finding.group, finding.value, stored)
    return dataclasses.replace(finding, since=stored, message=message)


def replay(
    windows: Sequence[WindowSummary],
    *,
    checks: Sequence[Check] | None = None,
    baseline: Baseline | None = None,
    policy: AlertPolicy | None = None,
    reference: WindowSummary | None = None,
    open_since: Mapping[str, datetime] | None = None,
) -> list[list[Finding]]:
    """Findings of every window of a chronological sequence (each judged on the ones before it).

    ``replay(ws)[-1] == decide(ws[-1], ws[:-1])``; benchmarks use it to avoid the quadratic replay.
    ``reference`` and ``open_since`` as for :func:`decide` (None: :func:`reference_window` of
    ``windows``; no drift older than the windows).
    """
    rep = _Replay(checks if checks is not None else default_checks(), baseline or Baseline(),
                  policy or AlertPolicy(), open_since=dict(open_since or {}))
    b = rep.baseline
    ref = None
    if b.mode == "reference":
        ref = reference if reference is not None else reference_window(windows, b)
    out: list[list[Finding]] = []
    previous: WindowSummary | None = None
    for i, w in enumerate(windows):
        ctx = _Context(b, rep.states, applies_reference(ref, w), previous)
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
    reference: WindowSummary | None = None,
    open_since: Mapping[str, datetime] | None = None,
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
    reference : WindowSummary, optional
        Reference mode: the window containing the reference date, any status (only a completed one
        earlier than a window is that window's baseline); it need not be in ``history``. None: the
        :func:`reference_window` of ``history`` + ``current``. Without a completed earlier reference
        the significance tests are silent (see :func:`baseline_note`); nothing raises.
    open_since : mapping, optional
        Finding key → ``since`` of the drifts the store holds open (latest decision before
        ``current``): an ``ongoing`` or ``resolved`` finding keeps the earlier of it and the replay's.

    Returns
    -------
    list of Finding
        Sorted by key; those with ``notify`` set are to be sent.
    """
    hist = prepare_history(current, history)
    b = baseline or Baseline()
    if b.mode == "reference" and reference is None:
        reference = find_reference(current, history, b)
    findings = replay([*hist, current], checks=checks, baseline=b, policy=policy, reference=reference,
                      open_since=open_since)[-1]
    return [_continued(f, open_since) for f in findings] if open_since else findings
