"""Monitor specs: YAML files loaded into frozen, validated pydantic models.

A *monitor spec* says everything fairmon needs to watch one production model: where the model and the
window's data come from, which columns are features and protected attributes, what the favorable
outcome is, the schedule, and the settings of every step (validation, outcome metrics, RUMIE,
explanations, drift policy, retraining, alerts, execution). The spec is the single source of truth for
*routing and thresholds*; the environment (or Airflow connections) supplies *secrets and endpoints*
(:func:`resolve_runtime`).

Why this shape:

- Airflow DAG files import this package at parse time, so it stays light: pydantic, PyYAML and the
  standard library only (no numpy/pandas, and nothing of :mod:`fairmon.feu`: FEU imports its search
  bounds from here).
- Every model is frozen and rejects unknown keys (``extra="forbid"``): a typo in a threshold must fail
  loudly instead of silently using the default.
- Every error is a :class:`~fairmon.errors.ConfigError` whose message names the file, the line (when
  known), the field path (``rumie.alpha``) and the problem.
- Every numeric field that drives cost has an upper limit (:data:`COST_LIMITS`), a spec file at most
  :data:`MAX_SPEC_BYTES`, and its aliases expand to at most :data:`MAX_YAML_NODES` nodes; messages quote
  at most a short excerpt of the input. ``monitors/README.md`` ("Limits") tabulates them.
- :attr:`MonitorSpec.fingerprint` (sha256 of the canonical JSON) identifies a spec's content, e.g. to
  record with every run which settings produced it.

Relative paths in a spec (file patterns, reference data, suite path, registry URI, artifact location,
training data) are resolved against the **folder of the spec file** by :meth:`MonitorSpec.resolve_path`,
after expanding ``~`` and ``${VAR}`` environment references; URIs with a scheme (``s3://...``) are kept
as they are. The stored spec keeps the paths as written, so the fingerprint does not depend on where the
file lives.

Layout (private modules, one job each): ``_messages`` (error texts), ``_limits`` (upper limits),
``_env`` (environment variable names), ``_parsers`` (durations, cron, shared field types),
``_paths`` (``${VAR}``, resolution, URI schemes), one module per section (``_identity``, ``_data``,
``_columns``, ``_schedule``, ``_validation``, ``_outcome``, ``_rumie``, ``_explanations``, ``_drift``,
``_retraining``, ``_alerts``, ``_execution``), ``_monitor`` (the root model), ``_yaml`` (the safe
loader), ``_translate`` (pydantic errors to messages), ``_loading`` and ``_runtime``.

Example
-------
>>> spec = MonitorSpec.model_validate({
...     "spec_version": 1,
...     "identity": {"name": "credit"},
...     "model": {"registry_uri": "registry"},
...     "data": {"files": {"pattern": "data/{start:%Y-%m-%d}.csv"}},
...     "columns": {"features": ["age", "sex"], "sensitive": ["sex"]},
...     "schedule": {"start_date": "2026-01-01"},
...     "validation": {"enabled": False},
... })
>>> spec.rumie.k, spec.schedule.window
(5, datetime.timedelta(days=1))
>>> len(spec.fingerprint)
64
"""

from __future__ import annotations

from fairmon.config._alerts import AlertsSpec
from fairmon.config._columns import Columns, Favorable
from fairmon.config._data import DataSource, FilesSource, SqlSource
from fairmon.config._drift import (
    DRIFT_METRICS,
    METRIC_DOMAINS,
    AllowedRange,
    ColdStart,
    DriftSpec,
    Persistence,
    ReferenceBaseline,
    RumieDriftThresholds,
    TrailingBaseline,
)
from fairmon.config._env import (
    ENV_ARTIFACT_LOCATION,
    ENV_CACHE_DIR,
    ENV_DATA_DIR,
    ENV_DATABASE_URL,
    ENV_DB_CONN_ID,
    ENV_DB_LOCK_TIMEOUT_S,
    ENV_DB_STATEMENT_TIMEOUT_S,
    ENV_DEVICE,
    ENV_HEAVY_POOL,
    ENV_HEAVY_QUEUE,
    ENV_HOME,
    ENV_MONITORS_DIR,
    ENV_PIPELINE_SLACK_CHANNEL,
    ENV_REPORT_BASE_URL,
    ENV_REPORT_LOCATION,
    ENV_SLACK_BASE_URL,
    ENV_SLACK_CHANNEL,
    ENV_SLACK_CONN_ID,
    ENV_SLACK_MAX_RETRY_WAIT_S,
    ENV_SLACK_TOKEN,
    ENV_SOURCE_STATEMENT_TIMEOUT_S,
    ENV_SOURCE_URL,
    ENV_SQL_DIR,
    ENV_STRICT_SPECS,
)
from fairmon.config._execution import FEU_BUDGET_SHARE, HEAVY_TIMEOUT_FACTOR, ExecutionSpec
from fairmon.config._explanations import (
    EXPLAINERS,
    GESD_EXPLAINER_COMPONENTS,
    OPENXAI_GROUND_TRUTH_METRICS,
    OPENXAI_METRICS,
    Explainer,
    ExplanationsSpec,
    GesdSpec,
    OpenXAISpec,
)
from fairmon.config._identity import Identity, ModelSource
from fairmon.config._limits import COST_LIMITS, MAX_SPEC_BYTES, MAX_YAML_NODES
from fairmon.config._loading import load_spec, load_specs, parse_spec, scan_specs, spec_json_schema
from fairmon.config._messages import (
    ERR_ALPHA_BETA,
    ERR_COST_LIMIT,
    ERR_DUPLICATE_KEY,
    ERR_DUPLICATE_NAME,
    ERR_ENSEMBLE_FOLDS,
    ERR_EXACTLY_ONE_SOURCE,
    ERR_FIELD,
    ERR_FILE_MISSING,
    ERR_FILE_TOO_LARGE,
    ERR_MANY,
    ERR_MISSING,
    ERR_NOT_MAPPING,
    ERR_RANGE_DOMAIN,
    ERR_SPEC_VERSION,
    ERR_UNKNOWN_KEY,
    ERR_URI_SCHEME,
    ERR_YAML,
    ERR_YAML_EXPANSION,
)
from fairmon.config._monitor import SPEC_VERSION, SUPPORTED_SPEC_VERSIONS, MonitorSpec
from fairmon.config._outcome import LABEL_METRICS, OUTCOME_METRICS, OutcomeSpec
from fairmon.config._parsers import parse_duration, validate_cron
from fairmon.config._paths import KNOWN_URI_SCHEMES, resolve_path
from fairmon.config._retraining import (
    EPOCH_BOUNDS,
    LR_BOUNDS,
    THRESHOLD_BOUNDS,
    RetrainingSpec,
    SearchBounds,
    SelectionWeights,
    Split,
    TrainingData,
)
from fairmon.config._rumie import RumieRuleSearch, RumieSignificance, RumieSpec
from fairmon.config._runtime import Settings, resolve_runtime
from fairmon.config._schedule import RUN_TIMEOUT_SHARE, DateRange, Schedule
from fairmon.config._validation import ValidationSpec

__all__ = [
    # loading
    "MonitorSpec",
    "load_spec",
    "load_specs",
    "scan_specs",
    "parse_spec",
    "spec_json_schema",
    "SPEC_VERSION",
    "SUPPORTED_SPEC_VERSIONS",
    # sections
    "Identity",
    "ModelSource",
    "SqlSource",
    "FilesSource",
    "DataSource",
    "Columns",
    "Favorable",
    "Schedule",
    "DateRange",
    "ValidationSpec",
    "OutcomeSpec",
    "RumieSignificance",
    "RumieSpec",
    "RumieRuleSearch",
    "GesdSpec",
    "OpenXAISpec",
    "ExplanationsSpec",
    "ReferenceBaseline",
    "TrailingBaseline",
    "ColdStart",
    "Persistence",
    "RumieDriftThresholds",
    "AllowedRange",
    "DriftSpec",
    "TrainingData",
    "Split",
    "SearchBounds",
    "SelectionWeights",
    "RetrainingSpec",
    "AlertsSpec",
    "ExecutionSpec",
    "FEU_BUDGET_SHARE",
    "HEAVY_TIMEOUT_FACTOR",
    "RUN_TIMEOUT_SHARE",
    # vocabularies and domains
    "OUTCOME_METRICS",
    "LABEL_METRICS",
    "DRIFT_METRICS",
    "METRIC_DOMAINS",
    "OPENXAI_METRICS",
    "OPENXAI_GROUND_TRUTH_METRICS",
    "EXPLAINERS",
    "Explainer",
    "GESD_EXPLAINER_COMPONENTS",
    "LR_BOUNDS",
    "EPOCH_BOUNDS",
    "THRESHOLD_BOUNDS",
    "ERR_ENSEMBLE_FOLDS",
    # limits
    "COST_LIMITS",
    "MAX_SPEC_BYTES",
    "MAX_YAML_NODES",
    "KNOWN_URI_SCHEMES",
    # helpers
    "resolve_path",
    "parse_duration",
    "validate_cron",
    # runtime settings
    "Settings",
    "resolve_runtime",
    "ENV_DATABASE_URL",
    "ENV_HOME",
    "ENV_SQL_DIR",
    "ENV_SLACK_TOKEN",
    "ENV_SLACK_BASE_URL",
    "ENV_SLACK_CHANNEL",
    "ENV_PIPELINE_SLACK_CHANNEL",
    "ENV_ARTIFACT_LOCATION",
    "ENV_DEVICE",
    "ENV_HEAVY_POOL",
    "ENV_HEAVY_QUEUE",
    "ENV_REPORT_LOCATION",
    "ENV_REPORT_BASE_URL",
    "ENV_SOURCE_URL",
    "ENV_SOURCE_STATEMENT_TIMEOUT_S",
    "ENV_SLACK_MAX_RETRY_WAIT_S",
    "ENV_DATA_DIR",
    "ENV_CACHE_DIR",
    "ENV_MONITORS_DIR",
    "ENV_DB_CONN_ID",
    "ENV_DB_LOCK_TIMEOUT_S",
    "ENV_DB_STATEMENT_TIMEOUT_S",
    "ENV_SLACK_CONN_ID",
    "ENV_STRICT_SPECS",
    # error texts (tests assert them)
    "ERR_ALPHA_BETA",
    "ERR_COST_LIMIT",
    "ERR_DUPLICATE_KEY",
    "ERR_DUPLICATE_NAME",
    "ERR_EXACTLY_ONE_SOURCE",
    "ERR_FIELD",
    "ERR_FILE_MISSING",
    "ERR_FILE_TOO_LARGE",
    "ERR_MANY",
    "ERR_MISSING",
    "ERR_NOT_MAPPING",
    "ERR_RANGE_DOMAIN",
    "ERR_SPEC_VERSION",
    "ERR_UNKNOWN_KEY",
    "ERR_URI_SCHEME",
    "ERR_YAML",
    "ERR_YAML_EXPANSION",
]
