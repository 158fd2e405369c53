"""Feature schema: the one encoder of fairmon, stored with every model snapshot.

Every method works on the same encoded, standardised matrix and maps results back through the same
schema: RUMIE rules in original units, explanation perturbations in the encoded space, attributions
summed back to original columns, validation on raw columns. Nothing else in fairmon keeps a private
encoder.

Encoding rules (documented choices):

* numeric columns are standardised with the fitted mean and population standard deviation (a
  constant column gets scale 1 so it encodes to 0);
* categorical columns (object, category, bool or string dtype, or listed explicitly) are one-hot
  encoded with *every* category kept (no dropped reference level), so a rule can name any category
  and the groups are symmetric for explanations. Missing categorical values become the category
  ``"<NA>"`` when seen at fit time;
* a numeric NaN is an error naming the column (monitoring must not impute silently); an unseen
  category is an error by default or an all-zero block with ``handle_unknown="ignore"``.

Example
-------
>>> import pandas as pd
>>> df = pd.DataFrame({"age": [20.0, 40.0], "sex": ["F", "M"]})
>>> schema = FeatureSchema.fit(df)
>>> schema.encoded_names
['age', 'sex=F', 'sex=M']
>>> schema.transform(df).round(2).tolist()
[[-1.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon._codes import string_codes
from fairmon.errors import SchemaError

__all__ = ["ColumnSpec", "FeatureSchema", "MISSING_CATEGORY", "category_codes", "category_strings"]

MISSING_CATEGORY = "<NA>"
ColumnKind = Literal["numeric", "categorical"]

ERR_MISSING_COLUMNS = "columns missing from the data: {columns}"
ERR_NUMERIC_NAN = "column {column!r} has {count} missing (NaN) values; numeric columns must be complete"
ERR_NOT_NUMERIC = "column {column!r} is numeric in the schema but holds non-numeric values, e.g. {example!r}"
ERR_UNSEEN_CATEGORY = "column {column!r} has categories not seen when the schema was fitted: {values}"
ERR_WIDTH = "encoded matrix has {got} columns, the schema expects {expected}"
ERR_UNKNOWN_COLUMN = "unknown column {column!r}; schema columns are {columns}"


@dataclass(frozen=True)
class ColumnSpec:
    """One raw column: its kind, dtype and encoding parameters."""

    name: str
    kind: ColumnKind
    dtype: str
    categories: tuple[str, ...] = ()
    mean: float = 0.0
    scale: float = 1.0

    @property
    def width(self) -> int:
        return len(self.categories) if self.kind == "categorical" else 1

    def encoded_names(self) -> list[str]:
        if self.kind == "categorical":
            return [f"{self.name}={c}" for c in self.categories]
        return [self.name]


@dataclass(frozen=True)
class FeatureSchema:
    """Raw columns, their encoded layout and the inverse map back to original columns.

    Examples
    --------
    >>> import pandas as pd
    >>> schema = FeatureSchema.fit(pd.DataFrame({"age": [20.0, 40.0], "sex": ["f", "m"]}))
    >>> schema.n_encoded, schema.transform(pd.DataFrame({"age": [30.0], "sex": ["m"]})).round(3).tolist()
    (3, [[0.0, 0.0, 1.0]])
    """

    columns: tuple[ColumnSpec, ...]
    #: what :meth:`transform` does with a category the schema was not fitted on: ``error`` (default), or
    #: ``ignore`` (an all-zero block, as scikit-learn's ``OneHotEncoder(handle_unknown="ignore")``) for a
    #: monitor whose validation allows unseen categories (:meth:`allowing_unseen`); not serialised
    unknown: Literal["error", "ignore"] = field(default="error", compare=False)
    _offsets: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        offsets, pos = [], 0
        for col in self.columns:
            offsets.append(pos)
            pos += col.width
        object.__setattr__(self, "_offsets", tuple(offsets))
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise SchemaError(f"duplicate column names in schema: {names}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def fit(
        cls,
        df: pd.DataFrame,
        *,
        columns: Sequence[str] | None = None,
        categorical: Iterable[str] = (),
        numeric: Iterable[str] = (),
        standardize: bool = True,
    ) -> FeatureSchema:
        """Learn the schema from reference data.

        ``categorical`` / ``numeric`` force a column's kind; otherwise numeric dtypes (not bool) are
        numeric and everything else is categorical.
        """

        cols = list(columns) if columns is not None else [str(c) for c in df.columns]
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise SchemaError(ERR_MISSING_COLUMNS.format(columns=missing))
        force_cat, force_num = set(categorical), set(numeric)
        specs: list[ColumnSpec] = []
        for name in cols:
            s = df[name]
            is_num = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            if name in force_cat or (not is_num and name not in force_num):
                values = category_strings(s)
                cats = tuple(sorted(set(values), key=_category_sort_key))
                specs.append(ColumnSpec(name, "categorical", str(s.dtype), categories=cats))
            else:
                vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
                if np.isnan(vals).any():
                    raise SchemaError(ERR_NUMERIC_NAN.format(column=name, count=int(np.isnan(vals).sum())))
                mean = float(vals.mean()) if standardize and len(vals) else 0.0
                std = float(vals.std()) if standardize and len(vals) else 1.0
                specs.append(
                    ColumnSpec(name, "numeric", str(s.dtype), mean=mean, scale=std if std > 0 else 1.0)
                )
        return cls(tuple(specs))

    # ------------------------------------------------------------------ layout
    @property
    def names(self) -> list[str]:
        """Raw column names, in order."""
        return [c.name for c in self.columns]

    @property
    def n_encoded(self) -> int:
        return sum(c.width for c in self.columns)

    @property
    def encoded_names(self) -> list[str]:
        return [n for c in self.columns for n in c.encoded_names()]

    def column(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise SchemaError(ERR_UNKNOWN_COLUMN.format(column=name, columns=self.names))

    def slice_of(self, name: str) -> slice:
        """Encoded positions of raw column ``name``."""
        for c, off in zip(self.columns, self._offsets):
            if c.name == name:
                return slice(off, off + c.width)
        raise SchemaError(ERR_UNKNOWN_COLUMN.format(column=name, columns=self.names))

    @property
    def groups(self) -> list[tuple[str, slice]]:
        """(raw column, encoded slice) pairs; one-hot groups move together under perturbation."""
        return [(c.name, slice(o, o + c.width)) for c, o in zip(self.columns, self._offsets)]

    @property
    def encoded_to_column(self) -> list[str]:
        """Raw column name of each encoded position."""
        return [c.name for c in self.columns for _ in range(c.width)]

    @property
    def continuous_mask(self) -> np.ndarray:
        """True for standardised numeric positions, False for one-hot (binary) positions."""

        return np.array([c.kind == "numeric" for c in self.columns for _ in range(c.width)], dtype=bool)

    # ------------------------------------------------------------------ encode / decode
    def check_frame(self, df: pd.DataFrame) -> None:
        """Raise :class:`SchemaError` naming every missing column."""
        missing = [c for c in self.names if c not in df.columns]
        if missing:
            raise SchemaError(ERR_MISSING_COLUMNS.format(columns=missing))

    def transform(
        self, df: pd.DataFrame, *, handle_unknown: Literal["error", "ignore"] | None = None
    ) -> np.ndarray:
        """Encode raw rows into the float64 matrix every method works on (``handle_unknown``: the
        schema's :attr:`unknown` when not given)."""

        handle_unknown = handle_unknown or self.unknown
        self.check_frame(df)
        out = np.zeros((len(df), self.n_encoded), dtype=np.float64)
        for col, off in zip(self.columns, self._offsets):
            s = df[col.name]
            if col.kind == "numeric":
                vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
                bad = np.isnan(vals) & s.notna().to_numpy()
                if bad.any():
                    example = s[bad].iloc[0]
                    raise SchemaError(ERR_NOT_NUMERIC.format(column=col.name, example=example))
                if np.isnan(vals).any():
                    raise SchemaError(ERR_NUMERIC_NAN.format(column=col.name, count=int(np.isnan(vals).sum())))
                out[:, off] = (vals - col.mean) / col.scale
            else:
                codes = category_codes(s, col.categories)
                if (codes < 0).any() and handle_unknown == "error":
                    unseen = sorted(set(category_strings(s[codes < 0])))
                    raise SchemaError(ERR_UNSEEN_CATEGORY.format(column=col.name, values=unseen[:10]))
                rows = np.nonzero(codes >= 0)[0]
                out[rows, off + codes[rows]] = 1.0
        return out

    def allowing_unseen(self) -> FeatureSchema:
        """This schema encoding unseen categories as all-zero blocks (``validation.allow_unseen_categories``).

        >>> import pandas as pd
        >>> schema = FeatureSchema.fit(pd.DataFrame({"sex": ["f", "m"]})).allowing_unseen()
        >>> schema.transform(pd.DataFrame({"sex": ["x"]})).tolist()
        [[0.0, 0.0]]
        """
        return replace(self, unknown="ignore")

    def inverse_transform(self, Z: np.ndarray) -> pd.DataFrame:
        """Decode an encoded matrix back to raw columns (one-hot blocks by argmax)."""

        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_encoded:
            raise SchemaError(ERR_WIDTH.format(got=Z.shape[-1] if Z.ndim else 0, expected=self.n_encoded))
        data: dict[str, Any] = {}
        for col, off in zip(self.columns, self._offsets):
            if col.kind == "numeric":
                data[col.name] = Z[:, off] * col.scale + col.mean
            else:
                block = Z[:, off : off + col.width]
                cats = np.array(col.categories, dtype=object)
                data[col.name] = pd.Series(cats[block.argmax(axis=1)], dtype=object)
        return pd.DataFrame(data)

    def to_original_value(self, column: str, encoded_value: float) -> float:
        """Map a threshold in standardised units back to the column's original units."""
        col = self.column(column)
        if col.kind != "numeric":
            raise SchemaError(f"column {column!r} is categorical; it has no numeric threshold")
        return float(encoded_value) * col.scale + col.mean

    def aggregate(self, encoded: np.ndarray, *, how: Literal["sum", "abs_sum"] = "sum") -> np.ndarray:
        """Sum per-encoded-position values (e.g. attributions) back to raw columns: (n, d) -> (n, p)."""

        A = np.asarray(encoded, dtype=float)
        if A.shape[-1] != self.n_encoded:
            raise SchemaError(ERR_WIDTH.format(got=A.shape[-1], expected=self.n_encoded))
        if how == "abs_sum":
            A = np.abs(A)
        return np.stack([A[..., s].sum(axis=-1) for _, s in self.groups], axis=-1)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "dtype": c.dtype,
                    "categories": list(c.categories),
                    "mean": c.mean,
                    "scale": c.scale,
                }
                for c in self.columns
            ]
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureSchema:
        try:
            return cls(
                tuple(
                    ColumnSpec(
                        name=str(c["name"]),
                        kind=c["kind"],
                        dtype=str(c.get("dtype", "")),
                        categories=tuple(str(v) for v in c.get("categories", ())),
                        mean=float(c.get("mean", 0.0)),
                        scale=float(c.get("scale", 1.0)),
                    )
                    for c in data["columns"]
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SchemaError(f"malformed feature schema document: {exc}") from exc

    @property
    def fingerprint(self) -> str:
        """Stable sha256 of the canonical JSON form; equal schemas have equal fingerprints."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def diff(self, other: FeatureSchema) -> list[str]:
        """Human-readable differences to ``other`` (empty when equal), for snapshot errors."""
        out: list[str] = []
        mine, theirs = {c.name: c for c in self.columns}, {c.name: c for c in other.columns}
        for name in mine.keys() - theirs.keys():
            out.append(f"column {name!r} only in the first schema")
        for name in theirs.keys() - mine.keys():
            out.append(f"column {name!r} only in the second schema")
        for name in sorted(mine.keys() & theirs.keys()):
            a, b = mine[name], theirs[name]
            if a.kind != b.kind:
                out.append(f"column {name!r}: kind {a.kind} vs {b.kind}")
            elif a.categories != b.categories:
                out.append(f"column {name!r}: categories {list(a.categories)} vs {list(b.categories)}")
            elif abs(a.mean - b.mean) > 1e-9 * max(1.0, abs(a.mean)) or abs(a.scale - b.scale) > 1e-9 * max(
                1.0, abs(a.scale)
            ):
                out.append(f"column {name!r}: scaler ({a.mean}, {a.scale}) vs ({b.mean}, {b.scale})")
        if not out and self.names != other.names:
            out.append(f"column order {self.names} vs {other.names}")
        return out


def category_strings(s: pd.Series) -> np.ndarray:
    """A column's values as the category strings the schema encodes (missing values: ``<NA>``).

    Examples
    --------
    >>> import pandas as pd
    >>> category_strings(pd.Series([1, None, "a"])).tolist()
    ['1', '<NA>', 'a']
    """

    names, codes = string_codes(s, MISSING_CATEGORY)
    return np.asarray(np.array(names, dtype=object)[codes], dtype=object)


def category_codes(s: pd.Series, categories: Sequence[str]) -> np.ndarray:
    """Each value's index in ``categories`` by its category string (:func:`category_strings`); -1
    for a value not among them. Computed from ``pd.factorize`` codes: one lookup per distinct value.

    Examples
    --------
    >>> import pandas as pd
    >>> category_codes(pd.Series(["b", None, "z", "b"]), ("a", "b", "<NA>")).tolist()
    [1, 2, -1, 1]
    """
    names, codes = string_codes(s, MISSING_CATEGORY)
    index = {c: i for i, c in enumerate(categories)}
    lut = np.array([index.get(name, -1) for name in names] or [-1], dtype=np.int64)
    out: np.ndarray = lut[codes]
    return out


def _category_sort_key(value: str) -> tuple[int, float, str]:
    """Numeric-looking categories sort numerically ('2' < '10'); '<NA>' goes last."""
    if value == MISSING_CATEGORY:
        return (2, 0.0, value)
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
