"""Loaders for the public fairness benchmarks: Adult, German credit, COMPAS and the GESD CSVs.

Each loader returns a :class:`Dataset`: the raw frame (original units, readable category names,
``NaN`` for missing values) plus its roles — feature columns, label, declared sensitive attributes and
which value of which column is the favorable outcome. Files come from :func:`data_dir` or are
downloaded and checksum-verified (see :mod:`fairmon.datasets._files`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon.datasets._files import dataset_path
from fairmon.errors import DatasetError

__all__ = [
    "Dataset",
    "load_adult",
    "load_german",
    "load_compas",
    "load_gesd",
    "load_dataset",
    "ADULT_COLUMNS",
    "GERMAN_COLUMNS",
    "GERMAN_CODES",
    "COMPAS_FEATURES",
    "GESD_ROLES",
    "ERR_UNKNOWN_DATASET",
    "ERR_PARSE",
]

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
        return (self.frame[self.favorable_column] == self.favorable).to_numpy().astype(np.int64)

    @property
    def y(self) -> np.ndarray:
        """0/1 ground truth: 1 where ``label`` has the favorable value."""
        if self.label is None:
            raise DatasetError(f"dataset {self.name!r} has no label column")
        return (self.frame[self.label] == self.favorable_label).to_numpy().astype(np.int64)

    def __len__(self) -> int:
        return len(self.frame)


# ---------------------------------------------------------------------- Adult
ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
)
_ADULT_NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")


def _read_adult(key: str) -> pd.DataFrame:
    path = dataset_path(key)
    text = path.read_bytes().decode("utf-8")
    # quirks of the official files: adult.test opens with a "|1x3 Cross validator" banner line, both
    # files end with blank lines, fields are separated by ", ", and test labels end with "."
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("|")]
    frame = pd.read_csv(
        io.StringIO("\n".join(lines)),
        header=None,
        names=list(ADULT_COLUMNS),
        skipinitialspace=True,
        na_values=["?"],
        keep_default_na=False,
    )
    if frame.shape[1] != len(ADULT_COLUMNS) or frame["income"].isna().any():
        raise DatasetError(ERR_PARSE.format(file=key, problem="expected 15 comma-separated fields per row"))
    frame["income"] = frame["income"].astype(str).str.strip().str.rstrip(".")
    bad = set(frame["income"].unique()) - {">50K", "<=50K"}
    if bad:
        raise DatasetError(ERR_PARSE.format(file=key, problem=f"unexpected income labels {sorted(bad)}"))
    return frame


def load_adult() -> Dataset:
    """UCI Adult (census income): ``adult.data`` + ``adult.test`` → 48,842 rows.

    ``?`` becomes ``NaN`` (workclass, occupation, native_country), the test file's banner line and
    the trailing ``.`` of its labels are removed, and a ``split`` column says where a row came from.
    Favorable outcome: ``income == ">50K"``. Sensitive: ``sex``, ``race``.

    >>> ds = load_adult()
    >>> len(ds), ds.favorable
    (48842, '>50K')
    """
    train = _read_adult("adult/adult.data").assign(split="train")
    test = _read_adult("adult/adult.test").assign(split="test")
    frame = pd.concat([train, test], ignore_index=True)
    for c in _ADULT_NUMERIC:
        frame[c] = frame[c].astype("int64")
    features = [c for c in ADULT_COLUMNS if c != "income"]
    categorical = [c for c in features if c not in _ADULT_NUMERIC]
    for c in categorical + ["income", "split"]:
        frame[c] = frame[c].astype(object)
    return Dataset(
        name="adult",
        frame=frame,
        features=features,
        label="income",
        sensitive=["sex", "race"],
        favorable_column="income",
        favorable=">50K",
        favorable_label=">50K",
        categorical=categorical,
        description=(
            "UCI Adult census income (Kohavi 1996; CC BY 4.0): adult.data (32,561) + adult.test (16,281). "
            "'?' = missing; favorable = income >50K."
        ),
    )


# ---------------------------------------------------------------------- German
GERMAN_COLUMNS = (
    "status",
    "month",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "personal_status",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "installment_plans",
    "housing",
    "number_of_credits",
    "job",
    "people_liable_for",
    "telephone",
    "foreign_worker",
    "credit",
)
#: A-codes of german.data → readable names (from german.names, Statlog German Credit)
GERMAN_CODES: dict[str, str] = {
    "A11": "< 0 DM",
    "A12": "0 <= ... < 200 DM",
    "A13": ">= 200 DM / salary assignment",
    "A14": "no checking account",
    "A30": "no credits / all paid back duly",
    "A31": "all credits at this bank paid back duly",
    "A32": "existing credits paid back duly till now",
    "A33": "delay in paying off in the past",
    "A34": "critical account / other credits existing",
    "A40": "car (new)",
    "A41": "car (used)",
    "A42": "furniture/equipment",
    "A43": "radio/television",
    "A44": "domestic appliances",
    "A45": "repairs",
    "A46": "education",
    "A47": "vacation",
    "A48": "retraining",
    "A49": "business",
    "A410": "others",
    "A61": "< 100 DM",
    "A62": "100 <= ... < 500 DM",
    "A63": "500 <= ... < 1000 DM",
    "A64": ">= 1000 DM",
    "A65": "unknown / no savings account",
    "A71": "unemployed",
    "A72": "< 1 year",
    "A73": "1 <= ... < 4 years",
    "A74": "4 <= ... < 7 years",
    "A75": ">= 7 years",
    "A91": "male: divorced/separated",
    "A92": "female: divorced/separated/married",
    "A93": "male: single",
    "A94": "male: married/widowed",
    "A95": "female: single",
    "A101": "none",
    "A102": "co-applicant",
    "A103": "guarantor",
    "A121": "real estate",
    "A122": "building society savings / life insurance",
    "A123": "car or other",
    "A124": "unknown / no property",
    "A141": "bank",
    "A142": "stores",
    "A143": "none",
    "A151": "rent",
    "A152": "own",
    "A153": "for free",
    "A171": "unemployed/unskilled - non-resident",
    "A172": "unskilled - resident",
    "A173": "skilled employee / official",
    "A174": "management / self-employed / highly qualified",
    "A191": "none",
    "A192": "yes, registered",
    "A201": "yes",
    "A202": "no",
}
_GERMAN_NUMERIC = (
    "month",
    "credit_amount",
    "installment_rate",
    "residence_since",
    "age",
    "number_of_credits",
    "people_liable_for",
)


def load_german() -> Dataset:
    """Statlog German Credit: ``german.data`` (space-separated A-codes) → 1,000 rows.

    A-codes become readable names (:data:`GERMAN_CODES`); ``sex`` is derived from
    ``personal_status``; the label ``credit`` is 1 = good (favorable), 0 = bad (the file's 2).
    Sensitive: ``sex``, ``age``. Features: the 20 original attributes.

    >>> ds = load_german()
    >>> len(ds), float(ds.frame["credit"].mean())
    (1000, 0.7)
    """
    key = "german/german.data"
    frame = pd.read_csv(dataset_path(key), sep=r"\s+", header=None, names=list(GERMAN_COLUMNS), dtype=str)
    if frame.shape != (len(frame), 21) or frame.isna().any().any():
        raise DatasetError(ERR_PARSE.format(file=key, problem="expected 21 space-separated fields per row"))
    categorical = [c for c in GERMAN_COLUMNS if c not in _GERMAN_NUMERIC and c != "credit"]
    for c in categorical:
        unknown = set(frame[c]) - set(GERMAN_CODES)
        if unknown:
            raise DatasetError(
                ERR_PARSE.format(file=key, problem=f"unknown codes in {c!r}: {sorted(unknown)}")
            )
        frame[c] = frame[c].map(GERMAN_CODES).astype(object)
    for c in _GERMAN_NUMERIC:
        frame[c] = frame[c].astype("int64")
    credit = frame["credit"].astype("int64")
    if not set(credit.unique()) <= {1, 2}:
        raise DatasetError(ERR_PARSE.format(file=key, problem="credit must be 1 (good) or 2 (bad)"))
    frame["credit"] = (credit == 1).astype("int64")
    frame["sex"] = frame["personal_status"].str.split(":").str[0].astype(object)
    return Dataset(
        name="german",
        frame=frame,
        features=[c for c in GERMAN_COLUMNS if c != "credit"],
        label="credit",
        sensitive=["sex", "age"],
        favorable_column="credit",
        favorable=1,
        favorable_label=1,
        categorical=categorical,
        description=(
            "Statlog German Credit (Hofmann 1994; CC BY 4.0), 1,000 applicants; credit 1 = good (favorable), "
            "0 = bad; sex derived from personal_status."
        ),
    )


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
    raw = pd.read_csv(dataset_path(key), keep_default_na=False, na_values=[""])
    header = list(pd.read_csv(dataset_path(key), nrows=0).columns)
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
    frame = pd.read_csv(dataset_path(key))
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


# ---------------------------------------------------------------------- dispatcher
_LOADERS = {
    "adult": load_adult,
    "german": load_german,
    "compas": load_compas,
    "gesd-german": lambda: load_gesd("german"),
    "gesd-bail": lambda: load_gesd("bail"),
    "gesd-math": lambda: load_gesd("math"),
    "gesd-por": lambda: load_gesd("por"),
}


def load_dataset(name: str) -> Dataset:
    """Load a dataset by name: adult, german, compas, gesd-german, gesd-bail, gesd-math, gesd-por."""
    try:
        loader = _LOADERS[name]
    except KeyError:
        raise DatasetError(ERR_UNKNOWN_DATASET.format(name=name, known=sorted(_LOADERS))) from None
    return loader()  # type: ignore[no-untyped-call]
