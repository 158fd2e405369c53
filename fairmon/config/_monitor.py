"""The root model of a spec file, :class:`MonitorSpec`: the sections, cross-section checks, derived paths.

Examples
--------
>>> spec = MonitorSpec.model_validate(EXAMPLE)
>>> spec.name, spec.model.name, spec.artifact_dir.endswith("/artifacts/example")
('example', 'example', True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr, field_validator, model_validator

from fairmon.config._alerts import AlertsSpec
from fairmon.config._columns import Columns, Favorable
from fairmon.config._data import DataSource
from fairmon.config._drift import DriftSpec
from fairmon.config._execution import FEU_BUDGET_SHARE, HEAVY_TIMEOUT_FACTOR, ExecutionSpec
from fairmon.config._explanations import ExplanationsSpec
from fairmon.config._identity import Identity, ModelSource
from fairmon.config._messages import (
    ERR_FEU_BUDGET,
    ERR_NEEDS_LABEL,
    ERR_NOT_KNOWN_COLUMN,
    ERR_PUSH_DOWN,
    ERR_RETRAINING_LABEL,
    ERR_SPEC_VERSION,
    excerpt,
)
from fairmon.config._outcome import LABEL_METRICS, OUTCOME_METRICS, OutcomeSpec
from fairmon.config._parsers import SpecSection, format_duration
from fairmon.config._paths import resolve_path
from fairmon.config._retraining import RetrainingSpec
from fairmon.config._rumie import RumieSpec
from fairmon.config._schedule import RUN_TIMEOUT_SHARE, Schedule
from fairmon.config._validation import ValidationSpec
from fairmon.errors import ConfigError

__all__ = ["EXAMPLE", "SPEC_VERSION", "SUPPORTED_SPEC_VERSIONS", "MonitorSpec"]

#: the spec format version this code writes and reads
SPEC_VERSION = 1
SUPPORTED_SPEC_VERSIONS = (1,)

#: paths of the settings that decide how or when a window runs, not what it stores: the DAG layout
#: (both layouts store the same rows), the BLAS thread limit and the late-data readiness query
_NOT_RESULTS = (("execution", "layout"), ("execution", "blas_threads"), ("data", "sql", "ready_query"))

class MonitorSpec(SpecSection):
    """One monitored model: the root of a spec file (see :mod:`fairmon.config`).

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
            raise ValueError(ERR_SPEC_VERSION.format(value=excerpt(v), supported=list(SUPPORTED_SPEC_VERSIONS)))
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
        if self.outcome.push_down and (self.data.sql is None or cols.decision is None):
            raise ValueError("outcome.push_down: " + ERR_PUSH_DOWN)
        if self.rumie.attributes is not None:
            known_set = set(known)
            missing = [c for c in self.rumie.attributes if c not in known_set]
            if missing:
                raise ValueError(
                    "rumie.attributes: " + ERR_NOT_KNOWN_COLUMN.format(cols=excerpt(missing), known=excerpt(list(known)))
                )
        attr = self.explanations.gesd.attribute
        if attr is not None and attr not in cols.sensitive:
            raise ValueError(
                "explanations.gesd.attribute: "
                + f"{excerpt(attr)!r} is not a sensitive attribute (columns.sensitive: {excerpt(list(cols.sensitive))})"
            )
        if self.retraining.enabled and cols.label is None:
            raise ValueError("retraining.enabled: " + ERR_RETRAINING_LABEL)
        self._check_feu_budget()
        if self.favorable.score_threshold is not None and cols.decision is not None and cols.score is None:
            raise ValueError(
                "favorable.score_threshold: a score threshold needs columns.score (or no logged decision)"
            )
        return self

    def _check_feu_budget(self) -> None:
        """``retraining.time_budget_s`` must leave room inside the FEU step's Airflow limits (``FEU_BUDGET_SHARE``)."""
        budget, heavy = self.retraining.time_budget_s, self.execution.heavy_timeout_s
        if not self.retraining.enabled or budget is None:
            return
        run = self.schedule.run_timeout_s
        limit = min(heavy, run)
        if budget > FEU_BUDGET_SHARE * limit:
            raise ValueError("retraining.time_budget_s: " + ERR_FEU_BUDGET.format(
                budget=budget, share=FEU_BUDGET_SHARE, limit=limit, factor=HEAVY_TIMEOUT_FACTOR,
                task=self.execution.task_timeout_s, heavy=heavy, run_share=RUN_TIMEOUT_SHARE,
                period=format_duration(self.schedule.interval_lengths[0]), run=run, most=FEU_BUDGET_SHARE * limit,
                raise_what="raise execution.task_timeout_s" if heavy <= run else
                "run the monitor on a longer schedule interval (schedule.cron): the next window's run is due "
                "one interval later, so no timeout may exceed it"))

    # ---- derived values ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The monitor's name (``identity.name``)."""
        return self.identity.name

    @property
    def rumie_attributes(self) -> tuple[str, ...]:
        """Columns RUMIE searches: ``rumie.attributes`` when the spec lists them, else the sensitive
        and ``extra`` (non-input) columns.

        Why not the model's inputs (issue 22): over a credit model's features the "most discriminated
        group" is the group the model is built to score low (low bureau scores, high debt), a finding for
        a model doing what it was built to do. RUMIE looks for the group nobody *declared* among columns
        that should not drive the decision: the protected attributes (their intersections and values)
        and the columns the data carries but the model does not use (``columns.extra``, e.g. a
        protected attribute withheld from the model). A spec that wants model inputs searched lists them
        in ``rumie.attributes``; ``fairmon spec check`` then warns (:meth:`rumie_model_inputs`).

        >>> spec = MonitorSpec.model_validate({**EXAMPLE, "columns": {"features": ["age", "income"],
        ...     "extra": ["sex", "region"], "sensitive": ["sex"]}})
        >>> spec.rumie_attributes, spec.rumie_model_inputs
        (('sex', 'region'), ())
        """
        if self.rumie.attributes is not None:
            return self.rumie.attributes
        return tuple(dict.fromkeys(self.columns.sensitive + self.columns.extra))

    @property
    def rumie_model_inputs(self) -> tuple[str, ...]:
        """The model inputs (``columns.features``) RUMIE searches that are not sensitive attributes."""
        searched = set(self.rumie_attributes)
        return tuple(c for c in self.columns.features if c in searched and c not in self.columns.sensitive)

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
        """Sorted-key compact JSON of every field (defaults included): the fingerprint's input.

        Settings that decide how or when a window runs, not what it stores, are left out
        (:data:`_NOT_RESULTS`), so changing them marks no ``spec_changed`` event.
        """
        doc = self.model_dump(mode="json", by_alias=True)
        for *sections, field in _NOT_RESULTS:
            node = doc
            for section in sections:
                node = node.get(section) or {}
            node.pop(field, None)
        return json.dumps(
            doc,
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

        >>> spec = MonitorSpec.model_validate(EXAMPLE)
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


#: the smallest valid spec (doctests and examples build on it)
EXAMPLE: dict[str, Any] = {
    "spec_version": 1,
    "identity": {"name": "example"},
    "model": {"registry_uri": "registry"},
    "data": {"files": {"pattern": "data/{start:%Y-%m-%d}.csv"}},
    "columns": {"features": ["age", "sex"], "sensitive": ["sex"]},
    "schedule": {"start_date": "2026-01-01"},
}
