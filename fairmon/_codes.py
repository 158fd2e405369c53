"""Integer codes of a column's values *as text*, from ``pd.factorize`` (one ``str`` per distinct value).

Category encodings (:mod:`fairmon.schema`) and outcome groups (:mod:`fairmon.fairness.outcome`) both
treat a value as its text ``str(value)`` with missing values as one label. Building that text per row
costs a Python call per row (4.6M ``pd.isna`` calls for a 1M-row window); factorizing first and
formatting only the distinct values gives the same labels at a fraction of the cost. Where value
equality in ``pd.factorize`` is not equality of the texts (mixed object columns, in which ``1``,
``1.0`` and ``True`` are equal; floats with ``-0.0``), the per-row text is built, so the result is
always that of the per-row definition.

And the other side of a column read as text: :func:`non_numbers`, the values that keep a column of
numbers from being numeric (one word makes pandas read it all as text), which the checks that name that
word share (validation, the label check, ``fairmon audit``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["TEXT_CATEGORIES", "factorizes_exactly", "non_numbers", "string_codes"]

#: ``DataFrame.attrs`` key: the text columns a window holds as categoricals, with the dtype they were
#: read in (``"str"`` / ``"object"``): :func:`fairmon.pipeline.frames.as_texts` turns them back
TEXT_CATEGORIES = "fairmon_text_categories"


def factorizes_exactly(column: pd.Series) -> bool:
    """Whether ``pd.factorize`` equality is equality of ``str`` of the values for this column.

    Examples
    --------
    >>> factorizes_exactly(pd.Series(["a", None])), factorizes_exactly(pd.Series([1, "1", 1.0]))
    (True, False)
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return factorizes_exactly(pd.Series(dtype.categories))
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
        return True
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return True
    if pd.api.types.is_float_dtype(dtype):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        return not bool(np.any(np.signbit(values) & (values == 0.0)))
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty")
    return False


def string_codes(column: pd.Series, missing: str) -> tuple[list[str], np.ndarray]:
    """The distinct texts of a column (``str(value)`` in order of first appearance; ``missing`` for
    missing values, last), and every row's index into them.

    Examples
    --------
    >>> names, codes = string_codes(pd.Series(["b", None, "a", "b"]), "<NA>")
    >>> names, codes.tolist()
    (['b', 'a', '<NA>'], [0, 2, 1, 0])
    >>> string_codes(pd.Series([1, 1.0, None], dtype=object), "<NA>")[0]
    ['1', '1.0', '<NA>']
    """
    if not factorizes_exactly(column):
        texts = [missing if pd.isna(v) else str(v) for v in column.tolist()]
        column = pd.Series(texts, dtype=object)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    labels = [str(v) for v in pd.Series(uniques).astype(object)]
    if (codes < 0).any():
        labels.append(missing)  # code -1 reads the last entry of the table below
    names = list(dict.fromkeys(labels))  # equal texts of distinct values merge
    rank = {name: i for i, name in enumerate(names)}
    lut = np.array([rank[lab] for lab in labels] or [0], dtype=np.int64)  # (an empty column: no codes)
    return names, lut[codes]


def non_numbers(values: pd.Series) -> pd.Series:
    """The non-missing values of ``values`` that are not numbers (none in a numeric or boolean column).

    >>> non_numbers(pd.Series(["1", "0", "yes", None])).tolist(), non_numbers(pd.Series([1, 0])).tolist()
    (['yes'], [])
    """
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values.iloc[:0]
    present = values[values.notna()]
    return present[pd.to_numeric(present, errors="coerce").isna()]
