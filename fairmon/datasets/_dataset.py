"""The :class:`Dataset` every benchmark loader returns: the raw frame plus its column roles.

Raw means original units, readable category names and ``NaN`` for missing values; the roles say which
columns are features, label and declared sensitive attributes and which value of which column is the
favorable outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import DatasetError

__all__ = ["Dataset", "ERR_UNKNOWN_DATASET", "ERR_PARSE"]


ERR_UNKNOWN_DATASET = "unknown dataset {name!r}; choose one of {known}"
ERR_PARSE = "dataset file {file!r} has an unexpected layout: {problem}"


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset with its column roles.

    Attributes
    ----------
    name, description
        Short identifier (e.g. ``"adult"``) and a one-paragraph provenance note.
    frame
        Raw rows: original units, readable category names, ``NaN`` where the source says missing.
    features
        Columns a model or a miner uses (the declared sensitive attributes are included when the
        benchmark's usual feature set includes them; drop them yourself for a blind model).
    label
        Target column (ground truth), or ``None``.
    sensitive
        Declared protected attributes.
    favorable_column, favorable
        The favorable outcome is ``frame[favorable_column] == favorable`` (for COMPAS this is the
        COMPAS score text, not the label).
    favorable_label
        Value of ``label`` that is the favorable ground truth.

    Examples
    --------
    >>> import pandas as pd
    >>> ds = Dataset(name="toy", frame=pd.DataFrame({"x": [1, 2], "y": ["good", "bad"]}), features=["x"],
    ...              label="y", sensitive=[], favorable_column="y", favorable="good", favorable_label="good")
    >>> len(ds), ds.y.tolist(), ds.favorable_indicator.tolist()
    (2, [1, 0], [1, 0])
    """

    name: str
    frame: pd.DataFrame
    features: list[str]
    label: str | None
    sensitive: list[str]
    favorable_column: str
    favorable: Any
    favorable_label: Any = None
    description: str = ""
    categorical: list[str] = field(default_factory=list)

    @property
    def favorable_indicator(self) -> np.ndarray:
        """0/1 array: 1 where the row has the favorable outcome."""
        return np.asarray(self.frame[self.favorable_column] == self.favorable, dtype=np.int64)

    @property
    def y(self) -> np.ndarray:
        """0/1 ground truth: 1 where ``label`` has the favorable value."""
        if self.label is None:
            raise DatasetError(f"dataset {self.name!r} has no label column")
        return np.asarray(self.frame[self.label] == self.favorable_label, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.frame)
