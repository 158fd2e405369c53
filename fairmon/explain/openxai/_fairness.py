"""Fairness of explanation quality: a base metric's gap between groups of a protected attribute.

OpenXAI's fairness metrics take, for each of the eleven base metrics, the absolute difference of its
mean over the majority and the minority subgroup. With more than two groups fairmon reports every
group's mean and, as the disparity, the range (max − min) of the group means — the two-group
formula is the special case. NaN per-row values (stability rows without a valid perturbation) are
left out of the means and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairmon.errors import MethodError

__all__ = ["GroupMeans", "group_means", "disparity", "ERR_ONE_GROUP", "ERR_GROUP_LEN"]

ERR_ONE_GROUP = "protected attribute {name!r} has a single group ({value!r}); a disparity needs at least two"
ERR_GROUP_LEN = "protected attribute {name!r} has {got} labels but there are {n} rows"


@dataclass(frozen=True)
class GroupMeans:
    """Per-group mean of one metric: labels, means, sizes and NaN counts (largest group first).

    Examples
    --------
    >>> group_means(np.array([1.0, 0.0, 1.0, 1.0]), ["a", "a", "b", "b"]).means.tolist()
    [0.5, 1.0]
    """

    labels: tuple[str, ...]
    means: np.ndarray
    n: np.ndarray
    n_nan: np.ndarray

    @property
    def disparity(self) -> float:
        """|majority − minority| for two groups; range of the group means for more.

        Examples
        --------
        >>> disparity(np.array([1.0, 0.0, 1.0, 1.0]), ["a", "a", "b", "b"])
        0.5
        """
        return self.disparity_among(1)

    def disparity_among(self, min_rows: int) -> float:
        """:attr:`disparity` over the groups with at least ``min_rows`` rows with a value (NaN when fewer
        than two are left): a group of one or four explained rows is noise, not a group mean to compare.

        Examples
        --------
        >>> gm = group_means(np.array([0.1, 0.2, 0.3, 0.4, 0.9]), ["a", "a", "b", "b", "c"])
        >>> round(gm.disparity, 2), round(gm.disparity_among(2), 2)
        (0.75, 0.2)
        """
        keep = ~np.isnan(self.means) & (self.n - self.n_nan >= min_rows)
        m = self.means[keep]
        if len(m) < 2:
            return float("nan")
        return float(m.max() - m.min())

    def small(self, min_rows: int) -> list[tuple[str, int]]:
        """``(label, rows with a value)`` of the groups :meth:`disparity_among` leaves out."""
        return [(lab, int(c - nn)) for lab, c, nn in zip(self.labels, self.n, self.n_nan, strict=True)
                if c - nn < min_rows]


def group_means(values: np.ndarray, groups: Sequence[object] | np.ndarray, *, name: str = "group") -> GroupMeans:
    """Mean of ``values`` per group label (NaN-aware), largest group first.

    Example
    -------
    >>> gm = group_means(np.array([1.0, 0.0, 0.5, np.nan]), ["a", "a", "b", "b"])
    >>> gm.labels, gm.means.tolist(), gm.n_nan.tolist(), gm.disparity
    (('a', 'b'), [0.5, 0.5], [0, 1], 0.0)
    """
    v = np.asarray(values, dtype=float)
    g = np.asarray([str(x) for x in np.asarray(groups, dtype=object).tolist()], dtype=object)
    if g.shape != v.shape:
        raise MethodError(ERR_GROUP_LEN.format(name=name, got=len(g), n=len(v)))
    labels, counts = np.unique(g, return_counts=True)
    if len(labels) < 2:
        raise MethodError(ERR_ONE_GROUP.format(name=name, value=labels[0] if len(labels) else None))
    order = sorted(range(len(labels)), key=lambda i: (-counts[i], str(labels[i])))
    means, ns, nans = [], [], []
    for i in order:
        sel = v[g == labels[i]]
        ok = sel[~np.isnan(sel)]
        means.append(float(ok.mean()) if len(ok) else float("nan"))
        ns.append(len(sel))
        nans.append(int(np.isnan(sel).sum()))
    return GroupMeans(tuple(str(labels[i]) for i in order), np.array(means), np.array(ns), np.array(nans))


def disparity(values: np.ndarray, groups: Sequence[object] | np.ndarray) -> float:
    """|mean(majority) − mean(minority)| (range of group means for more than two groups)."""
    return group_means(values, groups).disparity
