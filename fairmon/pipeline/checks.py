"""Checks of a window's data against its spec that hold whether or not a validation suite runs.

Why a module of its own: without these, a window whose data cannot mean what the spec says is either
computed into a pandas traceback (a missing column) or, worse, stored as plausible numbers — a
favorable class the model never predicts reads as "everyone unfavored, perfectly fair"; a continuous
column used as a protected attribute makes every distinct value its own tiny group. Each check raises
one :class:`~fairmon.errors.FairmonError` naming the window, the column or field and the values seen.

- :func:`check_columns`: every column the spec names is present (:class:`SchemaError`).
- :func:`check_sensitive_categorical`: a numeric protected attribute has at most
  :data:`MAX_SENSITIVE_VALUES` distinct values in the window (:class:`ConfigError`).
- :func:`check_favorable_value`: the favorable value of a decision or label column occurs in it, unless
  the column holds a single value (a window where everyone is unfavored is legitimate)
  (:class:`ConfigError`).
- :func:`check_favorable_class`: ``favorable.class`` is one of the classes a model (or the 0.5 rule on a
  logged score) predicts (:class:`ConfigError`).

What later steps cannot handle is a *data* problem, not a pipeline error: :func:`model_input_failures`
(±inf in a numeric column the spec names; nulls in a feature the model scores, unless its feature
schema encodes missing values) and :func:`source_failure` (a missing, empty or unreadable window file)
return failed expectations in the validation report's format, so the window is ``data_invalid`` with
one data alert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon._codes import non_numbers
from fairmon.config import MonitorSpec
from fairmon.config._columns import Favorable
from fairmon.errors import ConfigError, DatasetError, SchemaError
from fairmon.schema import MISSING_CATEGORY, FeatureSchema

__all__ = [
    "MAX_SENSITIVE_VALUES",
    "column_roles",
    "check_columns",
    "check_sensitive_categorical",
    "check_favorable_value",
    "check_favorable_class",
    "favorable_value_eq",
    "favorable_from_scores",
    "model_input_failures",
    "source_failure",
    "MSG_NON_FINITE",
    "MSG_MODEL_NULLS",
    "ERR_MISSING_COLUMNS",
    "ERR_SENSITIVE_CONTINUOUS",
    "ERR_FAVORABLE_ABSENT",
    "ERR_FAVORABLE_CLASS",
]

#: most distinct values a numeric protected attribute may take in one window; more means a continuous
#: column (income, age in years) whose every value would become its own group of a handful of rows
MAX_SENSITIVE_VALUES = 20
#: how many distinct values an error message lists
_SHOW_VALUES = 10

ERR_MISSING_COLUMNS = "window data for {monitor} {window} ({origin}) lacks column(s) {cols}; it has {have}"
ERR_SENSITIVE_CONTINUOUS = (
    "sensitive column {col!r} has {n} distinct numeric values in window {monitor} {window} (at most {max} "
    "allowed); protected attributes must be categorical: bin it in the data query or the data (e.g. age "
    "bands), or remove it from columns.sensitive"
)
ERR_FAVORABLE_ABSENT = "{what} column {col!r} has no value equal to {field} {value!r} (values {values})"
MSG_NON_FINITE = "column {column!r} has {count} infinite value(s) (±inf); numbers must be finite"
MSG_NOT_A_CLASS = ("{what} column {column!r} has {count} value(s) that are not numbers, e.g. {values}, while its "
                   "favorable value {field} is the number {value!r}: such a row would count as unfavorable")
MSG_MODEL_NULLS = (
    "model feature {column!r} has {count} null(s) and the model's feature schema does not encode missing "
    "values for it"
)
ERR_FAVORABLE_CLASS = "favorable.class {value!r} is not a class of {what} (classes {classes})"


def column_roles(spec: MonitorSpec) -> dict[str, list[str]]:
    """Every column the spec names → the ``columns.*`` fields naming it (in the spec's order)."""
    c = spec.columns
    roles: dict[str, list[str]] = {}
    for field in ("features", "extra", "sensitive"):
        for col in getattr(c, field):
            roles.setdefault(col, []).append(f"columns.{field}")
    for field in ("label", "decision", "score"):
        col = getattr(c, field)
        if col is not None:
            roles.setdefault(col, []).append(f"columns.{field}")
    return roles


def check_columns(spec: MonitorSpec, frame: pd.DataFrame, *, window: str, origin: str) -> None:
    """Raise :class:`SchemaError` naming the window, its source and every column the spec needs but the
    data lacks (with the fields that name it)."""
    missing = {col: fields for col, fields in column_roles(spec).items() if col not in frame.columns}
    if missing:
        cols = ", ".join(f"{col!r} ({', '.join(fields)})" for col, fields in missing.items())
        raise SchemaError(
            ERR_MISSING_COLUMNS.format(
                monitor=spec.name, window=window, origin=origin, cols=cols, have=[str(c) for c in frame.columns]
            )
        )


def check_sensitive_categorical(spec: MonitorSpec, frame: pd.DataFrame, *, window: str) -> None:
    """Raise :class:`ConfigError` for a numeric (not bool) protected attribute with more than
    :data:`MAX_SENSITIVE_VALUES` distinct values in the window."""
    for col in spec.columns.sensitive:
        s = frame[col]
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            continue
        n = int(s.nunique(dropna=True))
        if n > MAX_SENSITIVE_VALUES:
            raise ConfigError(
                ERR_SENSITIVE_CONTINUOUS.format(col=col, n=n, monitor=spec.name, window=window, max=MAX_SENSITIVE_VALUES)
            )


def favorable_value_eq(values: Any, favorable: Any) -> np.ndarray:
    """Elementwise ``values == favorable`` (1.0/0.0, NaN where missing) comparing numbers as numbers and
    anything else as text."""
    s = pd.Series(values)
    if isinstance(favorable, bool | int | float) and pd.api.types.is_numeric_dtype(s):
        out = s.to_numpy(dtype=float) == float(favorable)
    else:
        out = s.astype(str).to_numpy() == str(favorable)
    result: np.ndarray = np.asarray(out, dtype=float)
    result[s.isna().to_numpy()] = np.nan
    return result


def favorable_from_scores(fav: Favorable, score: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """The predict step's favourable rule: the spec's ``score_threshold`` (and ``direction``) on P(class 1)
    when set (NaN where the score is missing), else the favourable class among the 0/1 labels ``pred``.

    Examples
    --------
    >>> from fairmon.config._columns import Favorable
    >>> score = np.array([0.2, 0.7, np.nan])
    >>> favorable_from_scores(Favorable(score_threshold=0.5), score, np.array([0, 1, 0]))
    array([ 0.,  1., nan])
    >>> favorable_from_scores(Favorable(**{"class": 0}), score, np.array([0, 1, 0]))
    array([1., 0., 1.])
    """
    if fav.score_threshold is not None:
        out = (score >= fav.score_threshold) if fav.direction == "above" else (score <= fav.score_threshold)
        res: np.ndarray = out.astype(float)
        res[np.isnan(score)] = np.nan
        return res
    return favorable_value_eq(pred, fav.class_)


def _shown(values: Sequence[Any]) -> str:
    vals = sorted((v.item() if hasattr(v, "item") else v for v in values), key=lambda v: (str(type(v)), v))
    more = f" and {len(vals) - _SHOW_VALUES} more" if len(vals) > _SHOW_VALUES else ""
    return f"{vals[:_SHOW_VALUES]}{more}"


def check_favorable_value(column: pd.Series, favorable: Any, *, what: str, field: str) -> None:
    """Raise :class:`ConfigError` when ``column`` has two or more distinct non-missing values and none of
    them equals ``favorable`` (so it cannot be the column's favorable value).

    A column holding one value only, or only missing values, passes: a window in which every decision
    (or label) is unfavorable is real data, not a misconfiguration.
    """
    distinct = column.dropna().unique()
    if len(distinct) < 2:
        return
    if not np.nansum(favorable_value_eq(column, favorable)) > 0:
        raise ConfigError(
            ERR_FAVORABLE_ABSENT.format(what=what, col=column.name, field=field, value=favorable, values=_shown(distinct))
        )


def check_favorable_class(favorable: Any, classes: Sequence[Any], *, what: str) -> None:
    """Raise :class:`ConfigError` when ``favorable`` equals none of ``classes`` (what a model predicts)."""
    if not np.nansum(favorable_value_eq(np.asarray(classes), favorable)) > 0:
        raise ConfigError(ERR_FAVORABLE_CLASS.format(value=favorable, what=what, classes=list(classes)))


def _failure(check: str, column: str | None, message: str, **extra: Any) -> dict[str, Any]:
    return {"expectation_type": f"fairmon_{check}", "expectation": f"fairmon_{check}", "check": check,
            "column": column, "message": message, **extra}


def _handles_nulls(schema: FeatureSchema | None, column: str) -> bool:
    """Whether the model's schema encodes missing values of ``column`` (a categorical with a ``<NA>`` level)."""
    if schema is None or column not in schema.names:
        return False
    col = schema.column(column)
    return col.kind == "categorical" and MISSING_CATEGORY in col.categories


def model_input_failures(
    spec: MonitorSpec, frame: pd.DataFrame, *, schema: FeatureSchema | None, scored: bool
) -> list[dict[str, Any]]:
    """What the model and the metrics cannot take, as failed expectations (empty: fine).

    - ``finite``: a numeric column the spec names holds ±inf (it passes a range rule with ``mostly``
      and breaks scoring and the metrics).
    - ``class_values``: the label (or decision) column's favorable value is a number and the column
      holds words (a stray ``yes`` among 0/1 labels would silently count as unfavorable).
    - ``model_nulls``: with ``scored`` (the monitor scores the model), a feature holds nulls and the
      model's ``schema`` does not encode missing values for it.

    Examples
    --------
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a", "s"], "sensitive": ["s"]}, "schedule": {"start_date": "2026-01-01"}})
    >>> frame = pd.DataFrame({"a": [1.0, float("inf"), None], "s": ["x", "y", "x"]})
    >>> [f["check"] for f in model_input_failures(spec, frame, schema=None, scored=True)]
    ['finite', 'model_nulls']
    """
    failed: list[dict[str, Any]] = []
    for col in column_roles(spec):
        if col not in frame.columns:
            continue
        s = frame[col]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            n_inf = int(np.isinf(s.to_numpy(dtype=float)).sum())
            if n_inf:
                failed.append(_failure("finite", col, MSG_NON_FINITE.format(column=col, count=n_inf),
                                       observed=f"{n_inf} infinite", expected="finite"))
    for col, what, value, field in _class_columns(spec):
        if col in frame.columns:
            words = non_numbers(frame[col])
            if len(words):
                failed.append(_failure("class_values", col, MSG_NOT_A_CLASS.format(
                    what=what, column=col, count=len(words), values=_shown(words.unique()[:5]), field=field,
                    value=value), observed=f"{len(words)} not numbers", expected="numbers"))
    if scored:
        for col in spec.columns.features:
            if col not in frame.columns:
                continue
            n_null = int(frame[col].isna().sum())
            if n_null and not _handles_nulls(schema, col):
                failed.append(_failure("model_nulls", col, MSG_MODEL_NULLS.format(column=col, count=n_null),
                                       observed=f"{n_null} null", expected="no nulls"))
    return failed


def _class_columns(spec: MonitorSpec) -> list[tuple[str, str, Any, str]]:
    """(column, role, favorable value, its field) of the label and decision columns whose favorable
    value is a number: their other values must be numbers too (a class named by a word, e.g. ``">50K"``,
    lets the column hold any value: every other one is unfavorable)."""
    fav, cols = spec.favorable, spec.columns
    out = []
    for col, what, value, field in ((cols.label, "label", fav.label_value, "favorable.label_class"),
                                    (cols.decision, "decision", fav.class_, "favorable.class")):
        if col is not None and value is not None and isinstance(value, int | float) and not isinstance(value, bool):
            out.append((col, what, value, field))
    return out


def source_failure(exc: DatasetError) -> dict[str, Any] | None:
    """The failed expectation of a window source problem that is the data's (missing, empty or
    unreadable file; a query with no rows), None for other errors (an outage, a missing extra).

    >>> source_failure(DatasetError("boom")) is None
    True
    """
    check = getattr(exc, "data_problem", None)
    if check is None:
        return None
    return _failure(str(check), None, str(exc), observed=str(check), expected="a readable window with rows")
