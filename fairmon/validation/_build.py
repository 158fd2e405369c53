"""Deriving a validation suite from reference data: what every later window must satisfy.

What :func:`build_suite` expects of every window (each expectation's ``meta.check`` names the rule):

==============  ============================================================================================
``min_rows``    at least ``min_rows`` rows (``expect_table_row_count_to_be_between``)
``column``      every declared column exists (features, extra, sensitive, label, decision, score)
``type``        the reference dtype family: numeric, boolean or text (text columns are cast to ``object``
                before validation, so GX checks each value is a ``str``)
``nulls``       sensitive attributes: no nulls; the label: not checked (labels arrive late); every other
                column: at most ``max_null_fraction`` nulls
``range``       numeric columns: ``[min - m*span, max + m*span]`` of the reference (``m = range_margin``,
                ``span = max - min``, or ``max(|max|, 1)`` for a constant column; the lower bound
                stays at 0 when the reference has no negative values) for at least ``range_mostly``
                of the values
``domain``      categorical columns (text/boolean; numeric sensitive/label/decision columns with at most
                ``max_categories`` values): only reference values; features/extra may be exempted with
                ``allow_unseen_categories``; columns with more than ``max_categories`` values are skipped
``groups``      every protected group of the reference appears in the window
                (``expect_column_distinct_values_to_contain_set``; off with ``require_all_groups=False``)
==============  ============================================================================================

Example
-------
>>> import pandas as pd
>>> ref = pd.DataFrame({"age": [20, 40, 60], "sex": ["f", "m", "f"], "y": [0, 1, 1]})
>>> suite = build_suite(ref, features=["age", "sex"], sensitive=["sex"], label="y", min_rows=2)
>>> [e["meta"]["check"] for e in suite.expectations][:4]
['min_rows', 'column', 'type', 'nulls']
>>> Suite.from_dict(suite.to_dict()) == suite
True
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import DatasetError
from fairmon.validation._suite import (
    BOOL_TYPES,
    ERR_EMPTY_REFERENCE,
    ERR_REFERENCE_COLUMNS,
    NUMERIC_TYPES,
    TEXT_TYPES,
    Kind,
    Role,
    Suite,
    _canonical,
)

__all__ = ["build_suite", "column_kind"]


def column_kind(series: pd.Series) -> Kind:
    """The dtype family of a reference column: ``numeric``, ``bool``, ``datetime`` or ``text``.

    Examples
    --------
    >>> column_kind(pd.Series([1.0])), column_kind(pd.Series(["a"])), column_kind(pd.Series([True]))
    ('numeric', 'text', 'bool')
    """
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "text"


def _py(value: Any) -> Any:
    """A numpy/pandas scalar as a plain JSON-able Python value."""
    return value.item() if isinstance(value, np.generic) else value


def _sorted_values(values: Sequence[Any]) -> list[Any]:
    return sorted((_py(v) for v in values), key=lambda v: (type(v).__name__, str(v)))


def _expectation(
    etype: str, check: str, column: str | None, role: str | None, **kwargs: Any
) -> dict[str, Any]:
    kw = {"column": column, **kwargs} if column is not None else dict(kwargs)
    meta = {"check": check}
    if role is not None:
        meta["role"] = role
    return {"type": etype, "kwargs": kw, "meta": meta}


def _frame_sha256(frame: pd.DataFrame) -> str:
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    h = hashlib.sha256(hashed.tobytes())
    h.update(_canonical([str(c) for c in frame.columns]).encode())
    return h.hexdigest()


def build_suite(
    reference: pd.DataFrame,
    *,
    features: Sequence[str],
    sensitive: Sequence[str],
    label: str | None = None,
    decision: str | None = None,
    score: str | None = None,
    extra: Sequence[str] = (),
    min_rows: int = 100,
    max_null_fraction: float = 0.05,
    range_margin: float = 0.1,
    range_mostly: float = 0.99,
    check_types: bool = True,
    allow_unseen_categories: bool = False,
    require_all_groups: bool = True,
    max_categories: int = 50,
    name: str = "fairmon",
) -> Suite:
    """Derive the expectations every window must meet from reference data (see the module table).

    Parameters
    ----------
    reference : DataFrame
        Data the model is known to work on (e.g. its training data or a vetted window).
    features, sensitive, label, decision, score, extra
        Column roles, as in the monitor spec's ``columns`` section.
    min_rows, max_null_fraction, range_margin, range_mostly, check_types, allow_unseen_categories,
    require_all_groups, max_categories
        As in the spec's ``validation`` section (:class:`fairmon.config.ValidationSpec`).
    name : str
        Suite name (the monitor's name).

    Returns
    -------
    Suite

    Raises
    ------
    DatasetError
        Empty reference data, or a declared column missing from it.

    Examples
    --------
    >>> ref = pd.DataFrame({"age": [20, 40, 60], "sex": ["f", "m", "f"], "y": [0, 1, 1]})
    >>> suite = build_suite(ref, features=["age", "sex"], sensitive=["sex"], label="y", min_rows=2)
    >>> sorted({e["meta"]["check"] for e in suite.expectations})
    ['column', 'domain', 'groups', 'min_rows', 'nulls', 'range', 'type']
    """
    if len(reference) == 0:
        raise DatasetError(ERR_EMPTY_REFERENCE)
    roles: dict[str, Role] = {}
    for col in sensitive:
        roles.setdefault(col, "sensitive")
    for role, opt in (("label", label), ("decision", decision), ("score", score)):
        if opt is not None:
            roles.setdefault(opt, role)  # type: ignore[arg-type]
    for col in features:
        roles.setdefault(col, "feature")
    for col in extra:
        roles.setdefault(col, "extra")
    missing = [c for c in roles if c not in reference.columns]
    if missing:
        raise DatasetError(
            ERR_REFERENCE_COLUMNS.format(cols=missing, have=[str(c) for c in reference.columns])
        )

    params = {
        "min_rows": int(min_rows),
        "max_null_fraction": float(max_null_fraction),
        "range_margin": float(range_margin),
        "range_mostly": float(range_mostly),
        "check_types": bool(check_types),
        "allow_unseen_categories": bool(allow_unseen_categories),
        "require_all_groups": bool(require_all_groups),
        "max_categories": int(max_categories),
    }
    exps: list[dict[str, Any]] = []
    if min_rows > 0:
        exps.append(
            _expectation(
                "expect_table_row_count_to_be_between", "min_rows", None, None, min_value=int(min_rows)
            )
        )
    columns: dict[str, dict[str, str]] = {}
    for col, role in roles.items():
        s = reference[col]
        kind = column_kind(s)
        columns[col] = {"role": role, "kind": kind}
        exps.append(_expectation("expect_column_to_exist", "column", col, role))
        if check_types and kind != "datetime":
            types = {"numeric": NUMERIC_TYPES, "bool": BOOL_TYPES, "text": TEXT_TYPES}[kind]
            exps.append(
                _expectation(
                    "expect_column_values_to_be_in_type_list", "type", col, role, type_list=list(types)
                )
            )
        if role == "sensitive":
            exps.append(_expectation("expect_column_values_to_not_be_null", "nulls", col, role))
        elif role != "label" and max_null_fraction < 1.0:
            mostly = round(1.0 - float(max_null_fraction), 12)
            kw = {"mostly": mostly} if mostly < 1.0 else {}
            exps.append(_expectation("expect_column_values_to_not_be_null", "nulls", col, role, **kw))
        values = s.dropna().unique()
        categorical = kind in ("text", "bool") or (
            kind == "numeric" and role in ("sensitive", "label", "decision") and len(values) <= max_categories
        )
        if categorical:
            if len(values) <= max_categories and len(values) > 0:
                value_set = _sorted_values(list(values))
                if not (allow_unseen_categories and role in ("feature", "extra")):
                    exps.append(
                        _expectation(
                            "expect_column_values_to_be_in_set", "domain", col, role, value_set=value_set
                        )
                    )
                if role == "sensitive" and require_all_groups:
                    exps.append(
                        _expectation(
                            "expect_column_distinct_values_to_contain_set",
                            "groups",
                            col,
                            role,
                            value_set=value_set,
                        )
                    )
        elif kind == "numeric" and len(values) > 0:
            lo, hi = float(np.nanmin(values.astype(float))), float(np.nanmax(values.astype(float)))
            span = hi - lo if hi > lo else max(abs(hi), 1.0)
            low = lo - range_margin * span
            kw = {"min_value": max(low, 0.0) if lo >= 0 else low, "max_value": hi + range_margin * span}
            if range_mostly < 1.0:
                kw["mostly"] = float(range_mostly)
            if all(math.isfinite(v) for v in (kw["min_value"], kw["max_value"])):
                exps.append(_expectation("expect_column_values_to_be_between", "range", col, role, **kw))
    ref_info = {"rows": int(len(reference)), "sha256": _frame_sha256(reference[list(roles)])}
    return Suite(name=name, expectations=tuple(exps), columns=columns, params=params, reference=ref_info)
