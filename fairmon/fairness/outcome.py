"""Outcome fairness per protected attribute and intersection, with stratified bootstrap CIs.

One rich result (:class:`OutcomeResult`, tidy :class:`MetricRow` s) does the work; the short
functions (:func:`demographic_parity_difference`, ...) are thin views on it, the fairlearn way.

Conventions
-----------
* ``y_pred`` is the *favorable indicator* (1 = the model's decision is the favorable class);
  ``y_true`` is 1 where the favorable outcome was deserved. NaN marks a missing value.
* Groups: one grouping per declared attribute, and per intersection ``"race&sex"`` whose group names
  join the members' values with ``"&"`` in the same order (``"Black&Female"``). A missing sensitive
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
* Confidence intervals: **percentile bootstrap, stratified by group** (every group keeps its size in
  every replicate, as in a production window where the group sizes are not what is uncertain). For a
  binary statistic, resampling the rows of a group with replacement is distributionally identical to
  drawing the group's cell counts from a multinomial with the observed cell frequencies, so we draw
  the counts directly (exact, and O(groups × replicates) instead of O(rows × replicates)). The
  disparity of each replicate is computed from the same replicate's group values, so the CI of
  ``eodds_difference`` respects the TPR/FPR dependence. A replicate in which a rate is undefined (e.g.
  no positives drawn) is skipped for that statistic. BCa is not offered: the percentile interval meets
  the coverage target in ``tests/fairness/test_outcome_coverage.py`` and needs no jackknife.

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

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import MethodError

__all__ = [
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

RowStatus = Literal["ok", "insufficient", "labels_pending", "undefined"]
CIMethod = Literal["percentile"]

#: per-group metrics
GROUP_METRICS: tuple[str, ...] = ("selection_rate", "tpr", "fpr", "fnr")
#: disparity metrics over the groups of one grouping
DISPARITY_METRICS: tuple[str, ...] = ("dp_difference", "dp_ratio", "eop_difference", "eodds_difference")
#: metrics that need labels
LABEL_METRICS: frozenset[str] = frozenset({"tpr", "fpr", "fnr", "eop_difference", "eodds_difference"})
DEFAULT_METRICS: tuple[str, ...] = GROUP_METRICS + DISPARITY_METRICS
#: group name given to rows whose sensitive value is missing
MISSING_GROUP = "(missing)"
#: joins attribute names (and group values) of an intersection
INTERSECTION_SEP = "&"

ERR_UNKNOWN_METRIC = "unknown outcome metric {metric!r}; known: {known}"
ERR_LENGTH = "length mismatch: y_pred has {n} rows but {what} has {m}"
ERR_NOT_BINARY = "{what} must be binary (0/1, bool) with NaN for missing; found value {value!r}"
ERR_NO_SENSITIVE = "sensitive_features is empty: declare at least one protected attribute"
ERR_UNKNOWN_ATTRIBUTE = "intersection names unknown sensitive attribute {name!r}; known: {known}"
ERR_CONFIDENCE = "confidence must be in (0, 1), got {value}"
ERR_BOOTSTRAP = "n_bootstrap must be 0 (no CI) or >= 50, got {value}"
ERR_MIN_GROUP = "min_group_size must be >= 0, got {value}"


@dataclass(frozen=True)
class MetricRow:
    """One tidy outcome-fairness number.

    ``attribute`` is the grouping (``"sex"`` or an intersection ``"race&sex"``), ``group`` the group
    within it (None for a disparity over the grouping). ``n`` counts the rows used, ``n_nan`` the rows
    of the group(s) excluded because the prediction (or, for label metrics, the label) was missing.
    """

    metric: str
    attribute: str
    group: str | None
    value: float
    ci_low: float
    ci_high: float
    n: int
    n_nan: int
    status: RowStatus = "ok"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN stays float NaN; the store maps it to NULL)."""
        return asdict(self)


@dataclass(frozen=True)
class OutcomeResult:
    """All outcome-fairness rows of one window plus the settings that produced them.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> s = pd.DataFrame({"sex": ["F", "M"] * 40})
    >>> r = outcome_metrics(np.tile([1, 0, 1, 1], 20), sensitive_features=s, n_bootstrap=0)
    >>> sorted(r.by_group("selection_rate", "sex").items())
    [('F', 1.0), ('M', 0.5)]
    """

    rows: tuple[MetricRow, ...]
    confidence: float
    n_bootstrap: int
    ci_method: str
    random_state: int | None
    min_group_size: int
    labels_pending: bool
    attributes: tuple[str, ...] = field(default=())

    def get(self, metric: str, attribute: str, group: str | None = None) -> MetricRow:
        """The row for (metric, attribute, group); KeyError naming it when absent."""
        for row in self.rows:
            if row.metric == metric and row.attribute == attribute and row.group == group:
                return row
        raise KeyError(f"no outcome row for metric={metric!r} attribute={attribute!r} group={group!r}")

    def by_group(self, metric: str, attribute: str) -> dict[str, float]:
        """``{group: value}`` of a per-group metric for one grouping."""
        return {
            r.group: r.value
            for r in self.rows
            if r.metric == metric and r.attribute == attribute and r.group is not None
        }

    def disparities(self) -> list[MetricRow]:
        """The disparity rows (``group is None``)."""
        return [r for r in self.rows if r.group is None]

    def groupings(self) -> list[str]:
        """Grouping keys in result order (attributes first, then intersections)."""
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.setdefault(r.attribute, None)
        return list(seen)

    def to_frame(self) -> pd.DataFrame:
        """Tidy DataFrame: metric, attribute, group, value, ci_low, ci_high, n, n_nan, status."""
        cols = ["metric", "attribute", "group", "value", "ci_low", "ci_high", "n", "n_nan", "status"]
        return pd.DataFrame([r.to_dict() for r in self.rows], columns=cols)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the settings and the rows."""
        return {
            "confidence": self.confidence,
            "n_bootstrap": self.n_bootstrap,
            "ci_method": self.ci_method,
            "random_state": self.random_state,
            "min_group_size": self.min_group_size,
            "labels_pending": self.labels_pending,
            "attributes": list(self.attributes),
            "rows": [r.to_dict() for r in self.rows],
        }


# --------------------------------------------------------------------------------------- inputs


def _as_binary(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    try:
        out = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        bad = next((v for v in arr.ravel() if not _is_binary_scalar(v)), arr.ravel()[0])
        raise MethodError(ERR_NOT_BINARY.format(what=what, value=bad)) from exc
    finite = out[~np.isnan(out)]
    bad_mask = (finite != 0.0) & (finite != 1.0)
    if bad_mask.any():
        raise MethodError(ERR_NOT_BINARY.format(what=what, value=float(finite[bad_mask][0])))
    return out.ravel()


def _is_binary_scalar(v: Any) -> bool:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return f in (0.0, 1.0) or f != f


def _sensitive_frame(sensitive_features: Any, n: int) -> pd.DataFrame:
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features.reset_index(drop=True)
    elif isinstance(sensitive_features, pd.Series):
        name = sensitive_features.name if sensitive_features.name is not None else "sensitive"
        frame = pd.DataFrame({str(name): sensitive_features.to_numpy()})
    elif isinstance(sensitive_features, Mapping):
        frame = pd.DataFrame({str(k): np.asarray(v) for k, v in sensitive_features.items()})
    else:
        arr = np.asarray(sensitive_features)
        if arr.ndim == 1:
            frame = pd.DataFrame({"sensitive": arr})
        else:
            frame = pd.DataFrame(arr, columns=[f"sensitive_{i}" for i in range(arr.shape[1])])
    if frame.shape[1] == 0:
        raise MethodError(ERR_NO_SENSITIVE)
    if len(frame) != n:
        raise MethodError(ERR_LENGTH.format(n=n, what="sensitive_features", m=len(frame)))
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _labels_of(column: pd.Series) -> np.ndarray:
    """String group labels of one sensitive column; missing → MISSING_GROUP."""
    missing = column.isna().to_numpy()
    labels = column.astype(object).map(str).to_numpy(dtype=object)
    labels[missing] = MISSING_GROUP
    return labels


def _groupings(frame: pd.DataFrame, intersections: bool | Sequence[Sequence[str]]) -> list[tuple[str, np.ndarray]]:
    cols = list(frame.columns)
    labels = {c: _labels_of(frame[c]) for c in cols}
    out: list[tuple[str, np.ndarray]] = [(c, labels[c]) for c in cols]
    if intersections is True:
        combos: list[tuple[str, ...]] = [
            tuple(c) for r in range(2, len(cols) + 1) for c in itertools.combinations(cols, r)
        ]
    elif intersections is False:
        combos = []
    else:
        combos = [tuple(str(a) for a in c) for c in intersections]
    for combo in combos:
        for name in combo:
            if name not in labels:
                raise MethodError(ERR_UNKNOWN_ATTRIBUTE.format(name=name, known=cols))
        if len(combo) < 2:
            continue
        joined = labels[combo[0]].astype(str)
        for name in combo[1:]:
            joined = np.char.add(np.char.add(joined.astype(str), INTERSECTION_SEP), labels[name].astype(str))
        out.append((INTERSECTION_SEP.join(combo), joined.astype(object)))
    return out


# ----------------------------------------------------------------------------------- computation


@dataclass
class _GroupStats:
    name: str
    n_pred: int
    n_pred_nan: int
    fav: int
    n_lab: int
    n_lab_nan: int
    cells: np.ndarray  # TP, FP, FN, TN
    boot_sr: np.ndarray | None = None
    boot_cells: np.ndarray | None = None  # (B, 4)


def _rates(cells: np.ndarray) -> tuple[Any, Any, Any]:
    """TPR, FPR, FNR from cell counts (last axis TP, FP, FN, TN); NaN where undefined."""
    tp, fp, fn, tn = (cells[..., i].astype(np.float64) for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        pos = tp + fn
        neg = fp + tn
        tpr = np.where(pos > 0, tp / np.where(pos > 0, pos, 1), np.nan)
        fpr = np.where(neg > 0, fp / np.where(neg > 0, neg, 1), np.nan)
        fnr = np.where(pos > 0, fn / np.where(pos > 0, pos, 1), np.nan)
    return tpr, fpr, fnr


def _ci(samples: np.ndarray | None, confidence: float) -> tuple[float, float]:
    if samples is None:
        return float("nan"), float("nan")
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [tail, 100.0 - tail])
    return float(lo), float(hi)


def _spread(values: np.ndarray, kind: Literal["difference", "ratio"]) -> np.ndarray:
    """max − min (or min / max) along axis 0, NaN-aware; 0/0 ratio is 1."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hi = np.nanmax(values, axis=0)
        lo = np.nanmin(values, axis=0)
    if kind == "difference":
        return np.asarray(hi - lo)
    safe = np.where(hi > 0, hi, 1.0)
    return np.asarray(np.where(hi > 0, lo / safe, np.where(np.isnan(hi), np.nan, 1.0)))


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
    ci_method: CIMethod = "percentile",
    random_state: int | None = 0,
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
    ci_method : {"percentile"}
        Interval construction (see module docstring).
    random_state : int or None
        Seed of the bootstrap; the same inputs and seed give the same intervals.

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

    pred = _as_binary(y_pred, "y_pred")
    n = pred.shape[0]
    frame = _sensitive_frame(sensitive_features, n)
    if y_true is None:
        label = np.full(n, np.nan)
    else:
        label = _as_binary(y_true, "y_true")
        if label.shape[0] != n:
            raise MethodError(ERR_LENGTH.format(n=n, what="y_true", m=label.shape[0]))
    labels_pending = bool(np.isnan(label).all())
    wanted = set(metrics)
    rng = np.random.default_rng(random_state)
    B = int(n_bootstrap)
    pred_ok = ~np.isnan(pred)
    lab_ok = pred_ok & ~np.isnan(label)

    rows: list[MetricRow] = []
    for attr, groups in _groupings(frame, intersections):
        stats: list[_GroupStats] = []
        for g in sorted(set(groups.tolist())):
            m = groups == g
            pm, lm = m & pred_ok, m & lab_ok
            p, y = pred[lm], label[lm]
            cells = np.array(
                [np.sum((p == 1) & (y == 1)), np.sum((p == 1) & (y == 0)),
                 np.sum((p == 0) & (y == 1)), np.sum((p == 0) & (y == 0))],
                dtype=np.int64,
            )
            st = _GroupStats(
                name=str(g), n_pred=int(pm.sum()), n_pred_nan=int((m & ~pred_ok).sum()),
                fav=int(pred[pm].sum()), n_lab=int(lm.sum()), n_lab_nan=int((m & ~lab_ok).sum()), cells=cells,
            )
            if B:
                if st.n_pred > 0:
                    st.boot_sr = rng.binomial(st.n_pred, st.fav / st.n_pred, size=B) / st.n_pred
                if st.n_lab > 0:
                    st.boot_cells = rng.multinomial(st.n_lab, cells / st.n_lab, size=B)
            stats.append(st)
        rows.extend(_rows_for_grouping(attr, stats, wanted, min_group_size, confidence, labels_pending))
    return OutcomeResult(
        rows=tuple(rows), confidence=confidence, n_bootstrap=B, ci_method=ci_method,
        random_state=random_state, min_group_size=min_group_size, labels_pending=labels_pending,
        attributes=tuple(frame.columns),
    )


def _rows_for_grouping(
    attr: str,
    stats: list[_GroupStats],
    wanted: set[str],
    min_size: int,
    confidence: float,
    labels_pending: bool,
) -> list[MetricRow]:
    nan = float("nan")
    rows: list[MetricRow] = []
    sr_ok = [s for s in stats if s.n_pred >= max(min_size, 1)]
    lab_ok = [s for s in stats if s.n_lab >= max(min_size, 1)]
    for s in stats:
        if "selection_rate" in wanted:
            if s.n_pred >= max(min_size, 1):
                lo, hi = _ci(s.boot_sr, confidence)
                rows.append(MetricRow("selection_rate", attr, s.name, s.fav / s.n_pred, lo, hi, s.n_pred, s.n_pred_nan))
            else:
                rows.append(MetricRow("selection_rate", attr, s.name, nan, nan, nan, s.n_pred, s.n_pred_nan, "insufficient"))
        rates = _rates(s.cells)
        boot = _rates(s.boot_cells) if s.boot_cells is not None else (None, None, None)
        for i, name in enumerate(("tpr", "fpr", "fnr")):
            if name not in wanted:
                continue
            if labels_pending:
                rows.append(MetricRow(name, attr, s.name, nan, nan, nan, 0, s.n_lab_nan, "labels_pending"))
            elif s.n_lab < max(min_size, 1):
                rows.append(MetricRow(name, attr, s.name, nan, nan, nan, s.n_lab, s.n_lab_nan, "insufficient"))
            elif not np.isfinite(rates[i]):
                rows.append(MetricRow(name, attr, s.name, nan, nan, nan, s.n_lab, s.n_lab_nan, "undefined"))
            else:
                lo, hi = _ci(boot[i], confidence)
                rows.append(MetricRow(name, attr, s.name, float(rates[i]), lo, hi, s.n_lab, s.n_lab_nan))

    n_sr = sum(s.n_pred for s in sr_ok)
    nan_sr = sum(s.n_pred_nan for s in stats)
    for name, kind in (("dp_difference", "difference"), ("dp_ratio", "ratio")):
        if name not in wanted:
            continue
        if len(sr_ok) < 2:
            rows.append(MetricRow(name, attr, None, nan, nan, nan, n_sr, nan_sr, "insufficient"))
            continue
        point = np.array([[s.fav / s.n_pred] for s in sr_ok])
        value = float(_spread(point, kind)[0])  # type: ignore[arg-type]
        boots = [s.boot_sr for s in sr_ok]
        samples = _spread(np.vstack(boots), kind) if all(b is not None for b in boots) else None  # type: ignore[arg-type]
        lo, hi = _ci(samples, confidence)
        rows.append(MetricRow(name, attr, None, value, lo, hi, n_sr, nan_sr))

    n_lab = sum(s.n_lab for s in lab_ok)
    nan_lab = sum(s.n_lab_nan for s in stats)
    for name in ("eop_difference", "eodds_difference"):
        if name not in wanted:
            continue
        if labels_pending:
            rows.append(MetricRow(name, attr, None, nan, nan, nan, 0, nan_lab, "labels_pending"))
            continue
        if len(lab_ok) < 2:
            rows.append(MetricRow(name, attr, None, nan, nan, nan, n_lab, nan_lab, "insufficient"))
            continue
        tpr = np.array([[_rates(s.cells)[0]] for s in lab_ok], dtype=np.float64)
        fpr = np.array([[_rates(s.cells)[1]] for s in lab_ok], dtype=np.float64)
        if np.isfinite(tpr).sum() < 2 or (name == "eodds_difference" and np.isfinite(fpr).sum() < 2):
            rows.append(MetricRow(name, attr, None, nan, nan, nan, n_lab, nan_lab, "undefined"))
            continue
        samples = None
        if all(s.boot_cells is not None for s in lab_ok):
            btpr = np.vstack([_rates(s.boot_cells)[0] for s in lab_ok])  # type: ignore[arg-type]
            bfpr = np.vstack([_rates(s.boot_cells)[1] for s in lab_ok])  # type: ignore[arg-type]
            samples = _spread(btpr, "difference")
            if name == "eodds_difference":
                samples = np.fmax(samples, _spread(bfpr, "difference"))
        value = float(_spread(tpr, "difference")[0])
        if name == "eodds_difference":
            value = max(value, float(_spread(fpr, "difference")[0]))
        lo, hi = _ci(samples, confidence)
        rows.append(MetricRow(name, attr, None, value, lo, hi, n_lab, nan_lab))
    return rows


# ------------------------------------------------------------------------------ thin functions


def _single(
    metric: str, y_pred: Any, sensitive_features: Any, y_true: Any = None
) -> float:
    """Point value of one disparity over the (intersected) groups of ``sensitive_features``."""
    pred = _as_binary(y_pred, "y_pred")
    frame = _sensitive_frame(sensitive_features, pred.shape[0])
    if frame.shape[1] > 1:
        groups = _groupings(frame, [tuple(frame.columns)])[-1][1]
        frame = pd.DataFrame({"groups": groups})
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
    pred = _as_binary(y_pred, "y_pred")
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
