"""Small numeric pieces of RUMIE: DScore, the best threshold cut within the size bounds, the test.

Kept free of torch and sklearn so the honest evaluation and the calibration benchmark can use them
without the heavy stack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairmon.errors import MethodError

__all__ = [
    "ERR_EMPTY_GROUP",
    "ERR_MASK_LENGTH",
    "CutChoice",
    "best_cut",
    "dscore",
    "group_rates",
    "two_proportion_test",
    "within_bounds",
]

ERR_EMPTY_GROUP = (
    "DScore needs a non-empty group and a non-empty complement; the group has {size} of {n} rows"
)
ERR_MASK_LENGTH = "favorable has {n_fav} values but the group mask has {n_mask}"


def group_rates(favorable: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(P(fav | group), P(fav | rest)); raises when either side is empty."""
    f = np.asarray(favorable, dtype=bool).ravel()
    m = np.asarray(mask, dtype=bool).ravel()
    if f.shape != m.shape:
        raise MethodError(ERR_MASK_LENGTH.format(n_fav=f.size, n_mask=m.size))
    size = int(m.sum())
    if size == 0 or size == m.size:
        raise MethodError(ERR_EMPTY_GROUP.format(size=size, n=m.size))
    return float(f[m].mean()), float(f[~m].mean())


def dscore(favorable: np.ndarray, mask: np.ndarray) -> float:
    """Discrimination score of a group (paper eq. 2): ``P(fav | rest) - P(fav | group)``.

    Positive values mean the group receives the favorable decision less often than everyone else.

    Parameters
    ----------
    favorable : array of bool or {0, 1}
        The model's decision per row (1 = favorable).
    mask : array of bool
        Group membership per row.

    Examples
    --------
    >>> dscore([1, 1, 0, 0], [False, False, True, True])
    1.0
    >>> round(dscore([1, 0, 1, 0, 1, 1], [True, True, True, False, False, False]), 4)
    0.0
    """
    p_in, p_out = group_rates(np.asarray(favorable), np.asarray(mask))
    return p_out - p_in


def within_bounds(size: int, n: int, alpha: float, beta: float) -> bool:
    """``alpha <= size/n <= beta`` with both sides non-empty (DScore needs both)."""
    if size < 1 or size > n - 1:
        return False
    frac = size / n
    tol = 1e-12
    return alpha - tol <= frac <= beta + tol


@dataclass(frozen=True)
class CutChoice:
    """A threshold ``tau`` on a score: the group is ``score >= tau``."""

    tau: float
    size: int
    dscore: float


def best_cut(scores: np.ndarray, favorable: np.ndarray, *, alpha: float, beta: float) -> CutChoice | None:
    """Threshold on ``scores`` with the highest DScore among groups ``{score >= tau}`` within bounds.

    Only cuts between distinct score values are allowed (tied rows stay together, so the group is
    still a threshold set of the same linear function). ``tau`` is the midpoint between the lowest
    score inside and the highest score outside, so new data is cut the same way. Returns ``None``
    when no cut puts the group size within ``[alpha, beta]``.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    f = np.asarray(favorable, dtype=np.float64).ravel()
    n = s.size
    if n < 2:
        return None
    order = np.argsort(-s, kind="stable")
    ss, fs = s[order], f[order]
    m = np.arange(1, n)  # group = first m rows in descending order
    distinct = ss[:-1] > ss[1:]
    frac = m / n
    ok = distinct & (frac >= alpha - 1e-12) & (frac <= beta + 1e-12)
    if not ok.any():
        return None
    a = np.cumsum(fs)[:-1]  # favorable count inside for each m
    total = fs.sum()
    d = (total - a) / (n - m) - a / m
    d = np.where(ok, d, -np.inf)
    j = int(np.argmax(d))
    tau = 0.5 * (ss[j] + ss[j + 1])
    return CutChoice(tau=float(tau), size=int(m[j]), dscore=float(d[j]))


def two_proportion_test(favorable: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """One-sided pooled two-proportion z-test that the group is favoured *less* than the rest.

    Returns ``(z, p_value)``. The group must have been chosen without looking at these rows
    (held-out evaluation); then, under "favorable is independent of membership", the p-value is
    approximately uniform. A side with no rows, or no variation at all, gives ``(0.0, 1.0)``.
    """
    f = np.asarray(favorable, dtype=bool).ravel()
    m = np.asarray(mask, dtype=bool).ravel()
    n1, n0 = int(m.sum()), int((~m).sum())
    if n1 == 0 or n0 == 0:
        return 0.0, 1.0
    x1, x0 = int(f[m].sum()), int(f[~m].sum())
    pooled = (x1 + x0) / (n1 + n0)
    var = pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n0)
    if var <= 0.0:
        return 0.0, 1.0
    z = (x0 / n0 - x1 / n1) / math.sqrt(var)
    return float(z), float(0.5 * math.erfc(z / math.sqrt(2.0)))
