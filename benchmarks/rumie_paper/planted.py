"""Synthetic data with a planted discriminated group of one of four hand-written shapes (issue 17).

Columns: ``x1``, ``x2`` integers 0..99, ``x3`` a float with two decimals (about N(50, 10)), ``cat``
four categories ``a``..``d`` of equal frequency, and two unrelated columns (``noise``, ``other``).
Favourable decisions are drawn at 0.6; inside the planted group each favourable decision is flipped
to unfavourable with probability ``flip`` (expected DScore ``0.6 * flip``). Every planted group holds
about half the rows, inside the paper's bounds ``[0.45, 0.55]``.

Also loaded by ``tests/fairness/_rumie_data.py`` (by file path; ``benchmarks`` is not a package).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the planted rule of each shape, in the rule syntax of :func:`fairmon.rules.parse_rules`
SHAPES = {
    "threshold": "x1 <= 50",
    "and": "x1 <= 70 AND x2 > 29",
    "or": "x1 <= 29 OR x2 > 70",
    "category_or_threshold": "cat = c OR x3 <= 45.7",
}
FLIP_RATES = (0.25, 0.5)
BASE_RATE = 0.6


def planted_shape(shape: str, n: int, *, flip: float, random_state: int = 0) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """(attribute frame, favourable decisions, planted membership) for one shape of :data:`SHAPES`."""
    rng = np.random.default_rng(random_state)
    X = pd.DataFrame({
        "x1": rng.integers(0, 100, n),
        "x2": rng.integers(0, 100, n),
        "x3": np.round(rng.normal(50.0, 10.0, n), 2),
        "cat": rng.choice(["a", "b", "c", "d"], n),
        "noise": rng.normal(size=n).round(3),
        "other": rng.choice(["u", "v", "w"], n),
    })
    member = {
        "threshold": lambda: X["x1"] <= 50,
        "and": lambda: (X["x1"] <= 70) & (X["x2"] > 29),
        "or": lambda: (X["x1"] <= 29) | (X["x2"] > 70),
        "category_or_threshold": lambda: (X["cat"] == "c") | (X["x3"] <= 45.7),
    }[shape]().to_numpy()
    fav = rng.random(n) < BASE_RATE
    fav &= ~(member & (rng.random(n) < flip))
    return X, fav, member
