"""SynthGauss: synthetic data with ground-truth explanations (OpenXAI paper, Knowl 2).

Why: ground-truth faithfulness metrics (PRA, RC, FA, RA, SA, SRA) need true feature importances,
which real models lack. SynthGauss makes them known by construction:

* features are independent: every cluster is ``N(μ_k, I_d)``;
* clusters are well separated: centres on the coordinate axes at ``distance`` (multiples of it
  when there are more clusters than dimensions; ± when ``n_clusters = 2d``), the layout of the
  reference generator ``openxai/dgp_synthetic.py``; intra-cluster spread (unit variance) is much
  smaller than the distance between centres;
* each cluster k has a binary mask ``m_k ~ Bernoulli(sparsity)^d`` (at least ``min_active``
  active features, a documented addition so no cluster is pure noise) and weights
  ``w_k ~ U(low, high)^d``; ``p_i = σ(x_iᵀ (m_k ⊙ w_k))``;
* labels ``y_i ~ Bernoulli(p_i)`` as in the paper (``labels="bernoulli"``), or
  ``p_i > t`` with ``t`` chosen for a 50/50 class split as the reference code does
  (``labels="threshold"``);
* the ground-truth explanation of ``x_i`` is its cluster's mask ``m_k`` (``masks``); the signed
  version ``m_k ⊙ w_k`` (``masked_weights``) also fixes directions for SA/SRA.

The paper samples one weight vector per cluster; the reference code shares one across clusters
(``shared_weights=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from fairmon.errors import MethodError

__all__ = ["SynthGauss", "synthgauss", "cluster_centers"]


@dataclass(frozen=True)
class SynthGauss:
    """A SynthGauss sample: data, labels, probabilities and per-row ground-truth explanations."""

    X: np.ndarray
    y: np.ndarray
    probs: np.ndarray
    cluster: np.ndarray
    masks: np.ndarray
    masked_weights: np.ndarray
    centers: np.ndarray
    cluster_masks: np.ndarray
    cluster_weights: np.ndarray

    @property
    def feature_names(self) -> list[str]:
        return [f"x{j}" for j in range(self.X.shape[1])]

    def frame(self, *, label: str = "y") -> pd.DataFrame:
        """Features ``x0..x{d-1}`` and the label as a DataFrame (for a :class:`FeatureSchema`)."""

        df = pd.DataFrame(self.X, columns=self.feature_names)
        df[label] = self.y
        return df


def cluster_centers(n_clusters: int, d: int, distance: float) -> np.ndarray:
    """Axis-aligned, well separated centres (the reference generator's layout).

    Examples
    --------
    >>> cluster_centers(2, 3, 1.0).shape
    (2, 3)
    """
    mus = np.zeros((n_clusters, d))
    if n_clusters == 2 * d:
        for i in range(d):
            mus[i, i] = distance
            mus[d + i, i] = -distance
        return mus
    for c in range(n_clusters):
        ring, axis = divmod(c, d)
        mus[c, axis] = distance * (1 if ring == 0 else 2 * ring)
    return mus


def synthgauss(
    n_samples: int = 1000,
    *,
    n_features: int = 20,
    n_clusters: int = 10,
    distance: float = 5.0,
    sparsity: float = 0.5,
    weight_range: tuple[float, float] = (-1.0, 1.0),
    shared_weights: bool = False,
    min_active: int = 1,
    labels: Literal["bernoulli", "threshold"] = "bernoulli",
    random_state: int | None = 0,
) -> SynthGauss:
    """Draw a SynthGauss data set.

    Parameters
    ----------
    n_samples : int
        Rows; each row's cluster is drawn uniformly.
    n_features, n_clusters : int
        Dimension d and number of clusters K.
    distance : float
        Scale of the cluster centres (intra-cluster std is 1).
    sparsity : float
        Probability that a feature is active in a cluster's mask.
    weight_range : (low, high)
        Range of the uniform feature weights.
    shared_weights : bool
        One weight vector for all clusters (reference code) instead of one per cluster (paper).
    min_active : int
        Minimum active features per mask (masks are redrawn until they have that many).
    labels : {"bernoulli", "threshold"}
        ``y ~ Bernoulli(p)`` (paper) or a 50/50 threshold on ``p`` (reference code).

    Example
    -------
    >>> data = synthgauss(200, n_features=5, n_clusters=3, random_state=1)
    >>> data.X.shape, data.masks.shape, set(np.unique(data.y)) <= {0, 1}
    ((200, 5), (200, 5), True)
    >>> bool((data.masks == data.cluster_masks[data.cluster]).all())
    True
    """
    if n_samples < 1 or n_features < 1 or n_clusters < 1:
        raise MethodError(
            f"n_samples, n_features and n_clusters must be >= 1, got {n_samples}, {n_features}, {n_clusters}"
        )
    if not 0.0 < sparsity <= 1.0:
        raise MethodError(f"sparsity must be in (0, 1], got {sparsity}")
    if not 0 <= min_active <= n_features:
        raise MethodError(f"min_active must be in [0, {n_features}], got {min_active}")
    if labels not in ("bernoulli", "threshold"):
        raise MethodError(f"labels must be 'bernoulli' or 'threshold', got {labels!r}")
    low, high = weight_range
    rng = np.random.default_rng(random_state)
    d, K = n_features, n_clusters
    centers = cluster_centers(K, d, distance)
    masks = np.zeros((K, d), dtype=int)
    for k in range(K):
        while True:
            m = rng.binomial(1, sparsity, size=d)
            if m.sum() >= min_active:
                break
        masks[k] = m
    if shared_weights:
        weights = np.repeat(rng.uniform(low, high, size=(1, d)), K, axis=0)
    else:
        weights = rng.uniform(low, high, size=(K, d))
    cluster = rng.integers(0, K, size=n_samples)
    X = centers[cluster] + rng.standard_normal((n_samples, d))
    w_eff = masks[cluster] * weights[cluster]
    probs = 1.0 / (1.0 + np.exp(-(X * w_eff).sum(axis=1)))
    if labels == "bernoulli":
        y = rng.binomial(1, probs)
    else:
        grid = np.linspace(0, 1, 1000)
        fracs = np.array([(probs > t).mean() for t in grid])
        y = (probs > grid[np.argmin(np.abs(0.5 - fracs))]).astype(int)
    return SynthGauss(
        X=X,
        y=np.asarray(y, dtype=int),
        probs=probs,
        cluster=cluster,
        masks=masks[cluster],
        masked_weights=w_eff,
        centers=centers,
        cluster_masks=masks,
        cluster_weights=weights,
    )
