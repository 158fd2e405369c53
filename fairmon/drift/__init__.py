"""Drift decisions: typed findings from checks-as-data and an alert policy.

``decide(current, history)`` judges one window against earlier completed windows only; see
:mod:`fairmon.drift.policy` for persistence, cooldown and resolution, :mod:`fairmon.drift.checks`
for the statistics.
"""

from __future__ import annotations

from fairmon.drift.checks import (
    Baseline,
    Check,
    CIOutsideRange,
    DScoreAbove,
    KeyAttributesChanged,
    NewGroup,
    SignificantChange,
    default_checks,
)
from fairmon.drift.findings import (
    SEVERITIES,
    Finding,
    Severity,
    finding_fingerprint,
    finding_key,
    severity_at_least,
)
from fairmon.drift.policy import AlertPolicy, decide, replay
from fairmon.drift.reference import baseline_note, reference_window
from fairmon.drift.spec import DriftSettings, settings_from_spec
from fairmon.drift.window import Measurement, WindowSummary

__all__ = [
    "AlertPolicy",
    "Baseline",
    "Check",
    "CIOutsideRange",
    "DScoreAbove",
    "Finding",
    "KeyAttributesChanged",
    "Measurement",
    "NewGroup",
    "SEVERITIES",
    "Severity",
    "SignificantChange",
    "WindowSummary",
    "decide",
    "DriftSettings",
    "settings_from_spec",
    "default_checks",
    "finding_fingerprint",
    "finding_key",
    "baseline_note",
    "reference_window",
    "replay",
    "severity_at_least",
]
