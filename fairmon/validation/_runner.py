"""Run a :class:`~fairmon.validation.Suite` on a window with Great Expectations 1.x.

A failing batch is a *result*, not an exception: :func:`validate` returns a :class:`ValidationReport`
(success flag, every failed expectation as a plain dict with its type, check, column, observed value,
expectation and a one-line message) so the pipeline can record ``data_invalid`` and alert;
:meth:`ValidationReport.raise_for_failures` turns it into a :class:`~fairmon.errors.DataValidationError`.

GX is imported lazily and its ephemeral context (one pandas data source, one whole-dataframe batch
definition) is created once per process and reused: importing GX takes seconds, a validation then
takes about 0.1 s for a 5,000-row window. GX analytics are switched off (``GX_ANALYTICS_ENABLED``) and
its progress bars too.

GX checks an ``object`` column's type one value at a time (a Python call per row: about two thirds of
validating a 1M-row window). A type expectation on a categorical or string column is decided here on
the column's distinct values instead, with the classes GX would accept (:func:`_types_pass`); only a
pass is decided that way, so a failing column is still checked, and reported, by GX.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairmon._codes import non_numbers
from fairmon.errors import FairmonError, ValidationEngineError
from fairmon.validation._report import ValidationReport, _json
from fairmon.validation._suite import Suite

__all__ = [
    "validate",
    "MSG_MISSING_COLUMN",
    "MSG_TYPE",
    "MSG_NULLS",
    "MSG_RANGE",
    "MSG_DOMAIN",
    "MSG_GROUPS",
    "MSG_ROWS",
    "MSG_ERROR",
    "ERR_ENGINE",
]

MSG_MISSING_COLUMN = "column {column!r} is missing"
MSG_TYPE = "column {column!r} has type {observed} (expected {kind})"
MSG_NULLS = "column {column!r} has {fraction:.1%} nulls (allowed {allowed:.1%})"
MSG_RANGE = "column {column!r}: {fraction:.1%} of values outside [{low:.6g}, {high:.6g}] (observed {obs_min} .. {obs_max})"
MSG_DOMAIN = "column {column!r} has values not in the reference data: {values}"
MSG_DOMAIN_TYPE = "column {column!r} is read as {dtype}: its values are the reference data's only as text"
MSG_GROUPS = (
    "column {column!r} is missing protected group(s) {groups} that the reference data has; a window without "
    "a rare group can still be measured for the groups it has: set validation.require_all_groups: false"
)
MSG_ROWS = "window has {rows} rows (at least {min_rows} required)"
MSG_ERROR = "{expectation} on column {column!r} could not be evaluated: {error}"
ERR_ENGINE = "Great Expectations could not run validation suite {suite!r}: {error}"

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}
_GX_SUITES: dict[str, Any] = {}


def _value_keys(values: Any) -> set[Any]:
    """Keys a value matches another by: its text, and its number when it is one (not a string: '02139' is
    not the zip code 2139, '1e3' not 1000)."""
    keys: set[Any] = set()
    for v in values:
        keys.add(("text", str(v)))
        if not isinstance(v, str):
            try:
                keys.add(("number", float(v)))
            except (TypeError, ValueError):
                pass
    return keys


def _batch_definition() -> Any:
    """The cached GX whole-dataframe batch definition (ephemeral context; created once per process)."""
    with _LOCK:
        bd = _STATE.get("batch_definition")
        if bd is None:
            os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
            import great_expectations as gx
            from great_expectations.data_context.types.base import ProgressBarsConfig
            from great_expectations.execution_engine import pandas_execution_engine

            # GX md5-hashes every batch below 1 GB (pandas.util.hash_pandas_object of every column, the index
            # too) for a ``pandas_data_fingerprint`` marker that fairmon never reads: ~40 % of a 1M-row
            # window's validation CPU. A threshold of 0 skips it, as GX itself does above 1 GB. Process-wide,
            # like the context; tests/validation checks the constant still exists.
            pandas_execution_engine.HASH_THRESHOLD = 0
            ctx = gx.get_context(mode="ephemeral")
            ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
            source = ctx.data_sources.add_pandas(name="fairmon")
            asset = source.add_dataframe_asset(name="window")
            bd = asset.add_batch_definition_whole_dataframe("whole")
            _STATE.update(context=ctx, batch_definition=bd, datasource=source)
        return bd


def _gx_suite(suite: Suite) -> Any:
    fp = suite.fingerprint
    with _LOCK:
        cached = _GX_SUITES.get(fp)
    if cached is None:
        cached = suite.to_gx()
        with _LOCK:
            if len(_GX_SUITES) > 32:
                _GX_SUITES.clear()
            _GX_SUITES[fp] = cached
    return cached


def _prepare(frame: pd.DataFrame) -> pd.DataFrame:
    """Text/categorical columns as ``object`` so GX checks each value's Python type (pandas 3's ``str``
    dtype is not matched by GX's type-list check)."""
    out = frame.copy(deep=False)
    for col in out.columns:
        dtype = out[col].dtype
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
            if not pd.api.types.is_object_dtype(dtype):
                out[col] = out[col].astype(object).where(out[col].notna(), None)
    return out


def _describe(exp: dict[str, Any], res: Any, frame: pd.DataFrame) -> dict[str, Any]:
    kw, meta = exp["kwargs"], exp["meta"]
    check, col = meta["check"], kw.get("column")
    result = dict(getattr(res, "result", None) or {})
    info = getattr(res, "exception_info", None) or {}
    raised, error = False, None
    if "raised_exception" in info:
        raised, error = bool(info.get("raised_exception")), info.get("exception_message")
    else:  # keyed by metric id when a metric failed
        for v in info.values():
            if isinstance(v, dict) and v.get("raised_exception"):
                raised, error = True, v.get("exception_message")
                break
    out: dict[str, Any] = {
        "expectation_type": exp["type"],
        "expectation": exp["type"],  # the key fairmon.alerts.render_data_validation reads
        "check": check,
        "column": col,
        "role": meta.get("role"),
    }
    s = frame[col] if col is not None and col in frame.columns else None
    if check == "column":
        out.update(observed="missing", expected="present", message=MSG_MISSING_COLUMN.format(column=col))
    elif raised or (check != "min_rows" and s is None):
        out.update(
            observed={"error": str(error or "not evaluated")},
            expected=None,
            message=MSG_ERROR.format(
                expectation=exp["type"],
                column=col,
                error=(str(error or "")).splitlines()[0] if error else "not evaluated",
            ),
        )
    elif check == "min_rows":
        rows = int(result.get("observed_value", len(frame)))
        out.update(observed=rows, expected={"min_rows": kw.get("min_value")})
        out["message"] = MSG_ROWS.format(rows=rows, min_rows=kw.get("min_value"))
    elif check == "type":
        observed = result.get("observed_value")
        kinds = {"str": "text", "bool": "boolean"}
        kind = kinds.get(kw["type_list"][0], "numeric")
        if observed is None:  # object column: GX lists the values of the wrong type
            bad = result.get("partial_unexpected_list") or []
            observed = f"{s.dtype if s is not None else '?'} with values like {sorted({repr(v) for v in bad})[:5]}"
            if kind == "numeric" and s is not None:  # the values that are not numbers, not the ones that are
                text = non_numbers(s)
                if len(text):
                    observed = (f"{s.dtype} with {len(text)} value(s) that are not numbers, e.g. "
                                f"{[_json(v) for v in text.unique()[:5]]}")
        out.update(observed=str(observed), expected={"kind": kind})
        out["message"] = MSG_TYPE.format(column=col, observed=observed, kind=kind)
    elif check == "nulls":
        assert s is not None
        frac = float(s.isna().mean()) if len(s) else 0.0
        allowed = 1.0 - float(kw.get("mostly", 1.0))
        out.update(
            observed={"null_fraction": frac, "null_count": int(s.isna().sum())},
            expected={"max_null_fraction": allowed},
        )
        out["message"] = MSG_NULLS.format(column=col, fraction=frac, allowed=allowed)
    elif check == "range":
        assert s is not None
        num = pd.to_numeric(s, errors="coerce")
        frac = float(result.get("unexpected_percent", 0.0) or 0.0) / 100.0
        obs_min, obs_max = _json(num.min()), _json(num.max())
        out.update(
            observed={"min": obs_min, "max": obs_max, "outside_fraction": frac},
            expected={"min": kw["min_value"], "max": kw["max_value"], "mostly": kw.get("mostly", 1.0)},
        )
        out["message"] = MSG_RANGE.format(
            column=col,
            fraction=frac,
            low=kw["min_value"],
            high=kw["max_value"],
            obs_min=obs_min,
            obs_max=obs_max,
        )
    elif check == "domain":
        assert s is not None
        # a value is the reference's when it equals one as stored, as text or as a number: a CSV label
        # column holding one word is read as text ('0' is the reference's 0), one with a gap as floats
        # (1.0 is 1); naming those as unseen would hide the value that is
        known = _value_keys(kw["value_set"])
        unseen = sorted({_json(v) for v in s.dropna().unique() if not _value_keys([_json(v)]) & known}, key=str)
        out.update(
            observed={
                "unseen": unseen[:20],
                "unseen_count": len(unseen),
                "unexpected_count": result.get("unexpected_count"),
            },
            expected={"values": kw["value_set"][:50]},
        )
        out["message"] = (MSG_DOMAIN.format(column=col, values=unseen[:10]) if unseen
                          else MSG_DOMAIN_TYPE.format(column=col, dtype=s.dtype))
    elif check == "groups":
        assert s is not None
        present = {_json(v) for v in s.dropna().unique()}
        missing = [v for v in kw["value_set"] if v not in present]
        out.update(
            observed={"missing_groups": missing, "present": sorted(present, key=str)[:50]},
            expected={"groups": kw["value_set"]},
        )
        out["message"] = MSG_GROUPS.format(column=col, groups=missing)
    else:  # pragma: no cover - every check built by build_suite is handled above
        out.update(
            observed=result.get("observed_value"), expected=kw, message=f"{exp['type']} failed on {col!r}"
        )
    described: dict[str, Any] = _json(out)
    return described


def validate(frame: pd.DataFrame, suite: Suite) -> ValidationReport:
    """Validate one window with Great Expectations; a failing window is a result, not an exception.

    Parameters
    ----------
    frame : DataFrame
        The window's rows (extra columns are ignored).
    suite : Suite
        From :func:`~fairmon.validation.build_suite` or :func:`~fairmon.validation.load_suite`.

    Returns
    -------
    ValidationReport

    Examples
    --------
    >>> import pandas as pd
    >>> from fairmon.validation import build_suite
    >>> ref = pd.DataFrame({"age": [20, 40, 60, 30], "sex": ["f", "m", "f", "m"]})
    >>> suite = build_suite(ref, features=["age"], sensitive=["sex"], min_rows=2)
    >>> validate(ref, suite).success
    True
    >>> validate(ref.assign(sex=["f", "f", "f", "f"]), suite).failed_checks
    [('groups', 'sex')]
    """
    t0 = time.perf_counter()
    gx_suite = _gx_suite(suite)  # a suite GX rejects → ConfigError
    prepared = _prepare(frame)
    try:
        by_key = _run_gx(gx_suite, suite, prepared, frame)
    except FairmonError:
        raise
    except Exception as exc:  # noqa: BLE001 - any GX/pandas failure inside GX → one library-boundary error
        raise ValidationEngineError(ERR_ENGINE.format(suite=suite.name, error=f"{type(exc).__name__}: {exc}")) from exc
    results, failed = [], []
    missing_cols = set()
    for exp in suite.expectations:
        res = by_key.get(_key(exp["type"], exp["kwargs"]))
        ok = _ok(res)
        col = exp["kwargs"].get("column")
        results.append(
            {"expectation_type": exp["type"], "check": exp["meta"]["check"], "column": col, "success": ok}
        )
        if not ok:
            if exp["meta"]["check"] == "column":
                missing_cols.add(col)
            failed.append((exp, res))
    described = [
        _describe(exp, res, prepared)
        for exp, res in failed
        if exp["meta"]["check"] == "column" or exp["kwargs"].get("column") not in missing_cols
    ]
    # a column of the wrong type makes its range/domain checks error out: report the type failure only
    wrong_type = {d["column"] for d in described if d["check"] == "type"}
    described = [
        d
        for d in described
        if not (d["column"] in wrong_type and d["check"] != "type" and "error" in (d.get("observed") or {}))
    ]
    return ValidationReport(
        success=not failed,
        n_rows=int(len(frame)),
        failed=described,
        results=_json(results),
        suite_name=suite.name,
        suite_fingerprint=suite.fingerprint,
        suite_revision=suite.revision,
        seconds=time.perf_counter() - t0,
    )


@dataclass(frozen=True)
class _Passed:
    """The result of a type expectation decided without GX (it passed: see :func:`_types_pass`)."""

    success: bool = True


def _gx_type_classes(type_list: Sequence[str]) -> tuple[type, ...]:
    """The classes GX's pandas ``column_values.in_type_list`` metric accepts for ``type_list`` (the same
    resolution as that metric: numpy dtype, pandas type, native Python type)."""
    from great_expectations.expectations.type_comparison import native_type_type_map

    classes: list[type] = []
    for name in type_list:
        try:
            classes.append(np.dtype(name).type)
        except TypeError:
            for holder in (pd, pd.core.dtypes.dtypes):
                found = getattr(holder, name, None)
                if isinstance(found, type):
                    classes.append(found)
        classes.extend(native_type_type_map(name) or ())
    return tuple(classes)


def _types_pass(exp: dict[str, Any], frame: pd.DataFrame) -> bool:
    """Whether a type expectation on a text or categorical column of ``frame`` passes, decided on the
    column's distinct values instead of GX's per-row check (GX checks every non-null value's Python
    type; a categorical's non-null values are its observed categories, a string column's are ``str``).

    False means "not decided here": GX then checks the column as before (a failure keeps GX's
    message, values and counts), as it does for a ``mostly`` setting or a column without values.
    """
    kw = exp["kwargs"]
    col, type_list = kw.get("column"), kw.get("type_list")
    if (exp["type"] != "expect_column_values_to_be_in_type_list" or kw.get("mostly") is not None
            or not type_list or col not in frame.columns):
        return False
    s = frame[col]
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        values = list(s.cat.categories.astype(object)[np.unique(codes[codes >= 0])])
    elif isinstance(s.dtype, pd.StringDtype):
        values = [""] if s.notna().any() else []
    else:
        return False
    classes = _gx_type_classes(type_list)
    return bool(values) and bool(classes) and all(isinstance(v, classes) for v in values)


def _run_gx(gx_suite: Any, suite: Suite, prepared: pd.DataFrame, frame: pd.DataFrame | None = None) -> dict[str, Any]:
    """GX results by expectation key: pass/fail of every expectation, details for the failed ones.

    ``frame`` (the window before :func:`_prepare`): type expectations that :func:`_types_pass` decides
    there are left out of GX's run (its per-row check costs seconds per million rows and column).
    """
    by_key: dict[str, Any] = {}
    decided = [e for e in suite.expectations if frame is not None and _types_pass(e, frame)]
    for e in decided:
        by_key[_key(e["type"], e["kwargs"])] = _Passed()
    if decided:
        rest = tuple(e for e in suite.expectations if e not in decided)
        gx_suite = _gx_suite(Suite(name=suite.name + "-gx", expectations=rest, columns=suite.columns, params={}))
    batch = _batch_definition().get_batch(batch_parameters={"dataframe": prepared})
    try:
        # pass/fail only first (GX's per-expectation overhead dominates; details cost ~30% more), then
        # the details for the failed expectations alone
        for res in batch.validate(gx_suite, result_format="BOOLEAN_ONLY").results:
            cfg = res.expectation_config
            by_key[_key(cfg.type, cfg.kwargs)] = res
        failing = [e for e in suite.expectations if not _ok(by_key.get(_key(e["type"], e["kwargs"])))]
        if failing:
            sub = Suite(
                name=suite.name + "-failed", expectations=tuple(failing), columns=suite.columns, params={}
            )
            for res in batch.validate(sub.to_gx(), result_format="SUMMARY").results:
                cfg = res.expectation_config
                by_key[_key(cfg.type, cfg.kwargs)] = res
    finally:
        _forget_batches()
    return by_key


def _forget_batches() -> None:
    """Drop the batches GX's execution engine keeps loaded after a validation (the window's prepared
    frame, its text columns as Python objects: 45 MB of a 1M-row demo window), which would otherwise stay
    resident through the window's later steps until the next validation replaces them."""
    source = _STATE.get("datasource")
    if source is None:
        return
    manager = source.get_execution_engine().batch_manager
    manager.batch_data_cache.clear()
    manager.reset_batch_cache()


def _ok(res: Any) -> bool:
    return bool(res.success) if res is not None else False


def _key(etype: str, kwargs: Any) -> str:
    kw = {k: v for k, v in dict(kwargs).items() if k not in ("batch_id", "result_format", "catch_exceptions")}
    return etype + "|" + repr(sorted((k, _json(v)) for k, v in kw.items()))
