"""One rule for numbers that leave a computation: a finite float, or None.

JSON has no NaN and the store keeps NULL, so every boundary that writes or reads a metric (artifacts,
store records, reports, drift history) cleans values the same way.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite_float"]


def finite_float(value: Any) -> float | None:
    """``float(value)`` when that is finite, else None (None, NaN, inf and non-numbers alike).

    Examples
    --------
    >>> finite_float("0.25"), finite_float(float("nan")), finite_float(None), finite_float("x")
    (0.25, None, None, None)
    """
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None
