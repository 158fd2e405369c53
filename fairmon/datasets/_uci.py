"""The UCI benchmarks Adult and German credit, parsed from the original files into a :class:`Dataset`.

Files come from :func:`fairmon.datasets.data_dir` or are downloaded and checksum-verified (see
:mod:`fairmon.datasets._files`).
"""

from __future__ import annotations

import io

import pandas as pd

from fairmon.datasets._dataset import ERR_PARSE, Dataset
from fairmon.datasets._files import read_dataset_csv, read_dataset_text
from fairmon.errors import DatasetError

__all__ = ["load_adult", "load_german", "ADULT_COLUMNS", "GERMAN_COLUMNS", "GERMAN_CODES"]


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
    text = read_dataset_text(key)
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
    frame = read_dataset_csv(key, sep=r"\s+", header=None, names=list(GERMAN_COLUMNS), dtype=str)
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
