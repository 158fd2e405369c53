"""The public surface of every fairmon package, pinned: ``__all__`` exactly, and every name resolves.

A package's ``__init__`` is its curated surface (the work lives in private ``_name.py`` modules). Adding,
removing or renaming a public name is a deliberate act: update the entry here in the same change, so
the review sees it. A new package needs an entry too (``test_every_package_is_pinned``).
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import fairmon


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: packages and public top-level modules of the library methods, the data path's inputs and the errors
METHODS_SURFACE: dict[str, frozenset[str] | None] = {
    "fairmon": _names(
        "AlertDeliveryError ConfigError DataValidationError DatasetError DeviceError FairmonError "
        "InsufficientDataError MethodError SchemaError SchemaNotAtHeadError SnapshotError StoreError "
        "ValidationEngineError __version__"
    ),
    "fairmon.errors": _names(
        "AlertDeliveryError AttemptSupersededError ConfigError DataValidationError DatasetError DeviceError FairmonError "
        "InsufficientDataError MethodError SchemaError SchemaNotAtHeadError SnapshotError StoreError "
        "ValidationEngineError"
    ),
    "fairmon.schema": _names(
        "ColumnSpec FeatureSchema MISSING_CATEGORY category_codes category_strings"
    ),
    "fairmon.readiness": _names("ERR_UNREACHABLE file_exists ready_sql sql_window_ready storage_failure"),
    "fairmon.sources": _names(
        "COUNT_COLUMN DEFAULT_SOURCE_STATEMENT_TIMEOUT_S ERR_EMPTY_FILE ERR_EMPTY_QUERY ERR_FILE_MISSING ERR_NOT_FOUND "
        "ERR_NO_PARQUET ERR_NO_URL ERR_QUERY_FAILED ERR_QUERY_TIMEOUT ERR_READ_FAILED ERR_STORAGE_FAILED "
        "ERR_TIMEOUT_VALUE ERR_UNREACHABLE describe_window_source file_exists file_format load_file load_window "
        "load_window_counts ready_sql schedule_local source_statement_timeout_s sql_window_ready window_counts_sql "
        "window_path"
    ),
    "fairmon.datasets": _names(
        "ADULT_COLUMNS CATEGORICAL_COLUMNS COLUMNS DATASET_NAMES DECOY_COLUMNS Dataset DeployedModels "
        "FEATURE_COLUMNS GERMAN_COLUMNS ID_COLUMN LABEL_COLUMN PLANTED_ATTRIBUTES PLANTED_QUERY "
        "PLANTED_RULE SENSITIVE_COLUMNS StreamWindow SyntheticStream TIME_COLUMN cache_dir data_dir "
        "dataset_path decision_dscore deploy_models evaluate_rule generate_stream load_adult load_compas "
        "load_dataset load_german load_gesd planted_membership read_partition write_partitions"
    ),
    "fairmon.explain": _names(
        "LimeStats METHODS SynthGauss cluster_centers coalition_design evaluate explain "
        "kernelshap_batched lime_batched synthgauss to_columns"
    ),
    "fairmon.explain.openxai": _names(
        "BASE_METRICS GROUND_TRUTH_METRICS GroupMeans Layout PRODUCTION_METRICS RRS_UNDEFINED_NOTE "
        "StabilityResult disparity evaluate fa group_means instance_metrics k_to_int perturb pgi pgu pra "
        "ra rc relative_stability sa sra"
    ),
    "fairmon.feu": _names(
        "Candidate FEUResult FEUSettings chebyshev_select dp_difference eod_difference non_dominated "
        "outcome_metrics pareto_plot predict_proba search train_mlp train_mlps"
    ),
    "fairmon.validation": _names(
        "SUITE_FORMAT SUITE_FORMAT_VERSION Suite ValidationReport build_suite column_kind ensure_suite "
        "load_reference load_suite raise_for_failures save_suite suite_from_spec validate validate_window"
    ),
    "fairmon.report.charts": _names(
        "DPI GROUP_COLOR GroupStabilityRow PER_GROUP_METRICS REST_COLOR fmt_num fmt_p gesd_chart outcome_chart "
        "pareto_chart png tree_chart tree_layout trend_chart"
    ),
}

#: the other packages as they are on main (their owners update these entries with their changes);
#: ``None``: the package has no ``__all__`` yet, and must not grow one without an entry here
OTHER_SURFACE: dict[str, frozenset[str] | None] = {
    "fairmon.alerts": _names(
        "AlertContext DeliveryReport EVENT_TYPE InMemoryOutboxRepository MessageSender Outbox "
        "OutboxRepository SlackMessage SlackSender alert_fingerprint render_data_validation "
        "render_feu_followup render_finding report_path report_url"
    ),
    "fairmon.cli": _names(
        "COMMAND_MODULES build_parser main"
    ),
    "fairmon.config": _names(
        "AlertsSpec AllowedRange COST_LIMITS ColdStart Columns DRIFT_METRICS DataSource DateRange DriftSpec "
        "ENV_ARTIFACT_LOCATION ENV_CACHE_DIR ENV_DATABASE_URL ENV_DATA_DIR ENV_DB_CONN_ID ENV_DB_LOCK_TIMEOUT_S ENV_DB_STATEMENT_TIMEOUT_S ENV_DEVICE "
        "ENV_HEAVY_POOL ENV_HEAVY_QUEUE ENV_HOME ENV_MONITORS_DIR ENV_PIPELINE_SLACK_CHANNEL ENV_REPORT_BASE_URL ENV_REPORT_LOCATION "
        "ENV_SLACK_BASE_URL ENV_SLACK_CHANNEL ENV_SLACK_CONN_ID ENV_SLACK_MAX_RETRY_WAIT_S ENV_SLACK_TOKEN ENV_SOURCE_STATEMENT_TIMEOUT_S ENV_SOURCE_URL "
        "ENV_SQL_DIR ENV_STRICT_SPECS EPOCH_BOUNDS ERR_ALPHA_BETA ERR_COST_LIMIT ERR_DUPLICATE_KEY "
        "ERR_DUPLICATE_NAME ERR_ENSEMBLE_FOLDS ERR_EXACTLY_ONE_SOURCE ERR_FIELD ERR_FILE_MISSING ERR_FILE_TOO_LARGE ERR_MANY "
        "ERR_MISSING ERR_NOT_MAPPING ERR_RANGE_DOMAIN ERR_SPEC_VERSION ERR_UNKNOWN_KEY ERR_URI_SCHEME "
        "ERR_YAML ERR_YAML_EXPANSION EXPLAINERS ExecutionSpec Explainer ExplanationsSpec FEU_BUDGET_SHARE Favorable "
        "FilesSource GESD_EXPLAINER_COMPONENTS GesdSpec HEAVY_TIMEOUT_FACTOR Identity KNOWN_URI_SCHEMES LABEL_METRICS "
        "LR_BOUNDS MAX_SPEC_BYTES MAX_YAML_NODES METRIC_DOMAINS ModelSource MonitorSpec "
        "OPENXAI_GROUND_TRUTH_METRICS OPENXAI_METRICS OUTCOME_METRICS OpenXAISpec OutcomeSpec Persistence "
        "RUN_TIMEOUT_SHARE ReferenceBaseline RetrainingSpec RumieDriftThresholds RumieRuleSearch RumieSignificance "
        "RumieSpec SPEC_VERSION SUPPORTED_SPEC_VERSIONS Schedule SearchBounds SelectionWeights Settings "
        "Split SqlSource THRESHOLD_BOUNDS TrailingBaseline TrainingData ValidationSpec load_spec "
        "load_specs parse_duration parse_spec resolve_path resolve_runtime scan_specs spec_json_schema "
        "validate_cron"
    ),
    "fairmon.drift": _names(
        "AlertPolicy Baseline CIOutsideRange Check DScoreAbove DriftSettings Finding KeyAttributesChanged "
        "Measurement NewGroup SEVERITIES Severity SignificantChange WindowSummary baseline_note decide "
        "default_checks finding_fingerprint finding_key reference_window replay settings_from_spec "
        "severity_at_least"
    ),
    "fairmon.fairness": _names(
        "DEFAULT_METRICS DISPARITY_METRICS Evidence GROUP_METRICS INTERSECTION_SEP LABEL_METRICS "
        "MISSING_GROUP MetricRow OutcomeResult RuleSearchResult RuleSearchSettings RuleSetScore "
        "demographic_parity_difference demographic_parity_ratio dscore enum_baseline "
        "equal_opportunity_difference equalized_odds_difference held_out_test mine outcome_metrics "
        "selection_rate"
    ),
    "fairmon.pipeline": _names(
        "ArtifactStore HEAVY_STEPS RunContext STEP_ORDER Window WindowOutcome backfill feu_on_demand "
        "run_step run_steps run_window window_for windows_between"
    ),
    "fairmon.registry": _names(
        "Model Registry SnapshotInfo build_mlp"
    ),
    "fairmon.report": _names(
        "ENV_REPORT_LOCATION ReportData SECTIONS TrendPoint WrittenReport load_report_data "
        "rebuild_reports render_html report_location write_index write_report write_window_report"
    ),
    "fairmon.store": _names(
        "ALLOWED_TRANSITIONS AlertRecord AttributionGapRecord EvidenceRecord ExplanationMetricRecord FEUCandidateRecord "
        "FindingRecord MetricRecord NEXT_STEP RESULT_STATUSES STALE_CLAIM_S RecordError RescoreRecord RunRecord Store WindowRecords "
        "current_version describe_url embedded_url get_engine head_version normalize_url open_store ping "
        "require_head upgrade"
    ),
}

SURFACE = {**METHODS_SURFACE, **OTHER_SURFACE}


def _packages() -> list[str]:
    found = ["fairmon"]
    for info in pkgutil.walk_packages(fairmon.__path__, "fairmon."):
        if info.ispkg and not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


def test_every_package_is_pinned() -> None:
    assert sorted(set(_packages()) - set(SURFACE)) == []


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_public_surface_is_pinned(module: str) -> None:
    mod = importlib.import_module(module)
    expected = SURFACE[module]
    if expected is None:
        assert not hasattr(mod, "__all__"), f"{module} grew an __all__: pin it here"
        return
    actual = set(mod.__all__)
    assert len(actual) == len(mod.__all__), f"{module}.__all__ lists a name twice"
    assert sorted(actual - expected) == [], f"new public names in {module}: pin them here"
    assert sorted(expected - actual) == [], f"public names gone from {module}"


@pytest.mark.parametrize("module", sorted(m for m, names in SURFACE.items() if names is not None))
def test_every_public_name_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name in mod.__all__ if getattr(mod, name, None) is None and name not in dir(mod)]
    assert missing == []


@pytest.mark.parametrize("module", sorted(METHODS_SURFACE))
def test_public_names_do_not_leak_private_modules(module: str) -> None:
    """What a package exports is its names, never one of its private ``_x`` modules."""
    mod = importlib.import_module(module)
    for name in mod.__all__ or ():
        value = getattr(mod, name)
        assert not (hasattr(value, "__path__") or type(value).__name__ == "module"), f"{module}.{name}"
