"""FEU's input: the data split into train/validation/test, encoded, with label and groups checked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import DatasetError
from fairmon.schema import FeatureSchema

__all__ = ["ERR_COLUMNS", "ERR_LABEL", "ERR_FAVORABLE", "ERR_TOO_FEW"]

ERR_COLUMNS = "FEU data is missing columns {columns}; available: {available}"
ERR_LABEL = "FEU needs a label column (pass label=... or a Dataset with .label)"
ERR_FAVORABLE = "label column {label!r} has values {values}; pass favorable=<the favorable label value>"
ERR_TOO_FEW = "FEU needs both label classes in every split; split {split!r} has {counts}"


@dataclass
class _Prepared:
    schema: FeatureSchema
    Z: dict[str, np.ndarray]
    y: dict[str, np.ndarray]
    s: dict[str, np.ndarray]
    summary: dict[str, Any]
    #: the raw rows of each split (a production model scores them as it would in production)
    X: dict[str, pd.DataFrame]
    #: integer group codes of each split (the fair-training penalty's groups)
    codes: dict[str, np.ndarray]


def _prepare(
    data: Any,
    features: Sequence[str] | None,
    sensitive: str | Sequence[str] | None,
    label: str | None,
    favorable: Any,
    split: tuple[float, float, float],
    random_state: int,
) -> _Prepared:
    from sklearn.model_selection import train_test_split

    if isinstance(data, pd.DataFrame):
        frame = data
    elif hasattr(data, "frame"):
        frame = data.frame
        features = features if features is not None else list(getattr(data, "features", []) or []) or None
        label = label if label is not None else getattr(data, "label", None)
        if sensitive is None:
            sensitive = list(getattr(data, "sensitive", []) or []) or None
        if favorable is None:
            fav = getattr(data, "favorable", None)
            favorable = fav if isinstance(fav, int | float | str | bool | np.generic) else None
    else:
        raise DatasetError(f"FEU data must be a DataFrame or a Dataset with .frame, got {type(data).__name__}")
    if label is None:
        raise DatasetError(ERR_LABEL)
    if sensitive is None:
        raise DatasetError("FEU needs the sensitive column(s) (pass sensitive=...)")
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    feats = list(features) if features is not None else [c for c in frame.columns if c != label]
    missing = [c for c in [*feats, *sens, label] if c not in frame.columns]
    if missing:
        raise DatasetError(ERR_COLUMNS.format(columns=missing, available=list(frame.columns)))

    y_raw = frame[label]
    values = sorted(pd.unique(y_raw.dropna()).tolist(), key=str)
    if favorable is None:
        if set(values) <= {0, 1} or set(values) <= {-1, 1} or set(values) <= {False, True}:
            favorable = 1
        else:
            raise DatasetError(ERR_FAVORABLE.format(label=label, values=values[:10]))
    y = (y_raw == favorable).to_numpy().astype(int)
    s = frame[sens[0]].astype(str).to_numpy() if len(sens) == 1 else (
        frame[sens].astype(str).agg("|".join, axis=1).to_numpy()
    )
    idx = np.arange(len(frame))
    tr_f, va_f, te_f = split
    rest, test = train_test_split(idx, test_size=te_f, random_state=random_state, stratify=y)
    train, val = train_test_split(
        rest, test_size=va_f / (tr_f + va_f), random_state=random_state, stratify=y[rest]
    )
    parts = {"train": np.sort(train), "validation": np.sort(val), "test": np.sort(test)}
    for name, rows in parts.items():
        counts = np.bincount(y[rows], minlength=2).tolist()
        if min(counts) == 0:
            raise DatasetError(ERR_TOO_FEW.format(split=name, counts=counts))
    X = frame[feats]
    schema = FeatureSchema.fit(X.iloc[parts["train"]].reset_index(drop=True))  # scaler fit on train only
    # a category that only occurs in the validation or test rows (a rare Adult country after a subsample)
    # is unknown to every candidate: it encodes as an all-zero block, as a model trained on the training
    # split would see it, instead of failing the search
    Z = {k: schema.transform(X.iloc[v].reset_index(drop=True), handle_unknown="ignore" if k != "train" else "error")
         for k, v in parts.items()}
    summary = {
        "rows": int(len(frame)),
        "features": feats,
        "sensitive": sens,
        "label": label,
        "favorable": favorable if not isinstance(favorable, np.generic) else favorable.item(),
        "split_rows": {k: int(len(v)) for k, v in parts.items()},
        "encoded_width": int(schema.n_encoded),
    }
    _, codes = np.unique(s, return_inverse=True)
    return _Prepared(
        schema, Z, {k: y[v] for k, v in parts.items()}, {k: s[v] for k, v in parts.items()}, summary,
        X={k: frame.iloc[v].reset_index(drop=True) for k, v in parts.items()},
        codes={k: codes[v] for k, v in parts.items()},
    )


