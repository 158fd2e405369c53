"""The store's public surface: names other modules code against (changing one is a breaking change)."""

from __future__ import annotations

import inspect

import fairmon.store as store_pkg
from fairmon.store import Store

PUBLIC = {
    "get_engine",
    "normalize_url",
    "describe_url",
    "embedded_url",
    "ping",
    "upgrade",
    "require_head",
    "current_version",
    "head_version",
    "Store",
    "open_store",
    "ALLOWED_TRANSITIONS",
    "STALE_CLAIM_S",
    "RESULT_STATUSES",
    "NEXT_STEP",
    "RecordError",
    "RunRecord",
    "MetricRecord",
    "EvidenceRecord",
    "ExplanationMetricRecord",
    "FindingRecord",
    "AlertRecord",
    "FEUCandidateRecord",
    "WindowRecords",
    "AttributionGapRecord",
    "RescoreRecord",
}
STORE_METHODS = {
    # writes
    "upsert_monitor",
    "delete_monitor",  # the demo's fresh start in its embedded store
    "write_window",
    "mark_run",
    "write_findings",
    "save_feu_candidates",
    "set_feu_registry_version",
    # diagnosis rows (issue 19)
    "save_attribution_gaps",
    "attribution_gaps_of_run",
    "save_rescores",
    "rescores_of_run",
    "rebuild_latest_metrics",
    # run bookkeeping (issue 15: stale runs are failed by the next run of the monitor)
    "heartbeat_run",
    "advance_run",
    "record_unfinished",
    "fail_stale_runs",
    # attempts of a window and the spec file owning a monitor name (issue 15 items 2 and 5)
    "begin_attempt",
    "current_attempt",
    "claim_monitor",
    "release_monitor",
    # reads for the report and the CLI
    "monitors",
    "get_run",
    "get_run_by_id",
    "runs",
    "metrics_of_run",
    "evidence_of_run",
    "explanation_metrics_of_run",
    "findings_of_run",
    "feu_candidates",
    "feu_baselines",
    "read_window",
    "history",
    "metric_series",
    "series",
    # history reads for drift decisions
    "completed_runs_before",
    "metric_history",
    "evidence_history",
    "explanation_history",
    "gesd_history",
    "open_findings",
    "findings_between",
    # outbox
    "outbox_enqueue",
    "outbox_get",
    "outbox_pending",
    "outbox_claim",
    "outbox_transition",
    "outbox_window_pending",
    "outbox_mark",
    "set_thread_ts",
    "alerts",
    # spec_changed events (issue 20)
    "spec_change_of",
    "record_spec_change",
    "forget_spec_change",
    "spec_changes",
}


def test_package_exports() -> None:
    assert set(store_pkg.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(store_pkg, name) is not None


def test_store_methods() -> None:
    public = {n for n, _ in inspect.getmembers(Store, inspect.isfunction) if not n.startswith("_")}
    assert public == STORE_METHODS


def test_outbox_transition_signature_matches_the_alerts_protocol() -> None:
    params = inspect.signature(Store.outbox_transition).parameters
    assert list(params)[:4] == ["self", "fingerprint", "from_state", "to_state"]
    assert {"slack_ts", "error", "expected_attempts"} <= set(params)
    assert all(
        params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in ("slack_ts", "error", "expected_attempts")
    )
