"""Pin the public surface of fairmon.alerts and fairmon.drift (and that importing them stays light)."""

from __future__ import annotations

import subprocess
import sys

import fairmon.alerts
import fairmon.drift
import fairmon.fairness.outcome


def test_public_names() -> None:
    assert set(fairmon.alerts.__all__) == {
        "EVENT_TYPE", "AlertContext", "DeliveryReport", "InMemoryOutboxRepository", "MessageSender", "Outbox",
        "OutboxRepository", "SlackMessage", "SlackSender", "alert_fingerprint", "render_data_validation",
        "render_feu_followup", "render_finding", "report_path", "report_url",
    }
    assert {"decide", "replay", "Finding", "WindowSummary", "AlertPolicy", "Baseline", "settings_from_spec",
            "default_checks", "CIOutsideRange", "SignificantChange", "DScoreAbove", "NewGroup",
            "KeyAttributesChanged"} <= set(fairmon.drift.__all__)  # group overlap: fairmon.rules.jaccard
    assert {"outcome_metrics", "OutcomeResult", "MetricRow", "demographic_parity_difference",
            "demographic_parity_ratio", "equal_opportunity_difference",
            "equalized_odds_difference"} <= set(fairmon.fairness.outcome.__all__)
    for mod in (fairmon.alerts, fairmon.drift, fairmon.fairness.outcome):
        for name in mod.__all__:
            assert hasattr(mod, name), (mod.__name__, name)


def test_alerts_and_drift_import_no_heavy_stack() -> None:
    code = ("import fairmon.alerts, fairmon.drift, fairmon.fairness.outcome, sys, json; "
            "print(json.dumps(sorted(m for m in ('torch','sklearn','slack_sdk','airflow','shap','scipy') "
            "if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
