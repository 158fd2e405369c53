"""RUMIE numeric pieces: hand-checked DScore, the bounded cut, the held-out test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairmon.errors import MethodError
from fairmon.fairness._rumie_stats import (
    ERR_EMPTY_GROUP,
    ERR_MASK_LENGTH,
    best_cut,
    two_proportion_test,
    within_bounds,
)
from fairmon.fairness.rumie import dscore


def test_dscore_hand_checked() -> None:
    # group rows 0..3: 1 of 4 favorable (0.25); rest rows 4..9: 5 of 6 favorable (0.8333)
    fav = np.array([1, 0, 0, 0, 1, 1, 1, 1, 1, 0])
    mask = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    assert dscore(fav, mask) == pytest.approx(5 / 6 - 1 / 4, abs=1e-12)
    # swapping group and complement flips the sign
    assert dscore(fav, ~mask) == pytest.approx(-(5 / 6 - 1 / 4), abs=1e-12)


def test_dscore_needs_both_sides() -> None:
    with pytest.raises(MethodError) as e:
        dscore([1, 0], [True, True])
    assert str(e.value) == ERR_EMPTY_GROUP.format(size=2, n=2)
    with pytest.raises(MethodError) as e:
        dscore([1, 0, 1], [True, False])
    assert str(e.value) == ERR_MASK_LENGTH.format(n_fav=3, n_mask=2)


def test_within_bounds_edges() -> None:
    assert within_bounds(45, 100, 0.45, 0.55)
    assert within_bounds(55, 100, 0.45, 0.55)
    assert not within_bounds(44, 100, 0.45, 0.55)
    assert not within_bounds(56, 100, 0.45, 0.55)
    assert not within_bounds(0, 100, 0.0, 1.0)  # DScore needs a non-empty group
    assert not within_bounds(100, 100, 0.0, 1.0)


def test_best_cut_respects_bounds_and_ties() -> None:
    scores = np.array([5.0, 4.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0])
    fav = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    c = best_cut(scores, fav, alpha=0.3, beta=0.5)
    assert c is not None
    # the four unfavoured rows on top form the best group (DScore 1.0)
    assert c.size == 4 and c.dscore == pytest.approx(1.0)
    assert ((scores >= c.tau).sum()) == 4
    # a bound forcing exactly 2 rows would split the tie at 4.0: not allowed -> only size 1 or 3
    c2 = best_cut(scores, fav, alpha=0.2, beta=0.2)
    assert c2 is None
    c3 = best_cut(scores, fav, alpha=0.3, beta=0.3)
    assert c3 is not None and c3.size == 3 and c3.tau == pytest.approx(3.5)


def test_two_proportion_test_values() -> None:
    # 100 vs 100 rows, 30% vs 50% favorable: z = 0.2 / sqrt(0.4*0.6*(2/100)) = 2.8868
    fav = np.r_[np.ones(30), np.zeros(70), np.ones(50), np.zeros(50)].astype(bool)
    mask = np.r_[np.ones(100), np.zeros(100)].astype(bool)
    z, p = two_proportion_test(fav, mask)
    assert z == pytest.approx(0.2 / math.sqrt(0.4 * 0.6 * 0.02), rel=1e-9)
    assert p == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-12)
    assert 0.001 < p < 0.003
    assert two_proportion_test(fav, np.ones(200, bool)) == (0.0, 1.0)
