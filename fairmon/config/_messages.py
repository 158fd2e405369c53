"""Error texts of the spec loader, as module constants (tests assert them), and the excerpt helper.

Why one module: every check of every section words its problem here, so the phrasing stays uniform
and a test can import the exact template it expects. Values quoted into a message go through
:func:`excerpt`, so a hostile spec (a megabyte-long name, a huge list) never floods a log line.
"""

from __future__ import annotations

from typing import Any

#: longest quoted excerpt of user input inside an error message (characters)
MAX_EXCERPT = 200

# ---- files and YAML ----------------------------------------------------------------------------------
ERR_FILE_MISSING = "{file}: monitor spec file not found"
ERR_FILE_UNREADABLE = "{file}: cannot read monitor spec: {error}"
ERR_FILE_TOO_LARGE = "{file}: monitor spec is {size} bytes; the limit is {limit} bytes"
ERR_YAML = "{file}:{line}:{column}: invalid YAML: {problem}"
ERR_YAML_EXPANSION = (
    "{file}:{line}:{column}: invalid YAML: aliases expand to more than {limit} nodes "
    "(an alias bomb, or a spec far larger than any monitor needs)"
)
ERR_YAML_DEPTH = "{file}:{line}:{column}: invalid YAML: collections nested more than {limit} deep"
ERR_DUPLICATE_KEY = "duplicate key '{key}' (first at line {first_line})"
ERR_NOT_MAPPING = "{file}: the top level of a monitor spec must be a mapping of sections, got {kind}"

# ---- field problems ------------------------------------------------------------------------------------
ERR_FIELD = "{where}: {path}: {problem}"
ERR_MANY = "{file}: {n} problems in monitor spec:\n{lines}"
ERR_MORE_PROBLEMS = "  ... and {n} more"
ERR_UNKNOWN_KEY = "unknown key '{key}'{hint}"
ERR_MISSING = "missing required field"
ERR_COST_LIMIT = "{value} is above the limit {limit} (a cost limit: see 'Limits' in monitors/README.md)"
ERR_SPEC_VERSION = "unsupported spec_version {value!r}; this fairmon reads spec_version {supported}"
ERR_NO_SPECS = "{folder}: no monitor specs (*.yaml) found"
ERR_FOLDER_MISSING = "{folder}: monitor spec folder not found"
ERR_DUPLICATE_NAME = "{file}: identity.name '{name}' is already used by {other}"
ERR_EXACTLY_ONE_SOURCE = "exactly one of 'sql' or 'files' must be given, got {got}"
ERR_SQL_PLACEHOLDER = (
    "query must contain the bind parameter {param} (the window bounds are passed as :start and :end)"
)
ERR_READY_PLACEHOLDER = (
    "ready_query must use the window: the bind parameter :start or :end (a readiness that ignores the "
    "window cannot tell one window from the next)"
)
ERR_PATTERN_WINDOW = "pattern must contain the window, e.g. '{{start:%Y-%m-%d}}', got {pattern!r}"
ERR_PATTERN_FIELD = "pattern may only use the placeholders {{start}} and {{end}}, got {{{field}}}"
ERR_PATTERN_FORMAT = "pattern cannot be formatted with a window date: {error}"
ERR_FORMAT_UNKNOWN = "cannot infer the format from pattern {pattern!r}; set format: csv or parquet"
ERR_URI_SCHEME = "unknown URI scheme {scheme!r} in {value!r}; use a local path or one of: {known}"
ERR_ENV_UNSET = "environment variable {name} is not set (used in path {value!r})"
ERR_ALPHA_BETA = "alpha ({alpha}) must be smaller than beta ({beta})"
ERR_CRON = "invalid cron expression {expr!r}: {reason}"
ERR_DURATION = "invalid duration {value!r}: use e.g. '1d', '12h', '30m', '1w' or ISO 8601 'P1D'"
ERR_TIMEZONE = "unknown timezone {value!r}"
ERR_DUPLICATES = "duplicate column(s) {cols}"
ERR_NOT_KNOWN_COLUMN = "{cols} not among the columns (features + extra): {known}"
ERR_OVERLAP = "column {col!r} is used as both {a} and {b}"
ERR_RANGE_ORDER = "allowed range for {metric!r} must be [low, high] with low <= high, got {value}"
ERR_RANGE_DOMAIN = "allowed range {value} for {metric!r} lies outside the metric's domain [{low}, {high}]"
ERR_UNKNOWN_METRIC = "unknown metric {metric!r}; known: {known}"
ERR_NEEDS_LABEL = "{metrics} need columns.label"
ERR_PERSISTENCE = "m ({m}) must be <= n ({n})"
ERR_BOUNDS = "bounds must be [low, high] with 0 < low < high, got {value}"
ERR_WEIGHT_BOUNDS = "fairness_weight_bounds must be [low, high] with 0 <= low <= high, got {value}"
ERR_SPLIT_SUM = "train + validation + test must equal 1, got {total}"
ERR_VALIDATION_REFERENCE = "validation is enabled but neither reference_data nor reference_window is set"
ERR_TRAINING_DATA = "retraining is enabled but training_data is not set"
ERR_ENSEMBLE_FOLDS = (
    "cv_folds {folds} with cv_deploy 'ensemble': the fold ensemble is checked on nested folds (each nested network "
    "leaves out two folds), which needs cv_folds >= 3; raise cv_folds or set cv_deploy: searched"
)
ERR_MOVED = "'{key}' is no longer a setting here (it was never used); {where}"
ERR_TRAINING_WINDOW = (
    "training data by window is not supported (FEU reads one file); export the window's labelled rows "
    "and set training_data.path"
)
ERR_PUSH_DOWN = (
    "the database push-down counts logged decisions in the source's database: it needs data.sql and "
    "columns.decision"
)
ERR_RETRAINING_LABEL = "retraining is enabled but columns.label is not set: FEU trains on labelled rows"
ERR_FEU_BUDGET = (
    "{budget:g} s is more than {share:.0%} of the FEU step's limit of {limit} s, the lower of its task timeout "
    "({factor} x execution.task_timeout_s {task} = {heavy} s) and the window run's ({run_share:.0%} of the "
    "shortest schedule interval, {period} = {run} s): Airflow would stop the step before its budget and what follows it end, and the "
    "window's FEU would fail; lower retraining.time_budget_s to at most {most:g}, or {raise_what} "
    "(the budget covers the whole FEU step, but the search stops on estimates of what follows it; their error, "
    "registration and, within the run, the steps before FEU need the rest)"
)
ERR_NEEDS_GROUND_TRUTH = (
    "{metrics} need ground-truth feature importances, which a monitored production model does not have "
    "(the pipeline passes none, so every window would fail); use some of {allowed}"
)
ERR_NAME = (
    "must be a safe identifier (lowercase letters, digits, '_' or '-', starting with a letter, "
    "at most 64 characters), got {value!r}"
)
ERR_FAVORABLE = "set either 'class' or 'score_threshold', not both"
ERR_SCALAR = "must be a string, number or boolean, got {kind}"
ERR_BASE_URL = "must be an http(s) URL, got {value!r}"
ERR_CHANNEL = "must be a Slack channel name ('#name' or 'name') or id ('C0123...'), got {value!r}"


def excerpt(value: Any, limit: int = MAX_EXCERPT) -> Any:
    """``value`` itself when short, else a string cut to about ``limit`` characters.

    Why: messages interpolate user input with ``{value!r}``; a cut string keeps that working while
    the message stays one readable line.

    Examples
    --------
    >>> excerpt("abc")
    'abc'
    >>> len(excerpt("x" * 10_000))
    200
    >>> excerpt(list(range(100)), limit=20)
    '[0, 1, 2, 3, 4, ...'
    """
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    if isinstance(value, bool | int | float) or value is None:
        return value
    text = repr(value)
    return value if len(text) <= limit else text[: limit - 3] + "..."
