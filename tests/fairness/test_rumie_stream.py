"""Planted-group recovery on the foundation's synthetic stream (issue 3 acceptance).

The rows come from :func:`fairmon.datasets.generate_stream` (planted attributes ``age`` and
``region``, decoys ``student``/``account_years``/``branch`` correlated with them, declared sensitive
``sex``/``race``). The decisions are drawn from the planted membership with DScore 0.15 (P(fav) 0.60
outside vs 0.45 inside), so the planted group *is* the most discriminated group. The attribute set is
the candidate sensitive attributes: planted, decoys and declared ones.

The second test mines the *deployed* retrained model's decisions, as the demo does: its labels
disfavour the planted group and it sees age in scorecard bands, so it learns the step at age 30 (a
model linear in age learnt a slope, and the reported rules were ``age <= 38 OR region = north AND
account_years <= 12.4``, 0.028 above the planted rule's DScore, outside epsilon).
"""

from __future__ import annotations

import numpy as np
import pytest
from _rumie_data import jaccard

from fairmon.datasets import deploy_models, generate_stream
from fairmon.fairness.rumie import RuleSearchSettings, dscore, mine
from fairmon.rules import parse_rules

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


@pytest.mark.slow
def test_planted_rules_reported_on_the_retrained_models_decisions() -> None:
    """The demo's scenario (monitors/demo.yaml's RUMIE settings, 5,000-row windows): after the drift the
    reported rules are the planted rule, or one of the same size whose DScore is within epsilon of it."""
    stream = generate_stream(n_windows=4, rows_per_window=5000, drift_window=2, random_state=0)
    deployed = deploy_models(stream, "memory://test-rumie-stream-planted")
    eps = RuleSearchSettings().epsilon
    planted = parse_rules(stream.planted_rule)
    for w in stream.windows[stream.drift_window:]:
        fav = deployed.decisions(w)
        ev = mine(w.frame[ATTRIBUTES], fav, k=5, alpha=0.45, beta=0.55, iterations=600, restarts=4)
        reported = parse_rules(ev.rule)
        assert reported.n_conditions == planted.n_conditions and len(reported.rules) == len(planted.rules), ev.rule
        assert set(reported.columns) == {"age", "region"}, ev.rule
        assert abs(ev.dscore - dscore(fav, w.membership)) <= eps, (ev.rule, ev.dscore)
        assert jaccard(ev.mask, w.membership) >= 0.9
