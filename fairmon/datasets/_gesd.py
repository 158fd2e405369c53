"""The GESD paper's CSVs (German, Bail, student math/Portuguese) with the roles the GESD code uses."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from fairmon.datasets._dataset import ERR_PARSE, ERR_UNKNOWN_DATASET, Dataset
from fairmon.datasets._files import read_dataset_csv
from fairmon.errors import DatasetError

__all__ = ["load_gesd", "GESD_ROLES", "GesdName"]


# ---------------------------------------------------------------------- GESD
#: name → (label column, sensitive column, column dropped from the features) as in the GESD code
GESD_ROLES: dict[str, tuple[str, str, str]] = {
    "german": ("GoodCustomer", "Gender", "Age"),
    "bail": ("RECID", "WHITE", "MALE"),
    "math": ("G3", "sex", "age"),
    "por": ("G3", "sex", "age"),
}
GesdName = Literal["german", "bail", "math", "por"]


def load_gesd(name: GesdName, *, g3_threshold: int = 10) -> Dataset:
    """One of the GESD paper's CSVs (``horlahsunbo/GESD``) with its label/sensitive roles.

    Roles (DESIGN §4.3, as the GESD code uses them): German y = ``GoodCustomer`` (the file's ±1
    becomes 1/0), s = ``Gender``, ``Age`` dropped from the features; Bail y = ``RECID``, s = ``WHITE``,
    ``MALE`` dropped; math/por y = ``G3``, s = ``sex`` (0 = F, 1 = M as label-encoded from UCI's
    F/M), ``age`` dropped. The GESD CSVs already hold ``G3`` binarised to 0/1 and the GESD code uses it
    as is; a file with raw grades (0..20) is binarised as ``G3 >= g3_threshold`` (pass/fail at 10, our
    documented rule). The favorable label is 1 for every set (for Bail, RECID = 1 is recidivism: the
    GESD code treats the label symmetrically; pick ``favorable=0`` yourself if you audit decisions).
    Sensitive attribute and all remaining columns are features, as in the GESD code.

    >>> [len(load_gesd(n)) for n in ("german", "bail", "math", "por")]
    [1000, 18876, 395, 649]
    """
    if name not in GESD_ROLES:
        raise DatasetError(ERR_UNKNOWN_DATASET.format(name=name, known=sorted(GESD_ROLES)))
    y, s, dropped = GESD_ROLES[name]
    key = f"gesd/{name}.csv"
    frame = read_dataset_csv(key)
    missing = {y, s, dropped} - set(frame.columns)
    if missing:
        raise DatasetError(ERR_PARSE.format(file=key, problem=f"missing columns {sorted(missing)}"))
    if name == "german":
        if not set(frame[y].unique()) <= {-1, 1}:
            raise DatasetError(ERR_PARSE.format(file=key, problem="GoodCustomer must be -1/1"))
        frame[y] = (frame[y] == 1).astype("int64")
    elif y == "G3" and not set(frame[y].unique()) <= {0, 1}:
        frame[y] = (frame[y] >= g3_threshold).astype("int64")
    for c in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            frame[c] = frame[c].astype(object)
    features = [c for c in frame.columns if c not in (y, dropped)]
    return Dataset(
        name=f"gesd-{name}",
        frame=frame,
        features=features,
        label=y,
        sensitive=[s],
        favorable_column=y,
        favorable=1,
        favorable_label=1,
        categorical=[c for c in features if frame[c].dtype == object],
        description=f"GESD paper dataset {name!r} (horlahsunbo/GESD @ 0a7162b): y={y}, s={s}, {dropped} dropped.",
    )
