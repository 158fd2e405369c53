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

from fairmon._codes import string_codes
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
    """Float 0/1 vector with NaN for missing; MethodError naming the first non-binary value.

    Missing is NaN, None or pandas' ``pd.NA`` (a nullable ``boolean`` / ``Int64`` column holds it).

    >>> as_binary(pd.array([True, None, False], dtype="boolean"), "y_pred").tolist()
    [1.0, nan, 0.0]
    """
    if isinstance(values, pd.Series | pd.Index):
        values = values.array
    if isinstance(values, pd.api.extensions.ExtensionArray) and not isinstance(values, pd.Categorical):
        try:
            values = values.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            values = np.asarray(values, dtype=object)  # words: named below
    arr = np.asarray(values)
    if arr.dtype == object:
        missing = pd.isna(arr)
        if missing.any():
            arr = np.where(missing, np.nan, arr)
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


def codes_of(column: pd.Series) -> tuple[list[str], np.ndarray]:
    """Sorted group names of one sensitive column and every row's index into them.

    The groups are those of the string labels (``str(value)``, missing → :data:`MISSING_GROUP`), in
    sorted order, computed from ``pd.factorize`` codes (:func:`fairmon._codes.string_codes`): one
    ``str`` per distinct value instead of one per row.

    Examples
    --------
    >>> names, codes = codes_of(pd.Series(["b", None, "a", "b"]))
    >>> names, codes.tolist()
    (['(missing)', 'a', 'b'], [2, 0, 1, 2])
    """
    labels, codes = string_codes(column, MISSING_GROUP)
    names = sorted(labels)
    rank = {name: i for i, name in enumerate(names)}
    return names, np.array([rank[lab] for lab in labels], dtype=np.int64)[codes]


def _combine(parts: list[tuple[list[str], np.ndarray]]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """The observed value tuples of several columns (sorted by tuple) and every row's index into them.

    Each column's codes are ranks of its sorted names, so the mixed-radix index of the codes sorts
    as the tuples do; the observed indices are found with a ``bincount`` (or ``np.unique`` when the
    index space is much larger than the window).
    """
    n = parts[0][1].shape[0]
    sizes = [len(names) for names, _ in parts]
    total = 1
    for size in sizes:
        total *= size
    if total > 2**62:  # the mixed-radix index would overflow: sort the code rows instead
        uniq, inverse = np.unique(np.stack([codes for _, codes in parts], axis=1), axis=0, return_inverse=True)
        return [tuple(parts[j][0][int(u[j])] for j in range(len(parts))) for u in uniq], inverse.ravel()
    combined = np.zeros(n, dtype=np.int64)
    for size, (_, codes) in zip(sizes, parts, strict=True):
        combined = combined * size + codes
    if total <= max(4 * n, 1 << 20):
        present = np.flatnonzero(np.bincount(combined, minlength=total))
        lut = np.full(total, -1, dtype=np.int64)
        lut[present] = np.arange(present.shape[0])
        inverse = lut[combined]
    else:
        present, inverse = np.unique(combined, return_inverse=True)
    digits: list[np.ndarray] = []
    rest = present.astype(np.int64)
    for size in reversed(sizes):
        digits.append(rest % size)
        rest = rest // size
    digits.reverse()
    keys = [tuple(parts[j][0][int(digits[j][g])] for j in range(len(parts))) for g in range(present.shape[0])]
    return keys, inverse


def groupings(
    frame: pd.DataFrame, intersections: bool | Sequence[Sequence[str]]
) -> list[tuple[str, list[str], np.ndarray]]:
    """``(grouping key, group names, group code of every row)`` per attribute, then per intersection.

    Groups are formed from the value *tuples* of the string labels (sorted by tuple); a single
    attribute's group name is its value, an intersection group's name its :func:`group_key`. The
    codes come from :func:`codes_of` (no string label per row).

    Examples
    --------
    >>> f = pd.DataFrame({"s": ["m", "f", "m"], "r": ["x", "y", "x"]})
    >>> [(key, names, codes.tolist()) for key, names, codes in groupings(f, True)]
    [('s', ['f', 'm'], [1, 0, 1]), ('r', ['x', 'y'], [0, 1, 0]), ('s&r', ['f&y', 'm&x'], [1, 0, 1])]
    """
    cols = list(frame.columns)
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
            if name not in cols:
                raise MethodError(ERR_UNKNOWN_ATTRIBUTE.format(name=name, known=cols))
    coded = {c: codes_of(frame[c]) for c in cols}
    out: list[tuple[str, list[str], np.ndarray]] = [(c, coded[c][0], coded[c][1]) for c in cols]
    for combo in combos:
        if len(combo) < 2:
            continue
        keys, codes = _combine([coded[name] for name in combo])
        out.append((group_key(combo), [group_key(k) for k in keys], codes))
    return out
