"""IE's early stop (issue 21 req 1): it stops once the groups settle, reports the iterations run, and
gives the answer of the full run; the spec section reaches ``mine``."""

from __future__ import annotations

import numpy as np
import pytest
from _rumie_data import planted_frame

from fairmon.config import RumieSpec
from fairmon.errors import MethodError
from fairmon.fairness._rumie_core import early_stop_settings
from fairmon.fairness._rumie_ie import EarlyStop
from fairmon.fairness.rumie import mine

KW = {"k": 4, "alpha": 0.4, "beta": 0.6, "iterations": 2500, "random_state": 0, "significance": "none",
      "num_threads": 1}


def test_stops_when_the_groups_settle_with_the_answer_of_the_full_run() -> None:
    X, fav, member = planted_frame(3_000, gap=0.4, random_state=0)
    full = mine(X, fav, early_stop={"tol": 0.0}, **KW)
    early = mine(X, fav, early_stop={"tol": 0.01, "patience": 200, "check_every": 25}, **KW)
    assert full.search["iterations_run"] == 2500 and full.search["stopped_early"] is False
    assert early.search["stopped_early"] is True and 200 <= early.search["iterations_run"] < 2500
    assert early.search["iterations_run"] % 25 == 0  # stops only at a check
    assert early.rule == full.rule and np.array_equal(early.mask, full.mask)
    assert early.settings["early_stop"] == {"tol": 0.01, "patience": 200, "check_every": 25}


def test_spec_section_defaults_are_mines_defaults_and_reach_it() -> None:
    spec = RumieSpec().early_stop
    assert early_stop_settings(spec) == EarlyStop() == early_stop_settings(None)
    X, fav, _ = planted_frame(400, random_state=1)
    ev = mine(X, fav, early_stop=RumieSpec(early_stop={"tol": 0.0}).early_stop, **{**KW, "iterations": 120})
    assert ev.search["iterations_run"] == 120 and ev.settings["early_stop"]["tol"] == 0.0


@pytest.mark.parametrize("bad", [{"tol": -0.1}, {"tol": float("nan")}, {"patience": 0}, {"check_every": 0}])
def test_bad_early_stop_settings_are_errors(bad: dict[str, float]) -> None:
    with pytest.raises(MethodError, match="early_stop"):
        early_stop_settings(bad)


def test_hard_groups_clip_the_size_into_the_bounds() -> None:
    import torch

    from fairmon.fairness._rumie_ie import _Matrices

    Z = np.arange(10, dtype=float)[:, None] - 4.5  # scores theta*z + b: 5 rows >= 0 at theta 1, b 0
    mats = _Matrices(Z, np.zeros(10), dtype=torch.float64, device=torch.device("cpu"), layout="dense")
    theta = torch.tensor([[1.0], [1.0], [-1.0]], dtype=torch.float64)
    b = torch.tensor([0.0, -4.0, 10.0], dtype=torch.float64)
    groups = mats.hard_groups(theta, b, k=1, alpha=0.3, beta=0.6).numpy()
    # in the bounds: the cut itself; 1 row >= 0: the 3 highest scores; all 10 rows: the 6 highest
    assert groups.sum(1).tolist() == [5, 3, 6]
    assert groups[0].tolist() == [False] * 5 + [True] * 5 and groups[1, 7:].all() and groups[2, :6].all()
    assert mats.hard_groups(theta, b, k=1, alpha=0.0, beta=0.6).sum(1).tolist() == [5, 1, 6]  # never empty
