"""Drift settings from a monitor spec (``fairmon.config``'s ``drift`` and ``alerts`` sections).

One place maps the spec onto checks, baseline and policy, so the pipeline, the CLI and the
alert-quality benchmark judge windows identically.

Example
-------
>>> from fairmon.config import DriftSpec
>>> s = settings_from_spec(DriftSpec())
>>> s.policy.persistence_m, s.policy.persistence_n, s.baseline.trailing_n
(2, 3, 7)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from fairmon.config import DriftSpec
from fairmon.drift.checks import Baseline, Check, default_checks
from fairmon.drift.policy import AlertPolicy

__all__ = ["DriftSettings", "settings_from_spec"]


@dataclass(frozen=True)
class DriftSettings:
    """Checks, baseline and policy of one monitor (arguments of :func:`fairmon.drift.decide`)."""

    checks: tuple[Check, ...]
    baseline: Baseline
    policy: AlertPolicy

    def kwargs(self) -> dict[str, Any]:
        """``decide(current, history, **settings.kwargs())``."""
        return {"checks": self.checks, "baseline": self.baseline, "policy": self.policy}


def settings_from_spec(drift: Any = None, alerts: Any = None, *, tz: tzinfo = UTC) -> DriftSettings:
    """Build :class:`DriftSettings` from ``MonitorSpec.drift`` (and ``.alerts`` for min severity).

    ``None`` means the spec defaults. Cold start: ``min_history`` earlier windows are needed before
    a significance test (``ranges_only``: the allowed-range rule still alerts); with ``suppress`` no
    finding is notified before that. A reference baseline's date starts at midnight in ``tz`` (the
    schedule's timezone); the reference is the window containing that date
    (:func:`fairmon.drift.reference.reference_window`), whatever time the schedule starts windows at.
    """
    if drift is None:
        drift = DriftSpec()
    b = drift.baseline
    min_hist = max(2, int(drift.cold_start.min_history))
    if getattr(b, "kind", "trailing") == "reference":
        ref = b.window
        ref_dt = datetime(ref.year, ref.month, ref.day, tzinfo=tz) if isinstance(ref, date) else ref
        baseline = Baseline(mode="reference", reference_start=ref_dt, min_history=2, trailing_n=max(2, min_hist))
    else:
        n = int(b.n_windows)
        baseline = Baseline(mode="trailing", trailing_n=max(2, n), min_history=min(min_hist, max(2, n)))
    checks = default_checks(
        allowed={k: (v.low, v.high) for k, v in drift.allowed_ranges.items()},
        judge={k: v.judge for k, v in drift.allowed_ranges.items()},
        alpha=float(drift.significance_level),
        min_effect=float(drift.min_effect),
        dscore_threshold=float(drift.rumie.honest_dscore_threshold),
        min_jaccard=float(drift.rumie.min_jaccard),
        gesd_threshold=drift.gesd_threshold,
    )
    policy = AlertPolicy(
        persistence_m=int(drift.persistence.m),
        persistence_n=int(drift.persistence.n),
        cooldown_windows=int(drift.cooldown_windows),
        min_severity=getattr(alerts, "min_severity", "warning") if alerts is not None else "warning",
        notify_resolution=bool(getattr(alerts, "send_resolved", True)) if alerts is not None else True,
        suppress_before=min_hist if drift.cold_start.rule == "suppress" else 0,
    )
    return DriftSettings(checks=checks, baseline=baseline, policy=policy)
