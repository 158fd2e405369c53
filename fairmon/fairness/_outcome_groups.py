"""Inputs of the outcome metrics: binary coercion, the sensitive frame and structural group keys.

Why structural keys: an intersection group is the *tuple* of its members' values. Joining the values
with ``&`` as plain text merged distinct groups (``("x&y", "z")`` and ``("x", "y&z")`` both read
``x&y&z``). Groups are therefore keyed by tuples while they are formed, and their display text
(:func:`group_key`) escapes the separator and the escape character, so the text is unambiguous and
:func:`parse_group_key` recovers the tuple. Values without ``&`` or ``\\`` read as before
(``"Black&Female"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import MethodError

__all__ = ["group_key", "parse_group_key", "MISSING_GROUP", "INTERSECTION_SEP", "ESCAPE_CHAR"]

#: group name given to rows whose sensitive value is missing
MISSING_GROUP = "(missing)"
#: joins attribute names (and group values) of an intersection
INTERSECTION_SEP = "&"
#: escapes a literal ``&`` (and itself) inside a value of an intersection key
ESCAPE_CHAR = "\\"

ERR_LENGTH = "length mismatch: y_pred has {n} rows but {what} has {m}"
ERR_NOT_BINARY = "{what} must be binary (0/1, bool) with NaN for missing; found value {value!r}"
ERR_NO_SENSITIVE = "sensitive_features is empty: declare at least one protected attribute"
ERR_UNKNOWN_ATTRIBUTE = "intersection names unknown sensitive attribute {name!r}; known: {known}"
ERR_BAD_KEY = "group key {key!r} ends in a lone escape character"


def _escape(value: str) -> str:
    return value.replace(ESCAPE_CHAR, ESCAPE_CHAR * 2).replace(INTERSECTION_SEP, ESCAPE_CHAR + INTERSECTION_SEP)


def group_key(values: Sequence[str]) -> str:
    """Display text of an intersection group (or attribute list): values joined by ``&``, escaped.

    Examples
    --------
    >>> group_key(("Black", "Female"))
    'Black&Female'
    >>> group_key(("x&y", "z")), group_key(("x", "y&z"))
    ('x\\\\&y&z', 'x&y\\\\&z')
    >>> parse_group_key(group_key(("x&y", "z")))
    ('x&y', 'z')
    """
    return INTERSECTION_SEP.join(_escape(str(v)) for v in values)


def parse_group_key(key: str) -> tuple[str, ...]:
    """The tuple of values of a :func:`group_key` text (one value for a plain group name).

    Examples
    --------
    >>> parse_group_key("Black&Female"), parse_group_key("F")
    (('Black', 'Female'), ('F',))
    """
    parts: list[str] = []
    cur: list[str] = []
    chars = iter(key)
    for ch in chars:
        if ch == ESCAPE_CHAR:
            nxt = next(chars, None)
            if nxt is None:
                raise MethodError(ERR_BAD_KEY.format(key=key))
            cur.append(nxt)
        elif ch == INTERSECTION_SEP:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return tuple(parts)


def as_binary(values: Any, what: str) -> np.ndarray:
    """Float 0/1 vector with NaN for missing; MethodError naming the first non-binary value."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.astype(np.float64).ravel()
    try:
        out = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        bad = next((v for v in arr.ravel() if not _is_binary_scalar(v)), arr.ravel()[0])
        raise MethodError(ERR_NOT_BINARY.format(what=what, value=bad)) from exc
    finite = out[~np.isnan(out)]
    bad_mask = (finite != 0.0) & (finite != 1.0)
    if bad_mask.any():
        raise MethodError(ERR_NOT_BINARY.format(what=what, value=float(finite[bad_mask][0])))
    return out.ravel()


def _is_binary_scalar(v: Any) -> bool:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return f in (0.0, 1.0) or f != f


def sensitive_frame(sensitive_features: Any, n: int) -> pd.DataFrame:
    """The protected attributes as a DataFrame with string column names and ``n`` rows."""
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features.reset_index(drop=True)
    elif isinstance(sensitive_features, pd.Series):
        name = sensitive_features.name if sensitive_features.name is not None else "sensitive"
        frame = pd.DataFrame({str(name): sensitive_features.to_numpy()})
    elif isinstance(sensitive_features, Mapping):
        frame = pd.DataFrame({str(k): np.asarray(v) for k, v in sensitive_features.items()})
    else:
        arr = np.asarray(sensitive_features)
        if arr.ndim == 1:
            frame = pd.DataFrame({"sensitive": arr})
        else:
            frame = pd.DataFrame(arr, columns=[f"sensitive_{i}" for i in range(arr.shape[1])])
    if frame.shape[1] == 0:
        raise MethodError(ERR_NO_SENSITIVE)
    if len(frame) != n:
        raise MethodError(ERR_LENGTH.format(n=n, what="sensitive_features", m=len(frame)))
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _labels_of(column: pd.Series) -> np.ndarray:
    """String group labels of one sensitive column; missing → MISSING_GROUP."""
    missing = column.isna().to_numpy()
    labels = column.astype(object).map(str).to_numpy(dtype=object)
    labels[missing] = MISSING_GROUP
    return np.asarray(labels, dtype=object)


def groupings(
    frame: pd.DataFrame, intersections: bool | Sequence[Sequence[str]]
) -> list[tuple[str, list[str], np.ndarray]]:
    """``(grouping key, group names, group code of every row)`` per attribute, then per intersection.

    Groups are formed from the value *tuples* (sorted by tuple); a single attribute's group name is its
    value, an intersection group's name its :func:`group_key`.
    """
    cols = list(frame.columns)
    labels = {c: _labels_of(frame[c]) for c in cols}
    if intersections is True:
        combos: list[tuple[str, ...]] = [
            tuple(c) for r in range(2, len(cols) + 1) for c in itertools.combinations(cols, r)
        ]
    elif intersections is False:
        combos = []
    else:
        combos = [tuple(str(a) for a in c) for c in intersections]
    for combo in combos:
        for name in combo:
            if name not in labels:
                raise MethodError(ERR_UNKNOWN_ATTRIBUTE.format(name=name, known=cols))
    out: list[tuple[str, list[str], np.ndarray]] = []
    for combo in [(c,) for c in cols] + [c for c in combos if len(c) >= 2]:
        parts = pd.DataFrame({str(i): labels[name] for i, name in enumerate(combo)})
        grouped = parts.groupby(list(parts.columns), sort=True)
        codes = grouped.ngroup().to_numpy()
        keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]  # in code order
        names = [str(k[0]) if len(combo) == 1 else group_key(k) for k in keys]
        out.append((combo[0] if len(combo) == 1 else group_key(combo), names, codes))
    return out
