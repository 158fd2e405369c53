"""ProPublica's COMPAS two-year recidivism data with ProPublica's filter, as a :class:`Dataset`."""

from __future__ import annotations

import pandas as pd

from fairmon.datasets._dataset import ERR_PARSE, Dataset
from fairmon.datasets._files import read_dataset_csv
from fairmon.errors import DatasetError

__all__ = ["load_compas", "COMPAS_FEATURES"]


# ---------------------------------------------------------------------- COMPAS
COMPAS_FEATURES = (
    "sex",
    "age",
    "age_cat",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "c_charge_degree",
)


def load_compas() -> Dataset:
    """ProPublica COMPAS two-year recidivism with ProPublica's filter → 6,172 rows.

    Filter (exactly ProPublica's analysis): ``|days_b_screening_arrest| <= 30``, ``is_recid != -1``,
    ``c_charge_degree != 'O'``, ``score_text != 'N/A'``. The file repeats ``decile_score`` and
    ``priors_count``; the repeats are checked to be identical and dropped. Favorable outcome: the
    COMPAS ``score_text == 'Low'`` (the decision being audited); label ``two_year_recid`` (0 favorable).

    >>> ds = load_compas()
    >>> len(ds), ds.favorable_column, ds.favorable
    (6172, 'score_text', 'Low')
    """
    key = "compas/compas-scores-two-years.csv"
    # keep 'N/A' as text (pandas would turn it into NaN) so the filter can name it
    raw = read_dataset_csv(key, keep_default_na=False, na_values=[""])
    header = list(read_dataset_csv(key, nrows=0).columns)
    seen: dict[str, str] = {}
    drop = []
    for col in header:
        base = col.split(".")[0] if "." in col and col.split(".")[0] in seen else None
        if base is not None:
            if not raw[col].equals(raw[base]):
                raise DatasetError(ERR_PARSE.format(file=key, problem=f"duplicate column {base!r} differs"))
            drop.append(col)
        else:
            seen[col] = col
    frame = raw.drop(columns=drop)
    missing = {"days_b_screening_arrest", "is_recid", "c_charge_degree", "score_text"} - set(frame.columns)
    if missing:
        raise DatasetError(ERR_PARSE.format(file=key, problem=f"missing columns {sorted(missing)}"))
    keep = (
        (frame["days_b_screening_arrest"].abs() <= 30)
        & (frame["is_recid"] != -1)
        & (frame["c_charge_degree"] != "O")
        & (frame["score_text"] != "N/A")
        & frame["score_text"].notna()
    )
    frame = frame.loc[keep].reset_index(drop=True)
    for c in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[c]):
            frame[c] = frame[c].astype(object)
    return Dataset(
        name="compas",
        frame=frame,
        features=list(COMPAS_FEATURES),
        label="two_year_recid",
        sensitive=["race", "sex"],
        favorable_column="score_text",
        favorable="Low",
        favorable_label=0,
        categorical=["sex", "age_cat", "race", "c_charge_degree"],
        description=(
            "ProPublica COMPAS two-year recidivism (Broward County), ProPublica filter; favorable = COMPAS "
            "score_text Low; label two_year_recid (0 = no recidivism)."
        ),
    )
