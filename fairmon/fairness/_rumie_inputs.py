"""RUMIE's input checks: parameters, decisions and attribute columns, with the error texts."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import InsufficientDataError, MethodError
from fairmon.rules import column_decimals
from fairmon.schema import ColumnSpec, FeatureSchema

__all__ = [
    "ERR_BOUNDS_ORDER", "ERR_BOUNDS_RANGE", "ERR_EMPTY", "ERR_FAVORABLE_COLUMN", "ERR_FAVORABLE_LENGTH",
    "ERR_FAVORABLE_NAN", "ERR_FAVORABLE_NOT_BINARY", "ERR_K_RANGE", "ERR_K_TYPE", "ERR_METHOD", "ERR_NAN",
    "ERR_NOT_FRAME", "ERR_NO_ATTRIBUTES", "ERR_PARAM", "ERR_TOO_FEW_ROWS", "ERR_UNKNOWN_ATTRIBUTES",
    "ENCODE_CHUNK_ROWS", "MIN_ROWS", "MIN_SPLIT_ROWS", "REASON_ALL_FAVORABLE", "REASON_NONE_FAVORABLE", "REASON_NO_GROUP",
    "Prepared", "check_params", "favorable_array", "prepare",
]

ERR_EMPTY = "RUMIE needs data: the frame has no rows"
ERR_TOO_FEW_ROWS = "RUMIE needs at least {min_rows} rows to form a group and its complement; got {n}"
ERR_NOT_FRAME = "X must be a pandas DataFrame of raw attribute columns, got {type}"
ERR_FAVORABLE_LENGTH = "favorable has {got} values but X has {n} rows"
ERR_FAVORABLE_NOT_BINARY = "{what} must be binary (bool or 0/1); found values {values}"
ERR_FAVORABLE_NAN = "{what} has {count} missing values; every row needs a decision"
ERR_FAVORABLE_COLUMN = "favorable column {column!r} is not in the data; columns are {columns}"
ERR_NAN = "attribute column {column!r} has {count} missing (NaN) numeric values; drop or impute them first"
ERR_BOUNDS_ORDER = "alpha ({alpha}) must not exceed beta ({beta})"
ERR_BOUNDS_RANGE = "alpha and beta must lie in [0, 1]; got alpha={alpha}, beta={beta}"
ERR_K_RANGE = "k must be between 1 and the number of encoded attributes ({d}); got {k}"
ERR_K_TYPE = "k must be a positive integer (the number of key encoded attributes); got {k!r}"
ERR_UNKNOWN_ATTRIBUTES = "unknown attributes {names}; available columns are {available}"
ERR_NO_ATTRIBUTES = "no attributes to mine: pass attribute columns in X"
ERR_METHOD = "method must be one of {allowed}; got {method!r}"
ERR_PARAM = "{name} must be {rule}; got {value!r}"

REASON_ALL_FAVORABLE = "every row received the favorable decision: no group can be discriminated (DScore 0)"
REASON_NONE_FAVORABLE = "no row received the favorable decision: no group can be discriminated (DScore 0)"
REASON_NO_GROUP = (
    "no group with size fraction within [{alpha}, {beta}] was found (n={n}); widen the bounds (a monitor's "
    "rumie.alpha and rumie.beta: the group's share of the window)"
)

MIN_ROWS = 2
MIN_SPLIT_ROWS = 20


def check_params(
    *, k: int, alpha: float, beta: float, lam: float, method: str, iterations: int, lr: float, restarts: int
) -> None:
    """Refuse parameters outside their ranges with the texts above."""
    if method not in ("ie", "ie-dt", "enum"):
        raise MethodError(ERR_METHOD.format(allowed=["ie", "ie-dt", "enum"], method=method))
    if not (0.0 <= alpha <= 1.0 and 0.0 <= beta <= 1.0):
        raise MethodError(ERR_BOUNDS_RANGE.format(alpha=alpha, beta=beta))
    if alpha > beta:
        raise MethodError(ERR_BOUNDS_ORDER.format(alpha=alpha, beta=beta))
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise MethodError(ERR_K_TYPE.format(k=k))
    if lam < 0 or not math.isfinite(lam):
        raise MethodError(ERR_PARAM.format(name="lam", rule="a finite number >= 0", value=lam))
    if iterations < 1:
        raise MethodError(ERR_PARAM.format(name="iterations", rule="at least 1", value=iterations))
    if not lr > 0:
        raise MethodError(ERR_PARAM.format(name="lr", rule="> 0", value=lr))
    if restarts < 1:
        raise MethodError(ERR_PARAM.format(name="restarts", rule="at least 1", value=restarts))


def favorable_array(X: pd.DataFrame, favorable: Any) -> tuple[np.ndarray, str | None]:
    """The decisions as a bool array (and the column name when given as one of ``X``)."""
    col = None
    if isinstance(favorable, str):
        if favorable not in X.columns:
            raise MethodError(ERR_FAVORABLE_COLUMN.format(column=favorable, columns=list(X.columns)))
        col = favorable
        favorable = X[favorable]
    s = pd.Series(np.asarray(favorable).ravel() if not isinstance(favorable, pd.Series) else favorable.to_numpy())
    if len(s) != len(X):
        raise MethodError(ERR_FAVORABLE_LENGTH.format(got=len(s), n=len(X)))
    what = "favorable" if col is None else f"favorable column {col!r}"
    nan = int(s.isna().sum())
    if nan:
        raise MethodError(ERR_FAVORABLE_NAN.format(what=what, count=nan))
    vals = pd.unique(s)
    try:
        ok = all(v in (0, 1) or v is True or v is False for v in vals.tolist())
    except TypeError:
        ok = False
    if not ok:
        shown = sorted(map(str, vals.tolist()))[:10]
        raise MethodError(ERR_FAVORABLE_NOT_BINARY.format(what=what, values=shown))
    return s.astype(bool).to_numpy(), col


#: rows per block when the encoded matrix of a lazily prepared window is built a block at a time
ENCODE_CHUNK_ROWS = 250_000


@dataclass(frozen=True, eq=False)
class Prepared:
    """Validated inputs: encoded rows, decisions, the schema, the raw attribute rows and precision.

    ``encoded`` is None for a window whose schema was fitted on the rows themselves (no row can fail
    to encode): the encoded matrix is then built only when asked for. :attr:`Z` builds it whole (and
    keeps it); :meth:`rows` encodes just the chosen rows and :meth:`encoded_blocks` the window a block
    of rows at a time, so mining a sample and evaluating the group on every other row never holds the
    window's full matrix. Encoding is row by row, so every way gives the same numbers.
    """

    encoded: np.ndarray | None
    fav: np.ndarray
    schema: FeatureSchema
    raw: pd.DataFrame  # the attribute columns, index 0..n-1: what rules are evaluated on
    decimals: dict[str, int | None]  # per numeric attribute: fairmon.rules.column_decimals

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.fav.shape[0])

    @property
    def Z(self) -> np.ndarray:
        """The encoded matrix of every row (built on first use when the window was prepared lazily)."""
        if self.encoded is None:
            object.__setattr__(self, "encoded", self.schema.transform(self.raw))
        assert self.encoded is not None
        return self.encoded

    def rows(self, idx: np.ndarray) -> Prepared:
        """The same inputs restricted to rows ``idx`` (the split sample's halves)."""
        raw = self.raw.iloc[idx].reset_index(drop=True)
        Z = self.encoded[idx] if self.encoded is not None else self.schema.transform(raw)
        return Prepared(Z, self.fav[idx], self.schema, raw, self.decimals)

    def encoded_blocks(self, block: int | None = None) -> Iterator[np.ndarray]:
        """The encoded matrix in consecutive blocks of at most ``block`` rows (default
        :data:`ENCODE_CHUNK_ROWS`; the whole matrix in one block when it is already built)."""
        if self.encoded is not None:
            yield self.encoded
            return
        step = block or ENCODE_CHUNK_ROWS
        for lo in range(0, self.n, step):
            yield self.schema.transform(self.raw.iloc[lo:lo + step])


def prepare(
    X: Any, favorable: Any, attributes: Sequence[str] | None, schema: FeatureSchema | None
) -> Prepared:
    """Validate ``X``/``favorable``/``attributes`` and encode the attributes (module docstring)."""
    if not isinstance(X, pd.DataFrame):
        raise MethodError(ERR_NOT_FRAME.format(type=type(X).__name__))
    if len(X) == 0:
        raise InsufficientDataError(ERR_EMPTY)
    fav, fav_col = favorable_array(X, favorable)
    if attributes is None:
        attrs = [str(c) for c in X.columns if c != fav_col]
        if schema is not None:
            attrs = [a for a in schema.names if a in attrs] or attrs
    else:
        attrs = [str(a) for a in attributes]
        unknown = [a for a in attrs if a not in X.columns or (schema is not None and a not in schema.names)]
        if unknown:
            available = schema.names if schema is not None else [str(c) for c in X.columns]
            raise MethodError(ERR_UNKNOWN_ATTRIBUTES.format(names=unknown, available=available))
    if not attrs:
        raise MethodError(ERR_NO_ATTRIBUTES)
    if len(X) < MIN_ROWS:
        raise InsufficientDataError(ERR_TOO_FEW_ROWS.format(min_rows=MIN_ROWS, n=len(X)))
    if schema is not None:
        specs: list[ColumnSpec] = [schema.column(a) for a in attrs]
        sub = FeatureSchema(tuple(specs))
        numeric = [c.name for c in specs if c.kind == "numeric"]
    else:
        numeric = [a for a in attrs if pd.api.types.is_numeric_dtype(X[a]) and not pd.api.types.is_bool_dtype(X[a])]
    for name in numeric:
        count = int(X[name].isna().sum())
        if count:
            raise MethodError(ERR_NAN.format(column=name, count=count))
    if schema is None:
        sub = FeatureSchema.fit(X, columns=attrs)
    raw = X[sub.names].reset_index(drop=True)
    # a schema fitted on these rows encodes every one of them: the matrix waits until it is needed
    # (Prepared); a given schema encodes now, so an unseen category fails here as before
    Z = sub.transform(raw) if schema is not None else None
    decimals = {c.name: column_decimals(raw[c.name]) for c in sub.columns if c.kind == "numeric"}
    return Prepared(Z, fav, sub, raw, decimals)
