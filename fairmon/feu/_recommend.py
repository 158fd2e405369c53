"""Which FEU candidate to recommend, if any: feasible, better than production by more than noise.

The rule (issue 16), applied on the **validation** split:

1. only candidates that satisfy the search's constraints (positive-rate band around production,
   utility floor) are eligible — infeasible ones stay in the results, marked;
2. a candidate must improve the DP difference on the production model by more than its noise: in a
   paired bootstrap of the validation rows (same resampled rows for both models), the one-sided 95%
   lower bound of ``DP(production) - DP(candidate)`` must be above 0;
3. among those, the Chebyshev choice (weights and scale of the settings) on ``(1 - utility, DP,
   GESD)``, where GESD counts only above the production model's GESD noise floor
   (``GESDResult.noise_floor``: ``max(GESD - floor, 0)``, so differences within the floor are ties);
4. when no candidate passes, nothing is recommended: "no candidate better than production".

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

import numpy as np

from fairmon.feu._metrics import dp_difference

__all__ = ["dp_improvement_lower_bound", "NO_BETTER_CANDIDATE"]

NO_BETTER_CANDIDATE = (
    "no candidate better than production: none of the {n} feasible Pareto candidates improves the DP "
    "difference on validation by more than its bootstrap noise"
)


def dp_improvement_lower_bound(
    yhat_production: np.ndarray, yhat_candidate: np.ndarray, s: np.ndarray, *, n_boot: int, random_state: int,
    level: float = 0.95,
) -> float:
    """One-sided lower bound of ``DP(production) - DP(candidate)`` (paired bootstrap over rows)."""
    rng = np.random.default_rng(random_state)
    n = len(s)
    diffs = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        diffs[b] = dp_difference(yhat_production[idx], s[idx]) - dp_difference(yhat_candidate[idx], s[idx])
    return float(np.quantile(diffs, 1.0 - level))
