"""Planted-group recovery on the foundation's synthetic stream (issue 3 acceptance).

The rows come from :func:`fairmon.datasets.generate_stream` (planted attributes ``age`` and
``region``, decoys ``student``/``account_years``/``branch`` correlated with them, declared sensitive
``sex``/``race``). The decisions are drawn from the planted membership with DScore 0.15 (P(fav) 0.60
outside vs 0.45 inside), so the planted group *is* the most discriminated group. (The stream's
deployed logistic-regression model uses age linearly; with its decisions the most discriminated group
within the bounds is a different, higher-DScore one, so recovery of the planted rule is not a property
a correct miner can have on them.) The attribute set is the candidate sensitive attributes: planted,
decoys and declared ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from _rumie_data import jaccard

from fairmon.datasets import generate_stream
from fairmon.fairness.rumie import dscore, mine

ATTRIBUTES = ["age", "region", "student", "account_years", "branch", "sex", "race"]


@pytest.mark.slow
def test_planted_group_recovered_on_the_stream() -> None:
    stream = generate_stream(n_windows=1, rows_per_window=5000, drift_window=1, train_windows=1,
                             delta_base=0.0, random_state=0)
    w = stream.windows[0]
    assert set(stream.planted_attributes) == {"age", "region"}
    rng = np.random.default_rng(11)
    fav = rng.random(len(w.frame)) < np.where(w.membership, 0.45, 0.60)
    assert dscore(fav, w.membership) == pytest.approx(0.15, abs=0.04)
    # the paper's settings (IE-DT, k=5, 0.45..0.55, lam 1, lr 0.1, 2,500 iterations) with 8 restarts:
    # with the default 4 the best local optimum found here is a near miss (Jaccard ~0.86)
    ev = mine(w.frame[ATTRIBUTES], fav, restarts=8)
    assert ev.status == "ok" and ev.within_bounds
    assert jaccard(ev.mask, w.membership) >= 0.9
    assert {"age", "region"} <= set(ev.key_attributes)
    assert "age <=" in ev.rule and "region" in ev.rule
    assert ev.p_value is not None and ev.p_value < 0.01
