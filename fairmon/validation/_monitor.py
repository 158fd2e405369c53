"""The monitor-level entry points: the spec's suite (built once, stored, versioned) and window checks.

:func:`ensure_suite` returns the suite at the spec's suite path (``validation.suite_path``, default
``<artifact_dir>/suite.json``), building it from the spec's reference data when the file is missing or
was built with different columns/settings/reference location; a rebuilt suite gets ``revision + 1`` and
the previous file is kept beside it as ``<name>.r<revision>.json``. Changing the reference *data* at the
same location does not rebuild by itself: pass ``rebuild=True`` (or delete the file).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pandas as pd

from fairmon.errors import ConfigError, DatasetError
from fairmon.sources import file_exists, file_format, load_file, load_window
from fairmon.validation._build import build_suite
from fairmon.validation._report import ValidationReport
from fairmon.validation._runner import validate
from fairmon.validation._suite import Suite
from fairmon.validation._suite_io import _exists, load_suite, save_suite

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from fairmon.config import MonitorSpec

__all__ = ["ensure_suite", "suite_from_spec", "validate_window", "load_reference", "ERR_DISABLED", "ERR_REFERENCE_MISSING"]

ERR_DISABLED = "monitor {name!r}: validation is disabled in its spec"
ERR_REFERENCE_MISSING = "reference data file not found: {path} (validation.reference_data of {name!r})"


def _roles(spec: MonitorSpec) -> dict[str, Any]:
    c = spec.columns
    return {
        "features": list(c.features),
        "sensitive": list(c.sensitive),
        "label": c.label,
        "decision": c.decision,
        "score": c.score,
        "extra": list(c.extra),
    }


def _reference_location(spec: MonitorSpec) -> str:
    v = spec.validation
    if v.reference_data is not None:
        return v.reference_data
    if v.reference_window is not None:
        return f"window:{v.reference_window.start.isoformat()}/{v.reference_window.end.isoformat()}"
    raise ConfigError(f"{spec.source or spec.name}: validation.reference_data: no reference data configured")


def load_reference(spec: MonitorSpec, *, engine: Engine | str | None = None) -> pd.DataFrame:
    """The spec's reference data: ``validation.reference_data`` (CSV/Parquet, spec-relative) or the data
    source over ``validation.reference_window`` (dates at midnight in the schedule's timezone)."""
    v = spec.validation
    if v.reference_data is not None:
        path = spec.resolve_path(v.reference_data)
        if not file_exists(path):
            raise DatasetError(ERR_REFERENCE_MISSING.format(path=path, name=spec.name))
        return load_file(path, file_format(path))
    if v.reference_window is not None:
        tz = ZoneInfo(spec.schedule.timezone)
        start = dt.datetime.combine(v.reference_window.start, dt.time(0), tzinfo=tz)
        end = dt.datetime.combine(v.reference_window.end, dt.time(0), tzinfo=tz)
        return load_window(spec, start, end, engine=engine)
    raise ConfigError(f"{spec.source or spec.name}: validation.reference_data: no reference data configured")


def suite_from_spec(reference: pd.DataFrame, spec: MonitorSpec) -> Suite:
    """:func:`build_suite` with the spec's columns and ``validation`` settings; name = monitor name."""
    v = spec.validation
    try:
        suite = build_suite(
            reference,
            **_roles(spec),
            min_rows=v.min_rows,
            max_null_fraction=v.max_null_fraction,
            range_margin=v.range_margin,
            range_mostly=v.range_mostly,
            check_types=v.check_types,
            allow_unseen_categories=v.allow_unseen_categories,
            require_all_groups=v.require_all_groups,
            max_categories=v.max_categories,
            name=spec.name,
        )
    except DatasetError as exc:  # which reference, for which spec: "reference data lacks ..." alone names neither
        raise DatasetError(f"{spec.source or spec.name}: validation reference {_reference_location(spec)}: {exc}") \
            from exc
    reference_info = {**suite.reference, "location": _reference_location(spec)}
    return replace(suite, reference=reference_info)


def _matches(suite: Suite, spec: MonitorSpec) -> bool:
    probe = build_probe(spec)
    return (
        suite.name == spec.name
        and suite.params == probe["params"]
        and {c: i["role"] for c, i in suite.columns.items()} == probe["roles"]
        and suite.reference.get("location") == probe["location"]
    )


def build_probe(spec: MonitorSpec) -> dict[str, Any]:
    """What a suite built for ``spec`` now would record (params, column roles, reference location)."""
    v = spec.validation
    c = spec.columns
    roles: dict[str, str] = {}
    for col in c.sensitive:
        roles.setdefault(col, "sensitive")
    for role, opt in (("label", c.label), ("decision", c.decision), ("score", c.score)):
        if opt is not None:
            roles.setdefault(opt, role)
    for col in c.features:
        roles.setdefault(col, "feature")
    for col in c.extra:
        roles.setdefault(col, "extra")
    params = {
        "min_rows": v.min_rows,
        "max_null_fraction": float(v.max_null_fraction),
        "range_margin": float(v.range_margin),
        "range_mostly": float(v.range_mostly),
        "check_types": v.check_types,
        "allow_unseen_categories": v.allow_unseen_categories,
        "require_all_groups": v.require_all_groups,
        "max_categories": v.max_categories,
    }
    return {"roles": roles, "params": params, "location": _reference_location(spec)}


def ensure_suite(
    spec: MonitorSpec,
    *,
    reference: pd.DataFrame | None = None,
    engine: Engine | str | None = None,
    rebuild: bool = False,
) -> Suite:
    """The monitor's suite: loaded from its suite path, or (re)built from the reference data and saved.

    >>> # spec = load_spec("monitors/demo.yaml"); ensure_suite(spec).revision  -> 1 on first use
    """
    if not spec.validation.enabled:
        raise ConfigError(ERR_DISABLED.format(name=spec.name))
    path = spec.suite_location
    old: Suite | None = load_suite(path) if _exists(path) else None
    if old is not None and not rebuild and _matches(old, spec):
        return old
    ref = reference if reference is not None else load_reference(spec, engine=engine)
    suite = suite_from_spec(ref, spec)
    if old is not None:
        if old.fingerprint == suite.fingerprint:
            return old
        base = path[:-5] if path.endswith(".json") else path
        save_suite(old, f"{base}.r{old.revision}.json")
        suite = replace(suite, revision=old.revision + 1, previous=old.fingerprint)
    save_suite(suite, path)
    return suite


def validate_window(
    spec: MonitorSpec,
    frame: pd.DataFrame,
    *,
    suite: Suite | None = None,
    engine: Engine | str | None = None,
) -> ValidationReport:
    """Validate a window's rows with the monitor's suite (see :func:`ensure_suite`).

    Returns a :class:`ValidationReport`; call ``.raise_for_failures()`` to turn a failure into
    :class:`~fairmon.errors.DataValidationError`.
    """
    suite = suite if suite is not None else ensure_suite(spec, engine=engine)
    report = validate(frame, suite)
    return replace(report, meta={"suite_path": os.fspath(spec.suite_location)})
