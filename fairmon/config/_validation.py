"""The ``validation`` section: the data checks (a Great Expectations suite) every window must pass.

Examples
--------
>>> ValidationSpec(reference_data="ref.csv").range_mostly
0.99
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from fairmon.config._limits import MAX_CATEGORIES
from fairmon.config._messages import ERR_VALIDATION_REFERENCE
from fairmon.config._parsers import NonNegInt, SpecSection
from fairmon.config._paths import SpecPath
from fairmon.config._schedule import DateRange

__all__ = ["ValidationSpec"]

class ValidationSpec(SpecSection):
    """Data validation (Great Expectations suite derived from reference data).

    The suite is built from ``reference_data`` (a CSV/Parquet file) or from the data source over
    ``reference_window``, and stored at ``suite_path`` (default ``<artifact_location>/<name>/suite.json``).
    Numeric ranges are widened by ``range_margin`` times the reference range on both sides, and at
    least ``range_mostly`` of a window's values must fall inside (a unit change fails, one outlier does
    not); non-sensitive columns may have up to ``max_null_fraction`` nulls (sensitive attributes none,
    the label any: labels arrive late). Categorical columns with more than ``max_categories`` distinct
    reference values get no domain check.
    """

    enabled: bool = True
    reference_data: SpecPath | None = None
    reference_window: DateRange | None = None
    suite_path: SpecPath | None = None
    min_rows: NonNegInt = 100
    max_null_fraction: Annotated[float, Field(ge=0.0, le=1.0)] = 0.05
    range_margin: Annotated[float, Field(ge=0.0)] = 0.1
    range_mostly: Annotated[float, Field(gt=0.0, le=1.0)] = 0.99
    check_types: bool = True
    allow_unseen_categories: bool = False
    require_all_groups: bool = True
    max_categories: Annotated[int, Field(ge=1, le=MAX_CATEGORIES)] = 50

    @model_validator(mode="after")
    def _reference(self) -> ValidationSpec:
        if self.reference_data is not None and self.reference_window is not None:
            raise ValueError("reference_window: set either reference_data or reference_window, not both")
        if self.enabled and self.reference_data is None and self.reference_window is None:
            raise ValueError("reference_data: " + ERR_VALIDATION_REFERENCE)
        return self

