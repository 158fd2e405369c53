"""Monitor specs: YAML files loaded into frozen, validated pydantic models.

A *monitor spec* says everything fairmon needs to watch one production model: where the model and the
window's data come from, which columns are features and protected attributes, what the favorable
outcome is, the schedule, and the settings of every step (validation, outcome metrics, RUMIE,
explanations, drift policy, retraining, alerts, execution). The spec is the single source of truth for
*routing and thresholds*; the environment (or Airflow connections) supplies *secrets and endpoints*
(:func:`resolve_runtime`).

Why this shape:

- Airflow DAG files import this module at parse time, so it stays light: pydantic, PyYAML and the
  standard library only (no numpy/pandas).
- Every model is frozen and rejects unknown keys (``extra="forbid"``): a typo in a threshold must fail
  loudly instead of silently using the default.
- Every error is a :class:`~fairmon.errors.ConfigError` whose message names the file, the line (when
  known), the field path (``rumie.alpha``) and the problem.
- :attr:`MonitorSpec.fingerprint` (sha256 of the canonical JSON) identifies a spec's content, e.g. to
  record with every run which settings produced it.

Relative paths in a spec (file patterns, reference data, suite path, registry URI, artifact location,
training data) are resolved against the **folder of the spec file** by :meth:`MonitorSpec.resolve_path`,
after expanding ``~`` and ``${VAR}`` environment references; URIs with a scheme (``s3://...``) are kept
as they are. The stored spec keeps the paths as written, so the fingerprint does not depend on where the
file lives.

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

import datetime as dt
import difflib
import hashlib
import json
import os
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from fairmon.errors import ConfigError
from fairmon.feu.settings import EPOCH_BOUNDS, LR_BOUNDS, THRESHOLD_BOUNDS

__all__ = [
    "SPEC_VERSION",
    "SUPPORTED_SPEC_VERSIONS",
    "OUTCOME_METRICS",
    "LABEL_METRICS",
    "DRIFT_METRICS",
    "OPENXAI_METRICS",
    "OPENXAI_GROUND_TRUTH_METRICS",
    "EXPLAINERS",
    "GESD_EXPLAINER_COMPONENTS",
    "MonitorSpec",
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
    "DriftSpec",
    "TrainingData",
    "Split",
    "SearchBounds",
    "SelectionWeights",
    "RetrainingSpec",
    "AlertsSpec",
    "ExecutionSpec",
    "Settings",
    "load_spec",
    "load_specs",
    "scan_specs",
    "parse_spec",
    "spec_json_schema",
    "resolve_path",
    "resolve_runtime",
    "parse_duration",
    "validate_cron",
    "ENV_DATABASE_URL",
    "ENV_SLACK_TOKEN",
    "ENV_SLACK_BASE_URL",
    "ENV_SLACK_CHANNEL",
]

#: the spec format version this code writes and reads
SPEC_VERSION = 1
SUPPORTED_SPEC_VERSIONS = (1,)

ENV_DATABASE_URL = "FAIRMON_DATABASE_URL"
ENV_SLACK_TOKEN = "FAIRMON_SLACK_TOKEN"
ENV_SLACK_BASE_URL = "FAIRMON_SLACK_BASE_URL"
ENV_SLACK_CHANNEL = "FAIRMON_SLACK_CHANNEL"

# ---- error message templates (tests assert them) -------------------------------------------------
ERR_FILE_MISSING = "{file}: monitor spec file not found"
ERR_FILE_UNREADABLE = "{file}: cannot read monitor spec: {error}"
ERR_YAML = "{file}:{line}:{column}: invalid YAML: {problem}"
ERR_DUPLICATE_KEY = "duplicate key '{key}' (first at line {first_line})"
ERR_NOT_MAPPING = "{file}: the top level of a monitor spec must be a mapping of sections, got {kind}"
ERR_FIELD = "{where}: {path}: {problem}"
ERR_MANY = "{file}: {n} problems in monitor spec:\n{lines}"
ERR_UNKNOWN_KEY = "unknown key '{key}'{hint}"
ERR_MISSING = "missing required field"
ERR_SPEC_VERSION = "unsupported spec_version {value!r}; this fairmon reads spec_version {supported}"
ERR_NO_SPECS = "{folder}: no monitor specs (*.yaml) found"
ERR_FOLDER_MISSING = "{folder}: monitor spec folder not found"
ERR_DUPLICATE_NAME = "{file}: identity.name '{name}' is already used by {other}"
ERR_EXACTLY_ONE_SOURCE = "exactly one of 'sql' or 'files' must be given, got {got}"
ERR_SQL_PLACEHOLDER = (
    "query must contain the bind parameter {param} (the window bounds are passed as :start and :end)"
)
ERR_PATTERN_WINDOW = "pattern must contain the window, e.g. '{{start:%Y-%m-%d}}', got {pattern!r}"
ERR_PATTERN_FIELD = "pattern may only use the placeholders {{start}} and {{end}}, got {{{field}}}"
ERR_PATTERN_FORMAT = "pattern cannot be formatted with a window date: {error}"
ERR_FORMAT_UNKNOWN = "cannot infer the format from pattern {pattern!r}; set format: csv or parquet"
ERR_ALPHA_BETA = "alpha ({alpha}) must be smaller than beta ({beta})"
ERR_CRON = "invalid cron expression {expr!r}: {reason}"
ERR_DURATION = "invalid duration {value!r}: use e.g. '1d', '12h', '30m', '1w' or ISO 8601 'P1D'"
ERR_TIMEZONE = "unknown timezone {value!r}"
ERR_DUPLICATES = "duplicate column(s) {cols}"
ERR_NOT_KNOWN_COLUMN = "{cols} not among the columns (features + extra): {known}"
ERR_OVERLAP = "column {col!r} is used as both {a} and {b}"
ERR_RANGE_ORDER = "allowed range for {metric!r} must be [low, high] with low <= high, got {value}"
ERR_UNKNOWN_METRIC = "unknown metric {metric!r}; known: {known}"
ERR_NEEDS_LABEL = "{metrics} need columns.label"
ERR_PERSISTENCE = "m ({m}) must be <= n ({n})"
ERR_BOUNDS = "bounds must be [low, high] with 0 < low < high, got {value}"
ERR_SPLIT_SUM = "train + validation + test must equal 1, got {total}"
ERR_VALIDATION_REFERENCE = "validation is enabled but neither reference_data nor reference_window is set"
ERR_TRAINING_DATA = "retraining is enabled but training_data is not set"
ERR_MOVED = "'{key}' is no longer a setting here (it was never used); {where}"
_RUMIE_SIGNIFICANCE_MOVED = {
    "alpha": "RUMIE's held-out p-value is judged at drift.significance_level",
    "random_state": "the held-out split is seeded by rumie.random_state",
}
ERR_TRAINING_WINDOW = (
    "training data by window is not supported (FEU reads one file); export the window's labelled rows "
    "and set training_data.path"
)
ERR_RETRAINING_LABEL = "retraining is enabled but columns.label is not set: FEU trains on labelled rows"
ERR_NEEDS_GROUND_TRUTH = (
    "{metrics} need ground-truth feature importances, which a monitored production model does not have "
    "(the pipeline passes none, so every window would fail); use some of {allowed}"
)
ERR_NAME = "must be a safe identifier (lowercase letters, digits, '_' or '-', starting with a letter, at most 64 characters), got {value!r}"
ERR_FAVORABLE = "set either 'class' or 'score_threshold', not both"
ERR_SCALAR = "must be a string, number or boolean, got {kind}"
ERR_BASE_URL = "must be an http(s) URL, got {value!r}"
ERR_CHANNEL = "must be a Slack channel name ('#name' or 'name') or id ('C0123...'), got {value!r}"


# ---- small parsers ---------------------------------------------------------------------------------
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_DURATION_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_ISO_DURATION_RE = re.compile(
    r"^P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def parse_duration(value: Any) -> dt.timedelta:
    """Parse a window length: ``'1d'``, ``'12h'``, ``'30m'``, ``'1w'``, ``'90s'`` or ISO 8601 ``'P1D'``.

    Why: window lengths in YAML are easier to read as ``1d`` than as seconds; ISO durations are what
    the canonical JSON (and so the fingerprint) stores.

    Examples
    --------
    >>> parse_duration("1d")
    datetime.timedelta(days=1)
    >>> parse_duration("PT12H")
    datetime.timedelta(seconds=43200)
    """
    if isinstance(value, dt.timedelta):
        return value
    if isinstance(value, str):
        m = _DURATION_RE.match(value)
        if m:
            return dt.timedelta(**{_DURATION_UNITS[m.group(2)]: float(m.group(1))})
        m = _ISO_DURATION_RE.match(value.strip())
        if m and any(m.groupdict().values()):
            parts = {k: float(v) for k, v in m.groupdict().items() if v}
            return dt.timedelta(**parts)
    raise ValueError(ERR_DURATION.format(value=value))


_CRON_PRESETS = {"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"}
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    (
        "month",
        1,
        12,
        {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
    ),
    ("day of week", 0, 7, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}),
)


def _cron_value(token: str, name: str, lo: int, hi: int, names: dict[str, int]) -> int:
    if token.lower() in names:
        return names[token.lower()]
    if not token.isdigit():
        raise ValueError(f"{name} field: {token!r} is not a number")
    v = int(token)
    if not lo <= v <= hi:
        raise ValueError(f"{name} field: {v} is outside {lo}-{hi}")
    return v


def validate_cron(expr: str) -> str:
    """Check a 5-field cron expression (or an ``@daily``-style preset) without third-party packages.

    Why: a bad schedule should fail when the spec is loaded, not when the scheduler first parses it;
    and the DAG parse path must stay light (no croniter import here).

    Examples
    --------
    >>> validate_cron("0 2 * * mon-fri")
    '0 2 * * mon-fri'
    """
    text = expr.strip()
    if text.startswith("@"):
        if text.lower() in _CRON_PRESETS:
            return text
        raise ValueError(
            ERR_CRON.format(expr=expr, reason=f"unknown preset; use one of {sorted(_CRON_PRESETS)}")
        )
    parts = text.split()
    if len(parts) != 5:
        raise ValueError(ERR_CRON.format(expr=expr, reason=f"expected 5 fields, got {len(parts)}"))
    try:
        for part, (name, lo, hi, names) in zip(parts, _CRON_FIELDS):
            for item in part.split(","):
                rng, _, step = item.partition("/")
                if step and (not step.isdigit() or int(step) == 0):
                    raise ValueError(f"{name} field: bad step {step!r}")
                if rng == "*":
                    continue
                a, sep, b = rng.partition("-")
                va = _cron_value(a, name, lo, hi, names)
                if sep:
                    vb = _cron_value(b, name, lo, hi, names)
                    if vb < va:
                        raise ValueError(f"{name} field: range {rng!r} is reversed")
    except ValueError as exc:
        raise ValueError(ERR_CRON.format(expr=expr, reason=exc)) from None
    return text


def _check_unique(values: tuple[str, ...]) -> tuple[str, ...]:
    dups = sorted({v for v in values if values.count(v) > 1})
    if dups:
        raise ValueError(ERR_DUPLICATES.format(cols=dups))
    return values


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise ValueError(ERR_SCALAR.format(kind=type(value).__name__))


def _version_str(value: Any) -> Any:
    # ``version: 3`` in YAML is an int; the registry's versions are strings
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Scalar = Annotated[str | int | float | bool | None, BeforeValidator(_scalar)]
ColumnName = Annotated[str, Field(min_length=1)]
Fraction = Annotated[float, Field(gt=0.0, lt=1.0)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
Duration = Annotated[dt.timedelta, BeforeValidator(parse_duration)]


class _Spec(BaseModel):
    """Base of every spec section: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    def __hash__(self) -> int:
        # content hash (pydantic's default hashes field values, and dict fields are unhashable)
        return hash(json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True))


# ---- sections ---------------------------------------------------------------------------------------
_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


class Identity(_Spec):
    """Who the monitor is: ``name`` is used in DAG ids, file paths and store keys, so it is restricted."""

    name: str
    owner: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(ERR_NAME.format(value=v))
        return v


class ModelSource(_Spec):
    """Where the production model comes from: a registry URI, the model name in it, a version policy.

    ``name`` defaults to ``identity.name``; ``version`` is ``"latest"`` (the newest ``production``
    snapshot at run time) or a pinned version string.
    """

    registry_uri: str = Field(min_length=1)
    name: str | None = None
    version: Annotated[str, BeforeValidator(_version_str), Field(min_length=1)] = "latest"

    @field_validator("version")
    @classmethod
    def _policy(cls, v: str) -> str:
        if v != "latest" and not re.match(r"^v?\d+$", v):
            raise ValueError(f"must be 'latest' or a pinned version like 'v3' (or 3), got {v!r}")
        return v


class SqlSource(_Spec):
    """A SQL query for one window; fairmon binds ``:start`` (inclusive) and ``:end`` (exclusive).

    ``connection`` is the Airflow connection id used inside DAG tasks; outside Airflow the SQLAlchemy URL
    is read from the environment variable named by ``url_env`` (a secret, never stored in the spec).
    """

    query: str = Field(min_length=1)
    connection: str = "fairmon_source"
    url_env: str = "FAIRMON_SOURCE_URL"

    @field_validator("query")
    @classmethod
    def _has_window(cls, v: str) -> str:
        for param in (":start", ":end"):
            if not re.search(re.escape(param) + r"\b", v):
                raise ValueError(ERR_SQL_PLACEHOLDER.format(param=param))
        return v


_SAMPLE_DATE = dt.datetime(2026, 1, 2, 3, 4, 5)
_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _split_vars(text: str) -> list[str]:
    """``text`` split into [literal, var, literal, var, ..., literal] around ``${VAR}`` references."""
    out: list[str] = []
    pos = 0
    for m in _VAR_RE.finditer(text):
        out += [text[pos : m.start()], m.group(0)]
        pos = m.end()
    out.append(text[pos:])
    return out


def _format_window(pattern: str, start: dt.datetime, end: dt.datetime) -> str:
    parts = _split_vars(pattern)
    return "".join(p if i % 2 else p.format(start=start, end=end) for i, p in enumerate(parts))


class FilesSource(_Spec):
    """A file partition per window, e.g. ``data/{start:%Y-%m-%d}.csv`` (``{end:...}`` also allowed).

    The placeholders are Python format fields over ``datetime`` objects. ``format`` is inferred from the
    pattern's extension when omitted.
    """

    pattern: str = Field(min_length=1)
    format: Literal["csv", "parquet"] | None = None

    @field_validator("pattern")
    @classmethod
    def _has_window(cls, v: str) -> str:
        fields = []
        try:
            for piece in _split_vars(v)[::2]:
                for _, field, _, _ in string.Formatter().parse(piece):
                    if field is not None:
                        fields.append(field)
        except ValueError as exc:
            raise ValueError(ERR_PATTERN_FORMAT.format(error=exc)) from None
        for f in fields:
            if f not in ("start", "end"):
                raise ValueError(ERR_PATTERN_FIELD.format(field=f))
        if not fields:
            raise ValueError(ERR_PATTERN_WINDOW.format(pattern=v))
        try:
            _format_window(v, _SAMPLE_DATE, _SAMPLE_DATE)
        except (ValueError, KeyError, IndexError) as exc:
            raise ValueError(ERR_PATTERN_FORMAT.format(error=exc)) from None
        return v

    @model_validator(mode="after")
    def _infer_format(self) -> FilesSource:
        if self.format is None:
            low = self.pattern.lower()
            for suffix, fmt in (
                (".csv", "csv"),
                (".csv.gz", "csv"),
                (".parquet", "parquet"),
                (".pq", "parquet"),
            ):
                if low.endswith(suffix):
                    object.__setattr__(self, "format", fmt)
                    break
            else:
                raise ValueError("format: " + ERR_FORMAT_UNKNOWN.format(pattern=self.pattern))
        return self

    def path_for(self, start: dt.datetime, end: dt.datetime) -> str:
        """The partition path for the window ``[start, end)`` (not yet resolved against the spec folder).

        ``${VAR}`` references are kept for :meth:`MonitorSpec.resolve_path`.

        >>> FilesSource(pattern="${D}/{start:%Y-%m-%d}.csv").path_for(dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6))
        '${D}/2026-01-05.csv'
        """
        return _format_window(self.pattern, start, end)


class DataSource(_Spec):
    """Exactly one of ``sql`` or ``files``."""

    sql: SqlSource | None = None
    files: FilesSource | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> DataSource:
        got = [k for k in ("sql", "files") if getattr(self, k) is not None]
        if len(got) != 1:
            raise ValueError(ERR_EXACTLY_ONE_SOURCE.format(got=got or "neither"))
        return self

    @property
    def kind(self) -> Literal["sql", "files"]:
        return "sql" if self.sql is not None else "files"


class Columns(_Spec):
    """Which columns the window data has and what they mean.

    ``features`` are the model's raw inputs; ``extra`` are further columns present in the data that the
    model does not use (e.g. a protected attribute withheld from the model); ``sensitive`` (protected
    attributes) must be among ``features + extra``. ``label`` is the ground truth (may arrive late),
    ``decision`` a logged decision and ``score`` a logged score; when neither is logged, the monitor
    scores the window with the model.
    """

    features: tuple[ColumnName, ...] = Field(min_length=1)
    sensitive: tuple[ColumnName, ...] = Field(min_length=1)
    extra: tuple[ColumnName, ...] = ()
    label: str | None = None
    decision: str | None = None
    score: str | None = None

    @field_validator("features", "sensitive", "extra")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _check_unique(v)

    @model_validator(mode="after")
    def _consistent(self) -> Columns:
        known = self.features + self.extra
        clash = sorted(set(self.features) & set(self.extra))
        if clash:
            raise ValueError("extra: " + ERR_OVERLAP.format(col=clash[0], a="feature", b="extra"))
        missing = [c for c in self.sensitive if c not in known]
        if missing:
            raise ValueError("sensitive: " + ERR_NOT_KNOWN_COLUMN.format(cols=missing, known=list(known)))
        roles: dict[str, str] = {c: "feature" for c in self.features}
        roles.update({c: "extra" for c in self.extra})
        for role in ("label", "decision", "score"):
            col = getattr(self, role)
            if col is None:
                continue
            if col in roles:
                raise ValueError(f"{role}: " + ERR_OVERLAP.format(col=col, a=roles[col], b=role))
            roles[col] = role
        return self

    @property
    def all(self) -> tuple[str, ...]:
        """Every column the window data must contain (features, extra, label, decision, score)."""
        out = list(self.features + self.extra)
        out += [c for c in (self.label, self.decision, self.score) if c is not None]
        return tuple(out)


class Favorable(_Spec):
    """The favorable outcome.

    ``class`` is the favorable value of the decision column (or of the model's prediction, where the
    positive class is ``1``); ``label_class`` the favorable value of the label column (defaults to
    ``class``; COMPAS needs both: decision ``score_text == 'Low'``, label ``two_year_recid == 0``).
    ``score_threshold`` instead declares a score favorable when it is ``>=`` the threshold
    (``direction: above``) or ``<=`` it (``direction: below``). Without any of them, ``class: 1``.
    """

    class_: Scalar = Field(default=None, alias="class")
    label_class: Scalar = None
    score_threshold: float | None = None
    direction: Literal["above", "below"] = "above"

    @model_validator(mode="after")
    def _one_rule(self) -> Favorable:
        if self.class_ is not None and self.score_threshold is not None:
            raise ValueError(ERR_FAVORABLE)
        if self.class_ is None and self.score_threshold is None:
            object.__setattr__(self, "class_", 1)
        return self

    @property
    def label_value(self) -> Any:
        """Favorable value of the label column (``label_class``, else ``class``, else 1)."""
        if self.label_class is not None:
            return self.label_class
        return self.class_ if self.class_ is not None else 1


class DateRange(_Spec):
    """A closed-open date range ``[start, end)``."""

    start: dt.date
    end: dt.date

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.end <= self.start:
            raise ValueError(f"end: must be after start ({self.start}), got {self.end}")
        return self


class Schedule(_Spec):
    """When windows run and how long they are.

    ``cron`` fires at the *end* of each window (Airflow's ``CronDataIntervalTimetable`` semantics: the
    run for ``[start, end)`` starts at ``end``); ``window`` is the window length (``1d`` default);
    ``timezone`` an IANA name; ``start_date`` the first window start; ``catchup`` whether Airflow
    backfills missed windows.
    """

    cron: str = "0 0 * * *"
    window: Duration = dt.timedelta(days=1)
    timezone: str = "UTC"
    start_date: dt.date
    end_date: dt.date | None = None
    catchup: bool = False

    @field_validator("cron")
    @classmethod
    def _cron(cls, v: str) -> str:
        return validate_cron(v)

    @field_validator("window")
    @classmethod
    def _positive(cls, v: dt.timedelta) -> dt.timedelta:
        if v <= dt.timedelta(0):
            raise ValueError(f"must be positive, got {v}")
        return v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(ERR_TIMEZONE.format(value=v)) from None
        return v

    @model_validator(mode="after")
    def _end_after_start(self) -> Schedule:
        if self.end_date is not None and self.end_date <= self.start_date:
            raise ValueError(f"end_date: must be after start_date ({self.start_date}), got {self.end_date}")
        return self


class ValidationSpec(_Spec):
    """Data validation (Great Expectations suite derived from reference data).

    The suite is built from ``reference_data`` (a CSV/Parquet file) or from the data source over
    ``reference_window``, and stored at ``suite_path`` (default ``<artifact_location>/<name>/suite.json``).
    Numeric ranges are widened by ``range_margin`` times the reference range on both sides, and at
    least ``range_mostly`` of a window's values must fall inside (a unit change fails, one outlier does
    not); non-sensitive columns may have up to ``max_null_fraction`` nulls (sensitive attributes none,
    the label any: labels arrive late). Categorical columns with more than ``max_categories`` distinct
    reference values get no domain check.
    """

    enabled: bool = True
    reference_data: str | None = None
    reference_window: DateRange | None = None
    suite_path: str | None = None
    min_rows: NonNegInt = 100
    max_null_fraction: Annotated[float, Field(ge=0.0, le=1.0)] = 0.05
    range_margin: Annotated[float, Field(ge=0.0)] = 0.1
    range_mostly: Annotated[float, Field(gt=0.0, le=1.0)] = 0.99
    check_types: bool = True
    allow_unseen_categories: bool = False
    require_all_groups: bool = True
    max_categories: PositiveInt = 50

    @model_validator(mode="after")
    def _reference(self) -> ValidationSpec:
        if self.reference_data is not None and self.reference_window is not None:
            raise ValueError("reference_window: set either reference_data or reference_window, not both")
        if self.enabled and self.reference_data is None and self.reference_window is None:
            raise ValueError("reference_data: " + ERR_VALIDATION_REFERENCE)
        return self


#: outcome metric names, as :func:`fairmon.fairness.outcome.outcome_metrics` spells them
OUTCOME_METRICS = (
    "selection_rate",
    "tpr",
    "fpr",
    "fnr",
    "dp_difference",
    "dp_ratio",
    "eop_difference",
    "eodds_difference",
)
#: outcome metrics that need ground-truth labels
LABEL_METRICS = ("tpr", "fpr", "fnr", "eop_difference", "eodds_difference")
OutcomeMetric = Literal[
    "selection_rate",
    "tpr",
    "fpr",
    "fnr",
    "dp_difference",
    "dp_ratio",
    "eop_difference",
    "eodds_difference",
]


class OutcomeSpec(_Spec):
    """Outcome fairness metrics with bootstrap confidence intervals.

    ``metrics`` defaults to every metric the columns allow (label metrics only with a label column);
    names as in :mod:`fairmon.fairness.outcome` (``dp_ratio`` = min/max selection rate, so <= 1).
    Groups smaller than ``min_group_size`` are reported but not compared; ``intersections`` adds
    pairwise intersections of the sensitive attributes; ``bootstrap`` resamples (0 = no CI).
    """

    enabled: bool = True
    metrics: tuple[OutcomeMetric, ...] | None = None
    min_group_size: PositiveInt = 30
    intersections: bool = True
    bootstrap: NonNegInt = 1000
    confidence: Annotated[float, Field(gt=0.5, lt=1.0)] = 0.95
    ci_method: Literal["percentile"] = "percentile"
    random_state: int = 0

    @field_validator("bootstrap")
    @classmethod
    def _enough(cls, v: int) -> int:
        if 0 < v < 50:
            raise ValueError(f"must be 0 (no intervals) or at least 50 resamples, got {v}")
        return v

    @field_validator("metrics")
    @classmethod
    def _unique(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if v is None else _check_unique(v)


class RumieSignificance(_Spec):
    """How RUMIE's optimistic DScore is made honest (DESIGN §4.1).

    The group is mined on ``1 - honest_fraction`` of the window and its DScore evaluated on the held-out
    ``honest_fraction``; the held-out two-proportion test gives the p-value (calibrated: see
    ``benchmarks/rumie_calibration``). One source of truth per setting: the p-value is judged by the
    drift checks at ``drift.significance_level`` and the split is seeded by ``rumie.random_state``, so
    the former ``alpha`` and ``random_state`` keys here (never read) are refused with that pointer.
    """

    honest_fraction: Fraction = 0.5

    @model_validator(mode="before")
    @classmethod
    def _removed_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, where in _RUMIE_SIGNIFICANCE_MOVED.items():
                if key in data:
                    raise ValueError(f"{key}: " + ERR_MOVED.format(key=key, where=where))
        return data


# --- rumie.rule_search (issue 17): the readable-rules stage after IE-DT; read by fairness.rumie.mine
class RumieRuleSearch(_Spec):
    """The rule search after IE-DT: the simplest DNF rule set within ``epsilon`` of the best DScore.

    At most ``max_rules`` rules of ``max_conditions`` conditions; ``enabled: false`` reports IE-DT's
    own rules (see :class:`fairmon.fairness.RuleSearchSettings`).
    """

    enabled: bool = True
    max_rules: PositiveInt = 3
    max_conditions: PositiveInt = 3
    epsilon: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.01


class RumieSpec(_Spec):
    """RUMIE settings (paper defaults: k=5, alpha=0.45, beta=0.55, lam=1, 2500 SGD steps at lr 0.1).

    ``alpha``/``beta`` bound the group's share of the window; ``attributes`` restricts the searched
    columns (default: features + extra, see :attr:`MonitorSpec.rumie_attributes`); ``max_rows``
    subsamples large windows for speed (None = all).
    """

    enabled: bool = True
    method: Literal["ie", "ie-dt"] = "ie-dt"
    attributes: tuple[ColumnName, ...] | None = None
    k: PositiveInt = 5
    alpha: Fraction = 0.45
    beta: Fraction = 0.55
    lam: Annotated[float, Field(ge=0.0)] = 1.0
    iterations: PositiveInt = 2500
    lr: Annotated[float, Field(gt=0.0)] = 0.1
    max_rows: PositiveInt | None = None
    significance: RumieSignificance = RumieSignificance()
    random_state: int = 0
    rule_search: RumieRuleSearch = RumieRuleSearch()

    @model_validator(mode="after")
    def _alpha_beta(self) -> RumieSpec:
        if self.alpha >= self.beta:
            raise ValueError("alpha: " + ERR_ALPHA_BETA.format(alpha=self.alpha, beta=self.beta))
        return self


Explainer = Literal[
    "lime",
    "kernelshap",
    "lime-lib",
    "kernelshap-lib",
    "gradient",
    "gradient_x_input",
    "smoothgrad",
    "integrated_gradients",
    "random",
]
EXPLAINERS: tuple[str, ...] = get_args(Explainer)
#: OpenXAI metrics a monitoring window can compute (no ground truth needed)
OpenXAIMetric = Literal["PGI", "PGU", "RIS", "RRS", "ROS"]
OPENXAI_METRICS: tuple[str, ...] = get_args(OpenXAIMetric)
#: OpenXAI metrics that need ground-truth importances (benchmarks only; refused in a spec)
OPENXAI_GROUND_TRUTH_METRICS: tuple[str, ...] = ("PRA", "RC", "FA", "RA", "SA", "SRA")


#: components of a GESD ``explainer`` ("shap+lime" = the mean of KernelSHAP and LIME attributions)
GESD_EXPLAINER_COMPONENTS = frozenset({"shap", "lime", "deepshap", "deep", "deepexplainer", *EXPLAINERS})


class GesdSpec(_Spec):
    """GESD settings (reference defaults: m=100 instances, N=10 perturbations, sigma 0.1, p 0.2, baseline 0).

    ``explainer`` is a ``+``-joined list of components averaged per instance: ``shap+lime`` (default,
    batched KernelSHAP + LIME), ``deepshap+lime`` (the reference code's DeepExplainer, torch models), or
    any :func:`fairmon.explain.explain` method.

    ``attribute`` is the sensitive attribute whose groups are compared (default: each sensitive
    attribute, one GESD each, stored under the attribute's name; the cost grows with their number);
    groups with fewer than ``min_group_size`` sampled members are skipped. FEU's GESD objective uses
    ``attribute`` or, without one, the first sensitive attribute (its DP objective is for one attribute).

    ``stratify`` (default true) shares the ``sample_size`` rows equally among the attribute's groups
    (a smaller group gives all its rows), so a minority group present in the window is always
    sampled; ``false`` draws the paper's plain random sample, which misses a 1 % group about a third
    of the time. A group's mean stability is a mean over a random sample within the group either way,
    so stratifying changes the precision of GESD, not what it estimates. A window whose GESD is still
    undefined (the attribute has one group, or too few sampled members) stores it as NULL with the
    reason in ``status``; its other results are kept.
    """

    enabled: bool = True
    explainer: str = "shap+lime"
    attribute: str | None = None
    sample_size: PositiveInt = 100
    stratify: bool = True
    n_perturbations: PositiveInt = 10
    sigma: Annotated[float, Field(gt=0.0)] = 0.1
    mask_prob: Annotated[float, Field(ge=0.0, le=1.0)] = 0.2
    baseline: float = 0.0
    min_group_size: PositiveInt = 10

    @field_validator("explainer")
    @classmethod
    def _components(cls, v: str) -> str:
        names = [n.strip().lower() for n in v.split("+")]
        bad = [n for n in names if n not in GESD_EXPLAINER_COMPONENTS]
        if bad or not names:
            raise ValueError(
                f"unknown GESD explainer component(s) {bad}; use a '+'-joined list of {sorted(GESD_EXPLAINER_COMPONENTS)}"
            )
        return "+".join(names)


class OpenXAISpec(_Spec):
    """OpenXAI metrics computed per window for each explainer.

    Only the metrics without ground truth (PGI, PGU, RIS, RRS, ROS) are allowed: the ground-truth
    metrics (PRA, RC, FA, RA, SA, SRA) need true feature importances, which a production model does
    not come with, so a spec naming one is refused instead of failing every window.
    """

    enabled: bool = True
    metrics: tuple[OpenXAIMetric, ...] = OPENXAI_METRICS  # type: ignore[assignment]
    k_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.25
    n_perturbations: PositiveInt = 100
    sample_size: PositiveInt = 200

    @field_validator("metrics", mode="before")
    @classmethod
    def _no_ground_truth(cls, v: Any) -> Any:
        if isinstance(v, list | tuple):
            gt = [m for m in v if isinstance(m, str) and m.upper() in OPENXAI_GROUND_TRUTH_METRICS]
            if gt:
                raise ValueError(ERR_NEEDS_GROUND_TRUTH.format(metrics=gt, allowed=list(OPENXAI_METRICS)))
        return v

    @field_validator("metrics")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _check_unique(v)


class ExplanationsSpec(_Spec):
    """Explanation fairness: explainers, sample sizes, GESD and OpenXAI settings."""

    enabled: bool = True
    explainers: tuple[Explainer, ...] = ("kernelshap", "lime")
    background_size: PositiveInt = 100
    lime_samples: PositiveInt = 1000
    kernelshap_samples: PositiveInt = 512
    gesd: GesdSpec = GesdSpec()
    openxai: OpenXAISpec = OpenXAISpec()
    random_state: int = 0

    @field_validator("explainers")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _check_unique(v)


class ReferenceBaseline(_Spec):
    """Compare every window with one fixed reference window: the scheduled window containing the date
    ``window`` in ``schedule.timezone`` (the first one starting that day, whatever the cron's hour).

    That window and earlier ones have nothing to compare with (a cold start). While the reference window
    has no completed run, the significance tests are silent and the drift result and the log say why;
    the window is not failed."""

    kind: Literal["reference"]
    window: dt.date


class TrailingBaseline(_Spec):
    """Compare every window with the last ``n_windows`` (at least 2) earlier completed windows in which
    the series was not drifting (a drift's own windows never become its baseline)."""

    kind: Literal["trailing"] = "trailing"
    n_windows: Annotated[int, Field(ge=2)] = 7


Baseline = Annotated[ReferenceBaseline | TrailingBaseline, Field(discriminator="kind")]


class ColdStart(_Spec):
    """Until ``min_history`` (at least 2: a significance test needs a spread) earlier completed windows
    exist: ``ranges_only`` checks only the allowed ranges, ``suppress`` records findings without
    alerting."""

    min_history: Annotated[int, Field(ge=2)] = 3
    rule: Literal["ranges_only", "suppress"] = "ranges_only"


class Persistence(_Spec):
    """Alert only when at least ``m`` of the last ``n`` windows (this one included) violate."""

    m: PositiveInt = 2
    n: PositiveInt = 3

    @model_validator(mode="after")
    def _m_le_n(self) -> Persistence:
        if self.m > self.n:
            raise ValueError("m: " + ERR_PERSISTENCE.format(m=self.m, n=self.n))
        return self


class RumieDriftThresholds(_Spec):
    """RUMIE drift: honest DScore above ``honest_dscore_threshold`` (or a significant increase), or a new
    group (Jaccard overlap with the previous window's group below ``min_jaccard``)."""

    honest_dscore_threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.1
    min_jaccard: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5


DRIFT_METRICS = (*OUTCOME_METRICS, "rumie_dscore", "rumie_honest_dscore", "gesd")


class DriftSpec(_Spec):
    """When discrimination counts as drifted (DESIGN §5).

    ``allowed_ranges`` maps a metric to ``[low, high]``: a window violates when the metric's confidence
    interval lies outside it. Changes against the ``baseline`` count when significant at
    ``significance_level`` and at least ``min_effect`` in size. ``gesd_threshold`` (optional) is an
    absolute GESD level that always counts.
    """

    baseline: Baseline = TrailingBaseline()
    cold_start: ColdStart = ColdStart()
    allowed_ranges: dict[str, tuple[float, float]] = Field(default_factory=lambda: {"dp_ratio": (0.8, 1.0)})
    significance_level: Fraction = 0.05
    min_effect: Annotated[float, Field(ge=0.0)] = 0.02
    persistence: Persistence = Persistence()
    cooldown_windows: NonNegInt = 3
    rumie: RumieDriftThresholds = RumieDriftThresholds()
    gesd_threshold: Annotated[float, Field(ge=0.0)] | None = None

    @field_validator("allowed_ranges")
    @classmethod
    def _ranges(cls, v: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for metric, (low, high) in v.items():
            if metric not in DRIFT_METRICS:
                raise ValueError(
                    f"{metric}: " + ERR_UNKNOWN_METRIC.format(metric=metric, known=list(DRIFT_METRICS))
                )
            if low > high:
                raise ValueError(f"{metric}: " + ERR_RANGE_ORDER.format(metric=metric, value=[low, high]))
        return v


class TrainingData(_Spec):
    """Labelled training data for retraining: a CSV or Parquet file (``path``, spec-relative).

    It needs the features, the sensitive attribute FEU optimises for and ``columns.label``. Training
    data by ``window`` (the data source over a date range) is not supported: FEU reads one file, and
    a spec asking for a window is refused rather than failing at the first drift.
    """

    path: str
    format: Literal["csv", "parquet"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_window(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "window" in data:
            raise ValueError("window: " + ERR_TRAINING_WINDOW)
        return data


class Split(_Spec):
    """Stratified train/validation/test fractions.

    FEU selects its candidate on the validation part and reports metrics on the untouched test part,
    so a validation share is required (the reference code's 70/30 split selects on test, which
    flatters the reported numbers).
    """

    train: Fraction = 0.5
    validation: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.2
    test: Fraction = 0.3
    stratify: bool = True

    @model_validator(mode="after")
    def _sum(self) -> Split:
        total = self.train + self.validation + self.test
        if abs(total - 1.0) > 1e-9:
            raise ValueError("train: " + ERR_SPLIT_SUM.format(total=round(total, 6)))
        return self


def _bounds(v: tuple[float, float]) -> tuple[float, float]:
    low, high = v
    if not 0 < low < high:
        raise ValueError(ERR_BOUNDS.format(value=[low, high]))
    return v


class SearchBounds(_Spec):
    """FEU decision-variable bounds: learning rate (sampled log-uniformly), epochs, decision threshold.

    The defaults are :mod:`fairmon.feu.settings`' (``LR_BOUNDS``, ``EPOCH_BOUNDS``,
    ``THRESHOLD_BOUNDS``), so a spec without ``bounds`` searches what ``FEUSettings()`` searches.
    """

    lr: tuple[float, float] = LR_BOUNDS
    epochs: tuple[int, int] = EPOCH_BOUNDS
    threshold: tuple[float, float] = THRESHOLD_BOUNDS

    @field_validator("lr", "epochs")
    @classmethod
    def _positive_bounds(cls, v: tuple[float, float]) -> tuple[float, float]:
        return _bounds(v)

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, v: tuple[float, float]) -> tuple[float, float]:
        _bounds(v)
        if v[1] >= 1:
            raise ValueError(ERR_BOUNDS.format(value=list(v)) + " and high < 1")
        return v


class SelectionWeights(_Spec):
    """Chebyshev weights for picking the recommended Pareto candidate (paper: 0.4 / 0.3 / 0.3)."""

    auc: Annotated[float, Field(ge=0.0)] = 0.4
    dp: Annotated[float, Field(ge=0.0)] = 0.3
    gesd: Annotated[float, Field(ge=0.0)] = 0.3


class RetrainingSpec(_Spec):
    """FEU retraining candidates (proposed, never deployed automatically).

    ``trigger``: ``on_drift`` runs FEU in every window whose drift alert opens; ``manual`` only on
    request (``fairmon feu --monitor SPEC --window DATE`` or the DAG's ``feu`` param, trigger conf
    ``{"feu": true}``), which also works for ``on_drift`` at a window without drift. Stops at
    whichever comes first: ``generations``, ``max_evaluations`` or ``time_budget_s``.
    """

    enabled: bool = False
    trigger: Literal["on_drift", "manual"] = "on_drift"
    training_data: TrainingData | None = None
    split: Split = Split()
    bounds: SearchBounds = SearchBounds()
    population: Annotated[int, Field(ge=2)] = 30
    generations: PositiveInt = 15
    max_evaluations: PositiveInt | None = None
    time_budget_s: Annotated[float, Field(gt=0.0)] | None = None
    selection_weights: SelectionWeights = SelectionWeights()
    n_jobs: PositiveInt = 1
    random_state: int = 42

    @model_validator(mode="after")
    def _data(self) -> RetrainingSpec:
        if self.enabled and self.training_data is None:
            raise ValueError("training_data: " + ERR_TRAINING_DATA)
        return self


_CHANNEL_RE = re.compile(r"^(#?[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{6,})$")


class AlertsSpec(_Spec):
    """Where and when findings are sent.

    ``enabled: false`` silences the monitor on Slack: runs (``data_invalid`` ones included), findings
    and FEU candidates are stored as usual, but no message of any kind (fairness finding,
    data-validation failure, FEU follow-up) is queued or posted. ``slack_channel`` wins over
    ``FAIRMON_SLACK_CHANNEL`` (which only fills a spec without one); findings below ``min_severity``
    are stored but not sent; backfilled windows notify only with ``notify_backfill``.
    """

    enabled: bool = True
    slack_channel: str | None = None
    min_severity: Literal["info", "warning", "critical"] = "warning"
    report_base_url: str | None = None
    notify_backfill: bool = False
    send_resolved: bool = True

    @field_validator("slack_channel")
    @classmethod
    def _channel(cls, v: str | None) -> str | None:
        if v is not None and not _CHANNEL_RE.match(v):
            raise ValueError(ERR_CHANNEL.format(value=v))
        return v

    @field_validator("report_base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(ERR_BASE_URL.format(value=v))
        return v


class ExecutionSpec(_Spec):
    """Where heavy steps run and where intermediate artifacts go.

    ``queue`` is the Airflow/Celery queue of the heavy tasks (``gpu`` for GPU workers);
    ``artifact_location`` a local directory or fsspec URI, keyed below by monitor and window.
    """

    device: Literal["auto", "cpu", "cuda"] = "auto"
    queue: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] = "default"
    artifact_location: str = "~/.fairmon/artifacts"
    retries: NonNegInt = 2
    retry_delay_s: NonNegInt = 300
    task_timeout_s: PositiveInt = 3600


class MonitorSpec(_Spec):
    """One monitored model: the root of a spec file (see the module docstring).

    Load with :func:`load_spec`; build in code with ``MonitorSpec.model_validate(dict)``. Sections
    other than identity, model, data, columns and schedule are optional. An omitted ``validation``
    section means no data validation (a written one is enabled unless it says ``enabled: false``, and
    then needs its reference data).
    """

    spec_version: int
    identity: Identity
    model: ModelSource
    data: DataSource
    columns: Columns
    favorable: Favorable = Favorable()
    schedule: Schedule
    validation: ValidationSpec = ValidationSpec(enabled=False)
    outcome: OutcomeSpec = OutcomeSpec()
    rumie: RumieSpec = RumieSpec()
    explanations: ExplanationsSpec = ExplanationsSpec()
    drift: DriftSpec = DriftSpec()
    retraining: RetrainingSpec = RetrainingSpec()
    alerts: AlertsSpec = AlertsSpec()
    execution: ExecutionSpec = ExecutionSpec()

    _source: Path | None = PrivateAttr(default=None)

    @field_validator("spec_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        if isinstance(v, bool) or v not in SUPPORTED_SPEC_VERSIONS:
            raise ValueError(ERR_SPEC_VERSION.format(value=v, supported=list(SUPPORTED_SPEC_VERSIONS)))
        return v

    @model_validator(mode="after")
    def _cross_section(self) -> MonitorSpec:
        cols = self.columns
        known = cols.features + cols.extra
        if self.model.name is None:
            object.__setattr__(self, "model", self.model.model_copy(update={"name": self.identity.name}))
        if self.outcome.metrics is None:
            metrics = tuple(m for m in OUTCOME_METRICS if cols.label is not None or m not in LABEL_METRICS)
            object.__setattr__(self, "outcome", self.outcome.model_copy(update={"metrics": metrics}))
        else:
            need = [m for m in self.outcome.metrics if m in LABEL_METRICS]
            if need and cols.label is None:
                raise ValueError("outcome.metrics: " + ERR_NEEDS_LABEL.format(metrics=need))
        if self.rumie.attributes is not None:
            missing = [c for c in self.rumie.attributes if c not in known]
            if missing:
                raise ValueError(
                    "rumie.attributes: " + ERR_NOT_KNOWN_COLUMN.format(cols=missing, known=list(known))
                )
        attr = self.explanations.gesd.attribute
        if attr is not None and attr not in cols.sensitive:
            raise ValueError(
                "explanations.gesd.attribute: "
                + f"{attr!r} is not a sensitive attribute (columns.sensitive: {list(cols.sensitive)})"
            )
        if self.retraining.enabled and cols.label is None:
            raise ValueError("retraining.enabled: " + ERR_RETRAINING_LABEL)
        if self.favorable.score_threshold is not None and cols.decision is not None and cols.score is None:
            raise ValueError(
                "favorable.score_threshold: a score threshold needs columns.score (or no logged decision)"
            )
        return self

    # ---- derived values ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The monitor's name (``identity.name``)."""
        return self.identity.name

    @property
    def rumie_attributes(self) -> tuple[str, ...]:
        """Columns RUMIE searches: ``rumie.attributes``, else features + extra.

        Why extra: RUMIE looks for the most discriminated group nobody declared (DESIGN §4.1), and
        such a group may be described by a protected attribute withheld from the model (a column of
        ``columns.extra``), which a search over the model's features alone could never name.
        """
        if self.rumie.attributes is not None:
            return self.rumie.attributes
        return self.columns.features + self.columns.extra

    @property
    def gesd_attributes(self) -> tuple[str, ...]:
        """Sensitive attributes whose groups GESD compares, one GESD each: ``explanations.gesd.attribute``,
        else every ``columns.sensitive`` attribute."""
        g = self.explanations.gesd
        return (g.attribute,) if g.attribute is not None else self.columns.sensitive

    @property
    def source(self) -> Path | None:
        """The file this spec was loaded from (None when built in code)."""
        return self._source

    @property
    def base_dir(self) -> Path:
        """Folder that relative paths are resolved against: the spec file's folder, else the cwd."""
        return self._source.parent if self._source is not None else Path.cwd()

    def canonical_json(self) -> str:
        """Sorted-key compact JSON of every field (defaults included): the fingerprint's input."""
        return json.dumps(
            self.model_dump(mode="json", by_alias=True),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
        )

    @property
    def fingerprint(self) -> str:
        """sha256 (hex) of :meth:`canonical_json`: equal specs, equal fingerprints, wherever the file is."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    def resolve_path(self, value: str, *, env: Mapping[str, str] | None = None) -> str:
        """Resolve a path written in the spec with :func:`resolve_path` against :attr:`base_dir`.

        >>> spec = MonitorSpec.model_validate(_EXAMPLE)
        >>> spec.resolve_path("s3://bucket/x")
        's3://bucket/x'
        """
        try:
            return resolve_path(value, base_dir=self.base_dir, env=env)
        except ConfigError as exc:
            raise ConfigError(f"{self._source or self.name}: {exc}") from None

    @property
    def artifact_dir(self) -> str:
        """``execution.artifact_location`` resolved, then ``/<monitor name>``."""
        return self.resolve_path(self.execution.artifact_location).rstrip("/") + "/" + self.name

    @property
    def suite_location(self) -> str:
        """Where the validation suite JSON lives: ``validation.suite_path`` resolved, or
        ``<artifact_dir>/suite.json``."""
        if self.validation.suite_path is not None:
            return self.resolve_path(self.validation.suite_path)
        return self.artifact_dir + "/suite.json"


_EXAMPLE: dict[str, Any] = {
    "spec_version": 1,
    "identity": {"name": "example"},
    "model": {"registry_uri": "registry"},
    "data": {"files": {"pattern": "data/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["age", "sex"], "sensitive": ["sex"]},
    "schedule": {"start_date": "2026-01-01"},
}


def resolve_path(
    value: str, *, base_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Resolve a path from a spec: expand ``${VAR}``, ``${VAR:-default}`` and ``$VAR`` (from ``env``,
    default ``os.environ``) and ``~``; keep URIs (``scheme://...``) as they are; join a relative path
    with ``base_dir`` (default: the current directory) and normalise it.

    Why: specs live in a monitors folder and point at data/registries relative to themselves, while
    deployments relocate everything with one environment variable.

    >>> resolve_path("${ROOT:-../data}/x.csv", base_dir="/srv/monitors", env={})
    '/srv/data/x.csv'
    >>> resolve_path("${ROOT}/x.csv", env={"ROOT": "memory://d"})
    'memory://d/x.csv'
    """
    env = os.environ if env is None else env
    expanded = _expand_vars(value, env)
    if "://" in expanded:
        return expanded
    p = Path(expanded).expanduser()
    if not p.is_absolute():
        p = Path(base_dir if base_dir is not None else Path.cwd()) / p
    return os.path.normpath(p)


def _expand_vars(value: str, env: Mapping[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in env:
            return env[name]
        if m.group(2) is not None:
            return m.group(2)
        raise ConfigError(f"environment variable {name} is not set (used in path {value!r})")

    return _VAR_RE.sub(repl, value)


# ---- loading and error translation -----------------------------------------------------------------
class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *anchor' may be overridden by explicit keys
            continue
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        try:
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    ERR_DUPLICATE_KEY.format(key=key, first_line=seen[key]),
                    key_node.start_mark,
                )
        except TypeError:  # unhashable key: let the default constructor report it
            break
        seen[key] = key_node.start_mark.line + 1
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=deep))  # type: ignore[no-untyped-call]


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _loc_to_path(loc: tuple[Any, ...]) -> list[Any]:
    path: list[Any] = []
    for i, part in enumerate(loc):
        # discriminated unions insert the tag ('trailing'/'reference') into the location
        if i > 0 and loc[i - 1] == "baseline" and part in ("reference", "trailing"):
            continue
        if isinstance(part, str) and (part.startswith("function-") or part in ("tuple[float, float]",)):
            continue
        path.append(part)
    return path


def _fmt_path(path: list[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _model_at(path: list[Any]) -> type[BaseModel] | None:
    """The spec section class at ``path`` (for 'allowed keys' hints), or None."""
    import typing

    model: Any = MonitorSpec
    for part in path:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = None
        for fname, f in model.model_fields.items():
            if part in (fname, f.alias):
                field = f
                break
        if field is None:
            return None
        ann = field.annotation
        candidates: list[Any] = [
            a for a in typing.get_args(ann) if isinstance(a, type) and issubclass(a, BaseModel)
        ] or [ann]
        model = candidates[0] if len(candidates) == 1 else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _allowed_keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


_FIELD_PREFIX_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): (.*)$", re.S)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(err: Mapping[str, Any], path: list[Any]) -> tuple[list[Any], str]:
    etype = err["type"]
    msg = str(err["msg"])
    if etype == "extra_forbidden":
        key = path[-1] if path else "?"
        hint = ""
        model = _model_at(path[:-1])
        if model is not None:
            allowed = _allowed_keys(model)
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            hint += f" (allowed: {', '.join(allowed)})"
        return path, ERR_UNKNOWN_KEY.format(key=key, hint=hint)
    if etype == "missing":
        return path, ERR_MISSING
    if etype == "value_error":
        msg = msg.removeprefix("Value error, ")
        m = _FIELD_PREFIX_RE.match(msg)
        if m and " " not in m.group(1):
            return path + m.group(1).split("."), m.group(2)
        return path, msg
    if etype == "assertion_error":
        return path, msg.removeprefix("Assertion failed, ")
    return path, f"{msg} (got {_short(err.get('input'))})"


def _line_of(root: yaml.Node | None, path: list[Any]) -> int | None:
    """1-based line of the deepest key of ``path`` found in the YAML node tree (None if none)."""
    node = root
    line = None
    for part in path:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    nxt, line = v, k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
            line = nxt.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line


def _translate(exc: ValidationError, file: str, root: yaml.Node | None) -> ConfigError:
    items = []
    for err in exc.errors():
        loc, problem = _problem(err, _loc_to_path(tuple(err["loc"])))
        line = _line_of(root, loc) if root is not None else None
        where = f"{file}:{line}" if line else file
        items.append((where, _fmt_path(loc), problem))
    if len(items) == 1:
        where, path, problem = items[0]
        return ConfigError(ERR_FIELD.format(where=where, path=path, problem=problem))
    lines = "\n".join(f"  {w}: {p}: {pr}" for w, p, pr in items)
    return ConfigError(ERR_MANY.format(file=file, n=len(items), lines=lines))


def parse_spec(text: str, *, source: str | Path = "<string>") -> MonitorSpec:
    """Parse and validate spec YAML text; ``source`` names the file in error messages.

    Why separate from :func:`load_spec`: the DAG factory, the CLI and tests may hold the text already.

    >>> parse_spec("spec_version: 1\\nidentity: {name: x}\\n", source="x.yaml")
    Traceback (most recent call last):
    ...
    fairmon.errors.ConfigError: x.yaml: 4 problems in monitor spec:
      x.yaml: model: missing required field
      x.yaml: data: missing required field
      x.yaml: columns: missing required field
      x.yaml: schedule: missing required field
    """
    file = str(source)
    try:
        root = yaml.compose(text, Loader=_UniqueKeyLoader)  # type: ignore[arg-type]
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(ERR_YAML.format(file=file, line=line, column=col, problem=problem)) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(ERR_YAML.format(file=file, line=0, column=0, problem=exc)) from exc
    if not isinstance(data, dict):
        kind = "an empty document" if data is None else f"a {type(data).__name__}"
        raise ConfigError(ERR_NOT_MAPPING.format(file=file, kind=kind))
    try:
        spec = MonitorSpec.model_validate(data)
    except ValidationError as exc:
        raise _translate(exc, file, root) from None
    except ConfigError as exc:  # raised by a validator directly
        raise ConfigError(f"{file}: {exc}") from None
    if isinstance(source, Path):
        spec._source = source.resolve()
    return spec


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of a monitor spec (``monitors/monitor-spec.schema.json`` is this, for editors).

    Why: YAML editors (e.g. yaml-language-server with a ``$schema`` comment) then complete and check
    spec files while they are written; :func:`load_spec` remains the authority.
    """
    schema = MonitorSpec.model_json_schema(by_alias=True)
    schema["$id"] = "https://fairmon.dev/schemas/monitor-spec-v1.json"
    schema["title"] = f"fairmon monitor spec (spec_version {SPEC_VERSION})"
    return schema


def load_spec(path: str | os.PathLike[str]) -> MonitorSpec:
    """Load one monitor spec YAML file.

    Raises :class:`~fairmon.errors.ConfigError` naming the file (and line and field path where they
    apply) for a missing file, YAML syntax errors, a non-mapping document, unknown keys, wrong types,
    and every semantic check.

    Examples
    --------
    >>> spec = load_spec("monitors/demo.yaml")  # doctest: +SKIP
    >>> spec.name, spec.data.kind  # doctest: +SKIP
    ('demo', 'files')
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(ERR_FILE_MISSING.format(file=p))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(ERR_FILE_UNREADABLE.format(file=p, error=exc)) from exc
    return parse_spec(text, source=p)


def _spec_files(folder: str | os.PathLike[str]) -> list[Path]:
    d = Path(folder)
    if not d.is_dir():
        raise ConfigError(ERR_FOLDER_MISSING.format(folder=d))
    return sorted([*d.glob("*.yaml"), *d.glob("*.yml")])


def scan_specs(folder: str | os.PathLike[str]) -> list[tuple[Path, MonitorSpec | ConfigError]]:
    """Load every ``*.yaml``/``*.yml`` in ``folder`` (sorted), keeping errors per file.

    Why: a DAG factory should still build the good monitors' DAGs when one spec is broken, and surface
    the broken one as an import error.
    """
    out: list[tuple[Path, MonitorSpec | ConfigError]] = []
    names: dict[str, Path] = {}
    for f in _spec_files(folder):
        try:
            spec = load_spec(f)
        except ConfigError as exc:
            out.append((f, exc))
            continue
        if spec.name in names:
            out.append(
                (f, ConfigError(ERR_DUPLICATE_NAME.format(file=f, name=spec.name, other=names[spec.name])))
            )
            continue
        names[spec.name] = f
        out.append((f, spec))
    return out


def load_specs(folder: str | os.PathLike[str]) -> list[MonitorSpec]:
    """Load every monitor spec in ``folder``; the first broken file raises its ConfigError.

    Names must be unique across the folder (they become DAG ids).

    >>> [s.name for s in load_specs("monitors")]  # doctest: +SKIP
    ['adult', 'compas', 'demo', 'german']
    """
    results = scan_specs(folder)
    if not results:
        raise ConfigError(ERR_NO_SPECS.format(folder=folder))
    specs = []
    for _, item in results:
        if isinstance(item, ConfigError):
            raise item
        specs.append(item)
    return specs


# ---- runtime settings (secrets and endpoints from the environment) ---------------------------------
class Settings(BaseModel):
    """Secrets and endpoints for one monitor at run time; secrets never show in repr/str/logs.

    ``slack_channel`` is the spec's channel; ``FAIRMON_SLACK_CHANNEL`` only fills a spec without one
    (``channel_from`` says which). ``source_url`` is the SQL source's URL from the environment variable
    the spec names (``data.sql.url_env``), outside Airflow.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_url: SecretStr | None = None
    slack_token: SecretStr | None = None
    slack_base_url: str | None = None
    slack_channel: str | None = None
    channel_from: Literal["spec", "env"] | None = None
    source_url: SecretStr | None = None


def resolve_runtime(spec: MonitorSpec, env: Mapping[str, str] | None = None) -> Settings:
    """Combine a spec with the environment: the spec decides routing, the environment supplies secrets.

    >>> s = resolve_runtime(MonitorSpec.model_validate(_EXAMPLE), env={"FAIRMON_SLACK_TOKEN": "xoxb-1",
    ...                     "FAIRMON_SLACK_CHANNEL": "#fairness"})
    >>> s.slack_channel, s.channel_from, s.slack_token
    ('#fairness', 'env', SecretStr('**********'))
    """
    env = os.environ if env is None else env

    def secret(name: str) -> SecretStr | None:
        v = env.get(name)
        return SecretStr(v) if v else None

    channel, origin = spec.alerts.slack_channel, "spec"
    if channel is None:
        channel = env.get(ENV_SLACK_CHANNEL) or None
        origin = "env"
        if channel is not None and not _CHANNEL_RE.match(channel):
            raise ConfigError(f"{ENV_SLACK_CHANNEL}: " + ERR_CHANNEL.format(value=channel))
    return Settings(
        database_url=secret(ENV_DATABASE_URL),
        slack_token=secret(ENV_SLACK_TOKEN),
        slack_base_url=env.get(ENV_SLACK_BASE_URL) or None,
        slack_channel=channel,
        channel_from=origin if channel is not None else None,  # type: ignore[arg-type]
        source_url=secret(spec.data.sql.url_env) if spec.data.sql is not None else None,
    )
