"""Which FEU candidate to recommend, if any: feasible, better than production by more than noise.

The rule (issue 16), applied on the **validation** split:

1. only candidates that satisfy the search's constraints (positive-rate band around production,
   utility floor) are eligible — infeasible ones stay in the results, marked;
2. a candidate must improve the DP difference on the production model by more than its noise: in a
   paired bootstrap of the validation rows (same resampled rows for both models), the one-sided 95%
   lower bound of ``DP(production) - DP(candidate)`` must be above 0;
3. among those, the Chebyshev choice (weights and scale of the settings) on ``(1 - utility, DP,
   GESD)``, where GESD counts only above its noise floor (``max(GESD - floor, 0)``, so differences
   within the floor are ties);
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

__all__ = ["dp_improvement_lower_bound", "gesd_noise_floor", "NO_BETTER_CANDIDATE"]

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


def gesd_noise_floor(
    stability: np.ndarray, groups: np.ndarray, *, n_permutations: int, random_state: int, level: float = 0.95
) -> float:
    """GESD's noise floor: the ``level`` quantile of GESD under random group labels.

    The per-instance stabilities of one GESD evaluation are kept and the group labels permuted (no
    re-explanation needed), so the floor is the GESD a model with no explanation disparity shows at this
    sample size. GESD is ``|S_a - S_b|`` for two groups and the variance of the group means for more.

    >>> rng = np.random.default_rng(1)
    >>> floor = gesd_noise_floor(rng.random(100), np.repeat(["a", "b"], 50), n_permutations=200, random_state=0)
    >>> 0 < floor < 0.2
    True
    """
    stability, groups = np.asarray(stability, dtype=float), np.asarray(groups)
    ok = np.isfinite(stability)
    stability, groups = stability[ok], groups[ok]
    labels, codes = np.unique(groups, return_inverse=True)
    if len(labels) < 2:
        return float("nan")
    rng = np.random.default_rng(random_state)
    null = np.empty(n_permutations)
    for i in range(n_permutations):
        perm = rng.permutation(codes)
        means = np.bincount(perm, weights=stability, minlength=len(labels)) / np.bincount(perm, minlength=len(labels))
        null[i] = abs(means[0] - means[1]) if len(labels) == 2 else float(np.var(means))
    return float(np.quantile(null, level))
