"""The window's rows in memory: only the columns the monitor reads, text as categorical codes.

A 1M-row window of the demo spec held its six text columns as one string per row (about 320 MB of
the window's 470 MB once pulled), and a 10M-row one would not fit a worker. :func:`window_columns`
names the columns the pull step reads (the source projects them: Parquet columns, CSV ``usecols``, a
SQL select list) and :func:`as_categories` stores text columns as :class:`pandas.Categorical` (one
small integer per row, each distinct text once). Every step sees the same values: a category is the
text it codes, missing values stay missing, and the schema, outcome groups, rules and validation all
read a categorical column as its texts; a model reading raw columns gets them back as text
(:func:`as_texts`). :func:`predict_proba` scores the window in chunks, so its encoded matrix never
exists whole.

Examples
--------
>>> import pandas as pd
>>> frame = as_categories(pd.DataFrame({"sex": ["f", "m", None], "age": [30, 40, 50]}))
>>> str(frame["sex"].dtype), frame["sex"].tolist()[:2], bool(frame["sex"].isna().iloc[2])
('category', ['f', 'm'], True)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairmon._codes import TEXT_CATEGORIES  # the attrs key naming the text columns held as categoricals
from fairmon.config import MonitorSpec
from fairmon.errors import FairmonError, SchemaError
from fairmon.sources import file_exists
from fairmon.validation import load_suite

if TYPE_CHECKING:
    from fairmon.registry.model import Model

__all__ = ["window_columns", "as_categories", "as_texts", "predict_proba", "predict", "release_freed_memory", "reuse_freed_memory", "TEXT_CATEGORIES", "PREDICT_CHUNK_ROWS"]

log = logging.getLogger(__name__)

#: rows scored at a time by :func:`predict_proba`
PREDICT_CHUNK_ROWS = 200_000


#: the expectation kwargs that name columns (single, pair and list expectations of Great Expectations)
_COLUMN_KWARGS = ("column", "column_A", "column_B")
_COLUMN_LIST_KWARGS = ("column_list", "column_set")


def _expectation_columns(kwargs: dict[str, Any]) -> list[str]:
    """Every column one stored expectation names (``column``, ``column_A``/``column_B``, ``column_list``).

    >>> _expectation_columns({"column_A": "a", "column_B": "b"}), _expectation_columns({"column_list": ["x", "y"]})
    (['a', 'b'], ['x', 'y'])
    """
    names = [str(kwargs[k]) for k in _COLUMN_KWARGS if kwargs.get(k) is not None]
    for k in _COLUMN_LIST_KWARGS:
        names += [str(c) for c in kwargs.get(k) or ()]
    return names


def window_columns(spec: MonitorSpec) -> list[str] | None:
    """The columns of the window the monitor reads: the spec's columns (features, extra, sensitive,
    label, decision, score, RUMIE's attributes) and every column its stored validation suite names.

    None (read every column) when the stored suite cannot be read: the validate step then reports it.

    Examples
    --------
    >>> from fairmon.config import MonitorSpec
    >>> from fairmon.config._monitor import EXAMPLE
    >>> spec = MonitorSpec.model_validate({**EXAMPLE, "validation": {"enabled": False}})
    >>> window_columns(spec) == list(dict.fromkeys([*spec.columns.all, *spec.columns.sensitive]))
    True
    """
    c = spec.columns
    cols = [*c.all, *c.sensitive, *spec.rumie_attributes]
    if spec.validation.enabled:
        try:
            path = spec.suite_location
            if file_exists(path):
                suite = load_suite(path)
                cols += [str(k) for k in suite.columns]
                for e in suite.expectations:
                    cols += _expectation_columns(e.get("kwargs") or {})
        except (FairmonError, OSError, ValueError, KeyError, TypeError) as exc:
            log.info("%s: validation suite not read (%s); the window is read whole", spec.name, exc)
            return None
    return list(dict.fromkeys(cols))


def as_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text column (pandas' string dtype, or ``object`` holding only ``str``) as
    a categorical of the same texts; other columns (numbers, bools, mixed objects) unchanged.

    Examples
    --------
    >>> out = as_categories(pd.DataFrame({"a": pd.Series(["x", 1], dtype=object), "b": ["u", "v"]}))
    >>> str(out["a"].dtype), str(out["b"].dtype)
    ('object', 'category')
    """
    out = frame.copy(deep=False)
    converted: dict[str, str] = {}
    for col in out.columns:
        s = out[col]
        dtype = s.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            continue
        if isinstance(dtype, pd.StringDtype) or (
            pd.api.types.is_object_dtype(dtype) and pd.api.types.infer_dtype(s, skipna=True) == "string"
        ):
            out[col] = s.astype("category")
            converted[str(col)] = "str" if isinstance(dtype, pd.StringDtype) else "object"
    if converted:
        out.attrs[TEXT_CATEGORIES] = {**out.attrs.get(TEXT_CATEGORIES, {}), **converted}
    return out


def as_texts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the columns :func:`as_categories` made categorical back in their text dtype
    (the frame's ``attrs`` remember them; Parquet artifacts keep ``attrs``): what a model that reads
    raw columns (``input: raw``) was given before, so a pipeline that selects columns by dtype sees
    the same dtypes.

    Examples
    --------
    >>> frame = as_categories(pd.DataFrame({"sex": pd.Series(["f", "m"], dtype=object)}))
    >>> str(as_texts(frame)["sex"].dtype)
    'object'
    """
    kinds = frame.attrs.get(TEXT_CATEGORIES) or {}
    todo = [c for c in frame.columns if str(c) in kinds and isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if not todo:
        return frame
    out = frame.copy(deep=False)
    for col in todo:
        s = out[col]
        if kinds[str(col)] == "str":
            out[col] = s.astype("str")
        else:
            out[col] = s.astype(object).where(s.notna(), None)
    return out


def predict_proba(model: Model, X: pd.DataFrame, *, chunk_rows: int = PREDICT_CHUNK_ROWS) -> np.ndarray:
    """``model.predict_proba`` of the window's rows, ``chunk_rows`` rows at a time.

    The encoded matrix (and a scikit-learn pipeline's own intermediate arrays) then exist for one
    chunk at a time, not for the whole window; the probabilities are the same (every model scores a
    row on its own). A chunk the model's schema refuses (an unseen category, a missing value) makes
    the whole window be scored at once, so the error names what the window holds, as before.
    Models that read raw columns get them in their text dtype (:func:`as_texts`).
    """
    return _chunked(model.predict_proba, _inputs_for(model, X), chunk_rows)


def predict(model: Model, X: pd.DataFrame, *, chunk_rows: int = PREDICT_CHUNK_ROWS) -> np.ndarray:
    """``model.predict`` (the 0/1 labels) of the window's rows, chunked as :func:`predict_proba`."""
    return _chunked(model.predict, _inputs_for(model, X), chunk_rows)


def _inputs_for(model: Model, X: pd.DataFrame) -> pd.DataFrame:
    raw = getattr(model, "framework", None) == "sklearn" and getattr(model, "input", None) == "raw"
    return as_texts(X) if raw else X


def _chunked(fn: Callable[[pd.DataFrame], np.ndarray], X: pd.DataFrame, chunk_rows: int) -> np.ndarray:
    n = len(X)
    if n <= chunk_rows:
        return np.asarray(fn(X))
    parts: list[np.ndarray] = []
    try:
        for lo in range(0, n, chunk_rows):
            parts.append(np.asarray(fn(X.iloc[lo: lo + chunk_rows])))
    except SchemaError:
        return np.asarray(fn(X))  # raises the whole window's error
    return np.concatenate(parts, axis=0)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return lib if lib is not None and hasattr(lib, "malloc_trim") else None


#: glibc's ``mallopt`` parameters (``malloc.h``) and the values :func:`reuse_freed_memory` sets
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_BYTES = 256 << 20
TRIM_THRESHOLD_BYTES = 512 << 20
@functools.cache  # once per process (a forked task inherits its parent's setting)
def reuse_freed_memory() -> bool:
    """Let the C heap reuse freed blocks up to 256 MiB within a step (glibc ``mallopt``); False where the
    C library is not glibc. Once per process; :func:`fairmon.pipeline.run_step` calls it.

    Why: glibc serves a block above its mmap threshold (dynamic, at most 32 MiB) with a fresh ``mmap``
    and unmaps it on ``free``, so a step that allocates and frees the same large temporaries chunk
    after chunk (KernelSHAP's coalition rows, LIME's samples, the models on them) makes the kernel
    fault in and zero new pages every time. Measured (demo fleet spec at the spec defaults, one warm
    process, 2,000-row windows, 2026-12-02): 0.58-0.66 system CPU-s per window in ``explain`` and
    0.49-0.66 in ``diagnose`` without these thresholds, 0.13-0.25 and 0.03-0.06 with them, the user
    time unchanged.
    :func:`release_freed_memory` still hands the freed memory back between steps (``malloc_trim``
    releases it whatever the thresholds), so a window's memory between steps is unchanged; within a
    step freed blocks are kept for the next allocation instead of being returned at once.

    Examples
    --------
    >>> reuse_freed_memory() in (True, False)
    True
    """
    lib = _libc()
    if lib is None or not hasattr(lib, "mallopt"):
        return False
    return bool(lib.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        lib.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))


def release_freed_memory() -> bool:
    """Hand the freed pages of Arrow's memory pool and of the C heap (glibc ``malloc_trim``) back to the
    operating system; False where the C library has no ``malloc_trim``.

    A step's large temporary arrays are freed when it ends, but the allocator keeps much of that
    memory for reuse, so the next step starts from the earlier step's peak instead of what is alive;
    :func:`fairmon.pipeline.run_window` calls this between steps (a few milliseconds).

    Examples
    --------
    >>> release_freed_memory() in (True, False)
    True
    """
    arrow = sys.modules.get("pyarrow")  # Parquet reads allocate from Arrow's own pool (mimalloc/jemalloc)
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    lib = _libc()
    if lib is None:
        return False
    lib.malloc_trim(0)
    return True
