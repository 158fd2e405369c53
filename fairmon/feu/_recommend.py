"""Which FEU candidate to recommend, if any: feasible, better than production by more than noise.

The rule (issue 16), applied on the **validation** split:

1. only candidates that satisfy the search's constraints (positive-rate band around production,
   utility no worse than production's minus the tolerance) are eligible — infeasible ones stay in
   the results, marked;
2. a candidate must improve the DP difference on the production model by more than its noise: in a
   paired bootstrap of the validation rows (same resampled rows for both models), the one-sided 95%
   lower bound of ``DP(production) - DP(candidate)`` must be above 0;
3. among those, the **lowest validation DP** wins (:func:`choose_lowest_dp`), with differences
   within noise treated as ties: every eligible candidate whose DP is within one bootstrap standard
   error of the lowest one (the SE of that lowest candidate's DP, from the same resamples) is tied;
   among the tied ones, GESD differences within GESD's own noise floor (``GESDResult.noise_floor`` of
   the production model: a permutation null at the configured sample size) are ties as well, so the
   candidates whose GESD exceeds the tied set's lowest GESD by more than the floor drop out; of the
   rest, the highest validation utility wins (then the lowest evaluation id);
4. when no candidate passes, nothing is recommended: "no candidate better than production".

Why the lowest DP and not the paper's Chebyshev compromise (utility 0.4, DP 0.3, GESD 0.3): a team
retrains because a fairness metric drifted; every eligible candidate already keeps the utility
within the tolerance of production's and the positive rate within the band (the constraints), so
what distinguishes them is how much DP they remove. The Chebyshev choice weighs utility highest and
so kept picking the candidate with production's balanced accuracy and a DP gain barely above the
noise (benchmarks/feu_paper, issue 16 run of 2026-12-01: Adult's recommendations at 0.64 x
production's DP while lower-DP eligible candidates were on the front). Utility and GESD still count,
but only where the DP difference is within noise — a DP lower by less than its standard error is no
reason to give up utility or explanation fairness. The rule is applied to validation estimates
only; the test split is never seen by it.

Example
-------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> s = np.repeat(["a", "b"], 200); prod = np.r_[rng.random(200) < .7, rng.random(200) < .3].astype(int)
>>> fair = (rng.random(400) < .5).astype(int)
>>> round(dp_improvement_lower_bound(prod, fair, s, n_boot=200, random_state=0), 2) > 0
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairmon.errors import MethodError
from fairmon.feu._metrics import dp_difference

__all__ = ["DPGain", "dp_gain", "dp_improvement_lower_bound", "choose_lowest_dp", "NO_BETTER_CANDIDATE",
           "RULE"]

NO_BETTER_CANDIDATE = (
    "no candidate better than production: none of the {n} feasible Pareto candidates improves the DP "
    "difference on validation by more than its bootstrap noise"
)
#: one line naming the default mode's choice, for messages and records
RULE = ("lowest validation DP among the feasible candidates whose DP gain exceeds its bootstrap noise; "
        "DP within one SE of the lowest and GESD within its noise floor are ties, broken by utility")


@dataclass(frozen=True)
class DPGain:
    """Paired-bootstrap summary of a candidate's DP against production's, on the same rows."""

    lower_bound: float  #: one-sided lower bound of ``DP(production) - DP(candidate)``
    se: float  #: bootstrap standard error of the candidate's own DP


def dp_gain(
    yhat_production: np.ndarray, yhat_candidate: np.ndarray, s: np.ndarray, *, n_boot: int, random_state: int,
    level: float = 0.95,
) -> DPGain:
    """Lower bound of the DP gain over production and the SE of the candidate's DP (paired bootstrap).

    Example
    -------
    >>> s = np.repeat(["a", "b"], 100); prod = np.r_[np.ones(100), np.zeros(100)].astype(int)
    >>> g = dp_gain(prod, np.ones(200, dtype=int), s, n_boot=50, random_state=0)
    >>> g.lower_bound, g.se
    (1.0, 0.0)
    """
    rng = np.random.default_rng(random_state)
    n = len(s)
    diffs = np.empty(n_boot)
    cand = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        cand[b] = dp_difference(yhat_candidate[idx], s[idx])
        diffs[b] = dp_difference(yhat_production[idx], s[idx]) - cand[b]
    return DPGain(float(np.quantile(diffs, 1.0 - level)), float(np.std(cand, ddof=1)))


def dp_improvement_lower_bound(
    yhat_production: np.ndarray, yhat_candidate: np.ndarray, s: np.ndarray, *, n_boot: int, random_state: int,
    level: float = 0.95,
) -> float:
    """One-sided lower bound of ``DP(production) - DP(candidate)`` (paired bootstrap over rows)."""
    return dp_gain(yhat_production, yhat_candidate, s, n_boot=n_boot, random_state=random_state,
                   level=level).lower_bound


def choose_lowest_dp(
    dp: Sequence[float], dp_se: Sequence[float], gesd: Sequence[float], utility: Sequence[float],
    *, gesd_floor: float | None,
) -> int:
    """Index of the recommended candidate among eligible ones (rule step 3 of this module).

    ``dp``, ``dp_se``, ``gesd`` and ``utility`` are the eligible candidates' validation DP, the
    bootstrap SE of that DP, GESD (non-finite: worst) and utility, in evaluation-id order (ties go to
    the first). ``gesd_floor`` is GESD's noise floor (None: GESD differences are all real).

    Example
    -------
    >>> # 1 has the lowest DP; 0 is within its SE and has a lower GESD beyond the floor; 2 is not tied
    >>> choose_lowest_dp([0.05, 0.04, 0.09], [0.02, 0.02, 0.02], [0.01, 0.05, 0.0], [0.70, 0.72, 0.75],
    ...                  gesd_floor=0.02)
    0
    >>> # within the GESD floor, utility decides
    >>> choose_lowest_dp([0.05, 0.04], [0.02, 0.02], [0.01, 0.02], [0.70, 0.72], gesd_floor=0.02)
    1
    """
    n = len(dp)
    if n == 0 or not (len(dp_se) == len(gesd) == len(utility) == n):
        raise MethodError(f"choose_lowest_dp needs equal, non-empty inputs; got lengths "
                          f"{len(dp)}, {len(dp_se)}, {len(gesd)}, {len(utility)}")
    d = np.asarray(dp, dtype=float)
    best = int(np.argmin(d))
    se = float(dp_se[best]) if math.isfinite(float(dp_se[best])) else 0.0
    tied = [i for i in range(n) if d[i] <= d[best] + se]
    g = np.array([float(gesd[i]) if math.isfinite(float(gesd[i])) else math.inf for i in range(n)])
    g_min = min(g[i] for i in tied)
    margin = gesd_floor if gesd_floor is not None and math.isfinite(gesd_floor) else 0.0
    tied = [i for i in tied if g[i] <= g_min + margin] or tied
    return max(tied, key=lambda i: (float(utility[i]), -i))
