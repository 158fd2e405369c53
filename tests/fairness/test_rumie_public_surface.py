"""The public surface of ``fairmon.fairness``: what a user calls, pinned (issue 14 req 7)."""

from __future__ import annotations

import fairmon.fairness as fairness
from fairmon.fairness import outcome, rumie

RUMIE = {"Evidence", "mine", "held_out_test", "enum_baseline", "dscore", "RuleSearchSettings", "RuleSetScore",
         "RuleSearchResult"}


def test_fairness_exports_outcome_and_rumie() -> None:
    assert set(fairness.__all__) == set(outcome.__all__) | RUMIE
    assert len(fairness.__all__) == len(set(fairness.__all__))
    for name in fairness.__all__:
        source = outcome if name in outcome.__all__ else rumie
        assert getattr(fairness, name) is getattr(source, name)
