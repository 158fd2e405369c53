"""The synthetic stream's vocabulary: column roles, the planted rule, and the window/stream types.

The generator (:func:`fairmon.datasets.generate_stream`) documents the contract these names describe.

>>> import pandas as pd
>>> planted_membership(pd.DataFrame({"age": [25, 45, 45], "region": ["south", "north", "east"]})).tolist()
[True, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from fairmon.errors import DatasetError, MethodError
from fairmon.rules import parse_rules

__all__ = [
    "COLUMNS",
    "FEATURE_COLUMNS",
    "SENSITIVE_COLUMNS",
    "PLANTED_ATTRIBUTES",
    "DECOY_COLUMNS",
    "CATEGORICAL_COLUMNS",
    "LABEL_COLUMN",
    "ID_COLUMN",
    "TIME_COLUMN",
    "PLANTED_RULE",
    "PLANTED_QUERY",
    "StreamWindow",
    "SyntheticStream",
    "planted_membership",
    "evaluate_rule",
]

FEATURE_COLUMNS: tuple[str, ...] = (
    "age",
    "region",
    "income",
    "debt_ratio",
    "employment_years",
    "education",
    "student",
    "account_years",
    "branch",
)
SENSITIVE_COLUMNS: tuple[str, ...] = ("sex", "race")
PLANTED_ATTRIBUTES: tuple[str, ...] = ("age", "region")
DECOY_COLUMNS: tuple[str, ...] = ("student", "account_years", "branch")
LABEL_COLUMN = "repaid"
ID_COLUMN = "applicant_id"
TIME_COLUMN = "event_time"
COLUMNS: tuple[str, ...] = (ID_COLUMN, TIME_COLUMN, *FEATURE_COLUMNS, *SENSITIVE_COLUMNS, LABEL_COLUMN)
CATEGORICAL_COLUMNS: tuple[str, ...] = ("region", "education", "student", "branch", "sex", "race")

PLANTED_AGE_MAX = 30
PLANTED_REGION = "north"
PLANTED_RULE = f"age <= {PLANTED_AGE_MAX} OR region = {PLANTED_REGION}"
#: the same rule as a ``DataFrame.query`` expression
PLANTED_QUERY = f"age <= {PLANTED_AGE_MAX} or region == '{PLANTED_REGION}'"

REGIONS = ("north", "south", "east", "west")
REGION_P = (0.32, 0.26, 0.22, 0.20)
BRANCHES = ("harbor", "midtown", "riverside", "uptown", "online")  # main branch of each region, then online
EDUCATION = ("primary", "secondary", "bachelor", "master")
EDUCATION_P = (0.15, 0.45, 0.28, 0.12)
RACES = ("white", "black", "hispanic", "asian", "other")
RACE_P = (0.60, 0.13, 0.18, 0.06, 0.03)

ERR_RULE = "cannot evaluate rule {rule!r}: {problem}"
ERR_ARGS = "invalid stream arguments: {problem}"
ERR_CALIBRATION = (
    "could not calibrate the label disadvantage to a decision DScore of {target:.3f} "
    "(reachable range {low:.3f}..{high:.3f}); choose a smaller base_dscore/dscore_rise"
)


@dataclass(frozen=True)
class StreamWindow:
    """One daily window: ``[start, end)``, its rows, and the ground-truth planted-group membership.

    Examples
    --------
    >>> from fairmon.datasets import generate_stream
    >>> w = generate_stream(n_windows=2, rows_per_window=100, drift_window=1, train_windows=1).windows[1]
    >>> w.index, (w.end - w.start).days, len(w.frame) == len(w.membership)
    (1, 1, True)
    """

    index: int
    start: datetime
    end: datetime
    frame: pd.DataFrame
    membership: np.ndarray

    @property
    def day(self) -> str:
        return self.start.strftime("%Y-%m-%d")


@dataclass(frozen=True)
class SyntheticStream:
    """The generated windows plus the planted rule and column roles (see the module contract).

    Examples
    --------
    >>> from fairmon.datasets import generate_stream
    >>> s = generate_stream(n_windows=2, rows_per_window=100, drift_window=1, train_windows=1)
    >>> len(s.frame()), s.membership().shape, s.frame(windows=[1])["window"].unique().tolist()
    (200, (200,), [1])
    """

    windows: list[StreamWindow]
    planted_rule: str
    planted_query: str
    planted_attributes: tuple[str, ...]
    decoy_columns: tuple[str, ...]
    feature_columns: tuple[str, ...]
    sensitive_columns: tuple[str, ...]
    label_column: str
    id_column: str
    time_column: str
    favorable_label: int
    drift_window: int
    base_dscore: float
    dscore_rise: float
    random_state: int
    train_windows: int
    #: calibrated disadvantage of the planted group in the label process (logit units)
    delta_base: float
    #: pooled decision DScore of the production model on windows < drift_window at calibration
    calibrated_base_dscore: float | None
    tolerance: float
    start: datetime
    _uniforms: tuple[np.ndarray, ...] = field(repr=False, compare=False, default=())

    def frame(self, windows: Sequence[int] | None = None) -> pd.DataFrame:
        """Rows of the chosen windows (all by default) concatenated, with a ``window`` column."""
        idx = range(len(self.windows)) if windows is None else windows
        parts = [self.windows[i].frame.assign(window=i) for i in idx]
        return pd.concat(parts, ignore_index=True)

    def membership(self, windows: Sequence[int] | None = None) -> np.ndarray:
        """Ground-truth planted-group membership of the chosen windows, concatenated."""
        idx = range(len(self.windows)) if windows is None else windows
        return np.concatenate([self.windows[i].membership for i in idx])

    def label_uniforms(self, windows: Sequence[int]) -> np.ndarray:
        """The uniforms the labels were drawn from (common random numbers for relabelling)."""
        return np.concatenate([self._uniforms[i] for i in windows])


def planted_membership(frame: pd.DataFrame) -> np.ndarray:
    """Ground-truth membership of the planted group (:data:`PLANTED_RULE`) for raw rows.

    Examples
    --------
    >>> planted_membership(pd.DataFrame({"age": [25, 45], "region": ["south", "east"]})).tolist()
    [True, False]
    """
    return np.asarray(
        (frame["age"].to_numpy() <= PLANTED_AGE_MAX) | (frame["region"].to_numpy() == PLANTED_REGION)
    ).astype(bool)


# ---------------------------------------------------------------------- rules
def evaluate_rule(rule: str, frame: pd.DataFrame) -> np.ndarray:
    """Evaluate a rule in the planted-rule syntax (:func:`fairmon.rules.parse_rules`) on raw rows.

    >>> df = pd.DataFrame({"age": [20, 40], "region": ["south", "north"]})
    >>> evaluate_rule("age <= 30 OR region = north", df).tolist()
    [True, True]
    """
    try:
        return parse_rules(rule).membership(frame)
    except MethodError as exc:
        raise DatasetError(ERR_RULE.format(rule=rule, problem=str(exc))) from exc
