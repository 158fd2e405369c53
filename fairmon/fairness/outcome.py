"""Outcome fairness per protected attribute and intersection, with stratified bootstrap CIs.

One rich result (:class:`OutcomeResult`, tidy :class:`MetricRow` s) does the work; the short
functions (:func:`demographic_parity_difference`, ...) are thin views on it, the fairlearn way.

Conventions
-----------
* ``y_pred`` is the *favorable indicator* (1 = the model's decision is the favorable class);
  ``y_true`` is 1 where the favorable outcome was deserved. NaN marks a missing value.
* Groups: one grouping per declared attribute, and per intersection ``"race&sex"``. An intersection
  group is keyed by the tuple of its members' values; its name joins them with ``"&"`` in the same
  order (``"Black&Female"``), a literal ``&`` or ``\\`` inside a value escaped with ``\\``
  (:func:`group_key`; :func:`parse_group_key` gives the tuple back), so distinct groups never share
  a name. A missing sensitive
  value becomes its own group ``"(missing)"``: groups are never dropped silently. Groups with fewer
  than ``min_group_size`` usable rows get a row with status ``"insufficient"`` (value NaN) and take no
  part in the disparity metrics.
* Per-group metrics: ``selection_rate``; with labels ``tpr``, ``fpr``, ``fnr``. Disparities over the
  sufficient groups of one grouping (``group`` is None on these rows): ``dp_difference`` (max − min
  selection rate), ``dp_ratio`` (min / max selection rate, i.e. disparate impact; 0/0 is defined as 1,
  no disparity), ``eop_difference`` (equal opportunity: max − min TPR) and ``eodds_difference``
  (equalized odds: the larger of the TPR and FPR max − min; fairlearn's ``worst_case``).
* Labels: when ``y_true`` is None or entirely missing, label-based rows have status
  ``"labels_pending"`` (the window is stored as ``labels_pending``; ``fairmon backfill --status
  labels_pending`` re-runs such windows once the labels have arrived). Partially missing
  labels are excluded row-wise and counted in ``n_nan``.
* Confidence intervals: **bootstrap, stratified by group** (every group keeps its size in every
  replicate, as in a production window where the group sizes are not what is uncertain). For a
  binary statistic, resampling the rows of a group with replacement is distributionally identical to
  drawing the group's cell counts from a multinomial with the observed cell frequencies, so we draw
  the counts directly (exact, and O(groups × replicates) instead of O(rows × replicates)). Per-group
  rates get the Wilson score interval (``ci_method="wilson"``, the default since session 23; the
  bootstrap percentile, ``"percentile"``, is ``[0, 0]`` for a group of 30 with no favourable decision). Disparities (``disparity_ci="simultaneous"``, the default) get
  an interval derived from max-t simultaneous intervals of all pairwise group differences (log rates
  for ``dp_ratio``; TPR and FPR pairs together for ``eodds_difference``), which accounts for the
  upward bias of a max − min over noisy rates: it covers at ≥ its nominal level with many and small
  groups, its lower bound reaches 0 at zero disparity, and with two groups it is the studentized
  interval of the difference (method and measured coverage: :mod:`fairmon.fairness._outcome_ci`,
  ``benchmarks/ci_coverage``). ``disparity_ci="percentile"`` keeps the percentile interval of the
  replicate max − min (biased; for comparison). A replicate in which a rate of a statistic is
  undefined (e.g. no positives drawn in a group) is skipped for that statistic — never computed over
  the remaining groups — and counted in the row's ``n_skipped``. BCa is not offered: it needs a
  jackknife per grouping and does not remove the max − min bias.

Examples
--------
>>> import numpy as np, pandas as pd
>>> s = pd.Series(["a"] * 50 + ["b"] * 50, name="grp")
>>> y_pred = np.r_[np.ones(30), np.zeros(20), np.ones(10), np.zeros(40)]
>>> res = outcome_metrics(y_pred, sensitive_features=s, n_bootstrap=200, min_group_size=10)
>>> round(res.get("dp_difference", "grp").value, 2)
0.4
>>> round(demographic_parity_ratio(y_pred, sensitive_features=s), 3)
0.333
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import MethodError
from fairmon.fairness._outcome_counts import N_STATES, group_stats, row_states
from fairmon.fairness._outcome_groups import (
    ERR_LENGTH,
    ERR_NO_SENSITIVE,
    ERR_NOT_BINARY,
    ERR_UNKNOWN_ATTRIBUTE,
    INTERSECTION_SEP,
    MISSING_GROUP,
    as_binary,
    group_key,
    groupings,
    parse_group_key,
    sensitive_frame,
)
from fairmon.fairness._outcome_rows import rows_for_grouping
from fairmon.fairness._outcome_types import (
    DEFAULT_METRICS,
    DISPARITY_METRICS,
    ERR_BOOTSTRAP,
    ERR_CONFIDENCE,
    ERR_MIN_GROUP,
    ERR_UNKNOWN_METRIC,
    GROUP_METRICS,
    LABEL_METRICS,
    CIMethod,
    DisparityCI,
    MetricRow,
    OutcomeResult,
)

__all__ = [  # pinned with fairmon.fairness.__all__ (tests/fairness/test_rumie_public_surface.py)
    "MetricRow",
    "OutcomeResult",
    "outcome_metrics",
    "selection_rate",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "GROUP_METRICS",
    "DISPARITY_METRICS",
    "LABEL_METRICS",
    "DEFAULT_METRICS",
    "MISSING_GROUP",
    "INTERSECTION_SEP",
]
# also importable from here (re-exported from the private modules): group_key, parse_group_key and
# the ERR_* texts
_REEXPORTED = (group_key, parse_group_key, ERR_LENGTH, ERR_NO_SENSITIVE, ERR_NOT_BINARY, ERR_UNKNOWN_ATTRIBUTE,
               ERR_BOOTSTRAP, ERR_CONFIDENCE, ERR_MIN_GROUP, ERR_UNKNOWN_METRIC)

ERR_DISPARITY_CI = "disparity_ci must be 'simultaneous' or 'percentile', got {value!r}"
ERR_CI_METHOD = "ci_method must be 'wilson' or 'percentile', got {value!r}"
ERR_ROW_COUNTS = "row_counts must be non-negative whole numbers (the multiplicity of each row)"


def outcome_metrics(
    y_pred: Any,
    *,
    sensitive_features: Any,
    y_true: Any = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    intersections: bool | Sequence[Sequence[str]] = True,
    min_group_size: int = 30,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    ci_method: CIMethod = "wilson",
    disparity_ci: DisparityCI = "simultaneous",
    random_state: int | None = 0,
    row_counts: Any = None,
) -> OutcomeResult:
    """Outcome fairness with stratified-bootstrap confidence intervals.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        Favorable indicator of the model's decisions (0/1/bool; NaN = missing).
    sensitive_features : DataFrame, Series, mapping or array
        The declared protected attributes, one column each.
    y_true : array-like of shape (n,), optional
        Deserved-favorable labels; None or all-NaN → label metrics are ``labels_pending``.
    metrics : sequence of str
        Subset of :data:`GROUP_METRICS` + :data:`DISPARITY_METRICS`.
    intersections : bool or sequence of attribute-name sequences
        True: every combination of two or more attributes; False: none; or the listed ones.
    min_group_size : int
        Groups with fewer usable rows are reported as ``insufficient``.
    n_bootstrap : int
        Bootstrap replicates (0 → no intervals, NaN bounds).
    confidence : float
        Nominal coverage of the intervals.
    ci_method : {"wilson", "percentile"}
        Interval construction of the per-group rates: the Wilson score interval (default; keeps its
        coverage for small groups and rates of 0 or 1) or the bootstrap percentile (see module docstring).
    disparity_ci : {"simultaneous", "percentile"}
        Interval construction of the disparities: max-t simultaneous (default; covers with many,
        small groups and at zero disparity) or the percentile of the replicate max − min.
    random_state : int or None
        Seed of the bootstrap; the same inputs and seed give the same intervals.
    row_counts : array-like of shape (n,), optional
        Multiplicity of each row (non-negative integers): the rows are distinct (attributes,
        decision, label) combinations with their counts, e.g. a ``GROUP BY`` computed in the database
        (:func:`fairmon.sources.load_window_counts`). The result equals that of the expanded rows.

    Returns
    -------
    OutcomeResult

    Examples
    --------
    >>> import numpy as np
    >>> r = outcome_metrics(np.array([1, 1, 0, 0]), sensitive_features={"g": ["a", "a", "b", "b"]},
    ...                     min_group_size=1, n_bootstrap=0)
    >>> r.get("dp_difference", "g").value
    1.0
    """
    unknown = [m for m in metrics if m not in DEFAULT_METRICS]
    if unknown:
        raise MethodError(ERR_UNKNOWN_METRIC.format(metric=unknown[0], known=list(DEFAULT_METRICS)))
    if not 0.0 < confidence < 1.0:
        raise MethodError(ERR_CONFIDENCE.format(value=confidence))
    if n_bootstrap != 0 and n_bootstrap < 50:
        raise MethodError(ERR_BOOTSTRAP.format(value=n_bootstrap))
    if min_group_size < 0:
        raise MethodError(ERR_MIN_GROUP.format(value=min_group_size))
    if disparity_ci not in ("simultaneous", "percentile"):
        raise MethodError(ERR_DISPARITY_CI.format(value=disparity_ci))
    if ci_method not in ("wilson", "percentile"):
        raise MethodError(ERR_CI_METHOD.format(value=ci_method))

    pred = as_binary(y_pred, "y_pred")
    n = pred.shape[0]
    frame = sensitive_frame(sensitive_features, n)
    if y_true is None:
        label = np.full(n, np.nan)
    else:
        label = as_binary(y_true, "y_true")
        if label.shape[0] != n:
            raise MethodError(ERR_LENGTH.format(n=n, what="y_true", m=label.shape[0]))
    weights = None
    if row_counts is not None:
        weights = np.asarray(row_counts, dtype=np.float64).ravel()
        if weights.shape[0] != n:
            raise MethodError(ERR_LENGTH.format(n=n, what="row_counts", m=weights.shape[0]))
        if not (np.isfinite(weights).all() and (weights >= 0).all() and (weights == np.round(weights)).all()):
            raise MethodError(ERR_ROW_COUNTS)
    labels_pending = bool(np.isnan(label[weights != 0] if weights is not None else label).all())
    wanted = set(metrics)
    rng = np.random.default_rng(random_state)
    B = int(n_bootstrap)

    state = row_states(pred, label)
    rows: list[MetricRow] = []
    for attr, names, codes in groupings(frame, intersections):
        counts = np.bincount(codes * N_STATES + state, weights=weights, minlength=len(names) * N_STATES)
        present = np.bincount(codes, weights=weights, minlength=len(names)) > 0
        if not present.all():  # a combination counted zero times forms no group
            names = [name for name, keep in zip(names, present, strict=True) if keep]
            counts = counts.reshape(-1, N_STATES)[present].ravel()
        stats = group_stats(names, counts.reshape(-1, N_STATES).astype(np.int64), rng, B)
        rows.extend(rows_for_grouping(attr, stats, wanted, min_group_size, confidence, labels_pending, disparity_ci,
                                      ci_method))
    return OutcomeResult(
        rows=tuple(rows), confidence=confidence, n_bootstrap=B, ci_method=ci_method,
        random_state=random_state, min_group_size=min_group_size, labels_pending=labels_pending,
        attributes=tuple(frame.columns), disparity_ci=disparity_ci,
    )


# ------------------------------------------------------------------------------ thin functions


def _single(
    metric: str, y_pred: Any, sensitive_features: Any, y_true: Any = None
) -> float:
    """Point value of one disparity over the (intersected) groups of ``sensitive_features``."""
    pred = as_binary(y_pred, "y_pred")
    frame = sensitive_frame(sensitive_features, pred.shape[0])
    if frame.shape[1] > 1:
        _, names, codes = groupings(frame, [tuple(frame.columns)])[-1]
        frame = pd.DataFrame({"groups": np.asarray(names, dtype=object)[codes]})
    res = outcome_metrics(
        pred, sensitive_features=frame, y_true=y_true, metrics=(metric,), intersections=False,
        min_group_size=1, n_bootstrap=0,
    )
    return res.get(metric, str(frame.columns[0])).value


def selection_rate(y_pred: Any) -> float:
    """Share of favorable decisions (NaN ignored).

    >>> selection_rate([1, 0, 1, 1])
    0.75
    """
    pred = as_binary(y_pred, "y_pred")
    return float(np.nanmean(pred)) if np.isfinite(pred).any() else float("nan")


def demographic_parity_difference(y_pred: Any, *, sensitive_features: Any) -> float:
    """Largest minus smallest group selection rate (several columns → their intersection).

    >>> demographic_parity_difference([1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    return _single("dp_difference", y_pred, sensitive_features)


def demographic_parity_ratio(y_pred: Any, *, sensitive_features: Any) -> float:
    """Smallest over largest group selection rate (disparate impact; 1 = parity).

    >>> demographic_parity_ratio([1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    return _single("dp_ratio", y_pred, sensitive_features)


def equal_opportunity_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> float:
    """Largest minus smallest group true-positive rate.

    >>> equal_opportunity_difference([1, 1, 1, 1], [1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    return _single("eop_difference", y_pred, sensitive_features, y_true)


def equalized_odds_difference(y_true: Any, y_pred: Any, *, sensitive_features: Any) -> float:
    """The larger of the TPR and FPR max − min differences between groups.

    >>> equalized_odds_difference([1, 0, 1, 0], [1, 1, 1, 0], sensitive_features=["a", "a", "b", "b"])
    1.0
    """
    return _single("eodds_difference", y_pred, sensitive_features, y_true)
