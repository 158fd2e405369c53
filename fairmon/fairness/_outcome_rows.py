"""The metric rows of one grouping: per-group rates and the disparities with their intervals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairmon.fairness._outcome_ci import (
    binomial_se,
    percentile_ci,
    rates,
    simultaneous_ratio_ci,
    simultaneous_spread_ci,
    spread,
    wilson_ci,
)
from fairmon.fairness._outcome_types import MetricRow

__all__ = ["GroupStats", "rows_for_grouping"]

NAN = float("nan")


@dataclass
class GroupStats:
    """Counts of one group and, with a bootstrap, its replicate selection rates and cell counts."""

    name: str
    n_pred: int
    n_pred_nan: int
    fav: int
    n_lab: int
    n_lab_nan: int
    cells: np.ndarray  # TP, FP, FN, TN
    boot_sr: np.ndarray | None = None
    boot_cells: np.ndarray | None = None  # (B, 4)


def rows_for_grouping(
    attr: str,
    stats: list[GroupStats],
    wanted: set[str],
    min_size: int,
    confidence: float,
    labels_pending: bool,
    disparity_ci: str = "simultaneous",
    ci_method: str = "wilson",
) -> list[MetricRow]:
    """Per-group rows, then the disparity rows, of one grouping ``attr``."""
    rows = _group_rows(attr, stats, wanted, min_size, confidence, labels_pending, ci_method)
    rows += _dp_rows(attr, stats, wanted, min_size, confidence, disparity_ci)
    rows += _label_disparity_rows(attr, stats, wanted, min_size, confidence, labels_pending, disparity_ci)
    return rows


def _rate_ci(
    x: float, n: float, boot: np.ndarray | None, confidence: float, ci_method: str
) -> tuple[float, float, int]:
    """A group rate's interval: Wilson's from the counts, or the bootstrap percentile (NaN without replicates)."""
    if boot is None:
        return NAN, NAN, 0
    if ci_method == "wilson":
        return (*wilson_ci(x, n, confidence), 0)
    return percentile_ci(boot, confidence)


def _group_rows(
    attr: str, stats: list[GroupStats], wanted: set[str], min_size: int, confidence: float, labels_pending: bool,
    ci_method: str,
) -> list[MetricRow]:
    rows: list[MetricRow] = []
    for s in stats:
        if "selection_rate" in wanted:
            if s.n_pred >= max(min_size, 1):
                lo, hi, skip = _rate_ci(s.fav, s.n_pred, s.boot_sr, confidence, ci_method)
                rows.append(MetricRow("selection_rate", attr, s.name, s.fav / s.n_pred, lo, hi, s.n_pred,
                                      s.n_pred_nan, n_skipped=skip))
            else:
                rows.append(MetricRow("selection_rate", attr, s.name, NAN, NAN, NAN, s.n_pred, s.n_pred_nan,
                                      "insufficient"))
        point = rates(s.cells)
        boot = rates(s.boot_cells) if s.boot_cells is not None else (None, None, None)
        for i, name in enumerate(("tpr", "fpr", "fnr")):
            if name not in wanted:
                continue
            if labels_pending:
                rows.append(MetricRow(name, attr, s.name, NAN, NAN, NAN, 0, s.n_lab_nan, "labels_pending"))
            elif s.n_lab < max(min_size, 1):
                rows.append(MetricRow(name, attr, s.name, NAN, NAN, NAN, s.n_lab, s.n_lab_nan, "insufficient"))
            elif not np.isfinite(point[i]):
                rows.append(MetricRow(name, attr, s.name, NAN, NAN, NAN, s.n_lab, s.n_lab_nan, "undefined"))
            else:
                tp, fp, fn, tn = (float(c) for c in s.cells)
                x, n = ((tp, tp + fn), (fp, fp + tn), (fn, tp + fn))[i]
                lo, hi, skip = _rate_ci(x, n, boot[i], confidence, ci_method)
                rows.append(MetricRow(name, attr, s.name, float(point[i]), lo, hi, s.n_lab, s.n_lab_nan,
                                      n_skipped=skip))
    return rows


def _dp_rows(
    attr: str, stats: list[GroupStats], wanted: set[str], min_size: int, confidence: float, method: str
) -> list[MetricRow]:
    rows: list[MetricRow] = []
    sr_ok = [s for s in stats if s.n_pred >= max(min_size, 1)]
    n_sr = sum(s.n_pred for s in sr_ok)
    nan_sr = sum(s.n_pred_nan for s in stats)
    point = np.array([s.fav / s.n_pred for s in sr_ok], dtype=np.float64)
    boots = [s.boot_sr for s in sr_ok]
    boot = np.vstack(boots) if boots and all(b is not None for b in boots) else None  # type: ignore[arg-type]
    sizes = np.array([s.n_pred for s in sr_ok])
    for name, kind in (("dp_difference", "difference"), ("dp_ratio", "ratio")):
        if name not in wanted:
            continue
        if len(sr_ok) < 2:
            rows.append(MetricRow(name, attr, None, NAN, NAN, NAN, n_sr, nan_sr, "insufficient"))
            continue
        value = float(spread(point[:, None], kind)[0])  # type: ignore[arg-type]
        if boot is None:
            lo, hi, skip = NAN, NAN, 0
        elif method == "percentile":
            lo, hi, skip = percentile_ci(spread(boot, kind), confidence)  # type: ignore[arg-type]
        elif kind == "difference":
            se = binomial_se(point * sizes, sizes)
            se_star = binomial_se(boot * sizes[:, None], sizes[:, None])
            fav = np.array([s.fav for s in sr_ok], dtype=np.float64)
            lo, hi, skip = simultaneous_spread_ci([point], [boot], confidence, [se], [se_star], [(fav, sizes)])
            hi = min(hi, 1.0)
        else:
            lo, hi, skip = simultaneous_ratio_ci(point, boot, sizes, confidence)
        rows.append(MetricRow(name, attr, None, value, lo, hi, n_sr, nan_sr, n_skipped=skip))
    return rows


def _label_disparity_rows(
    attr: str,
    stats: list[GroupStats],
    wanted: set[str],
    min_size: int,
    confidence: float,
    labels_pending: bool,
    method: str,
) -> list[MetricRow]:
    rows: list[MetricRow] = []
    lab_ok = [s for s in stats if s.n_lab >= max(min_size, 1)]
    n_lab = sum(s.n_lab for s in lab_ok)
    nan_lab = sum(s.n_lab_nan for s in stats)
    for name in ("eop_difference", "eodds_difference"):
        if name not in wanted:
            continue
        if labels_pending:
            rows.append(MetricRow(name, attr, None, NAN, NAN, NAN, 0, nan_lab, "labels_pending"))
            continue
        if len(lab_ok) < 2:
            rows.append(MetricRow(name, attr, None, NAN, NAN, NAN, n_lab, nan_lab, "insufficient"))
            continue
        families = ("tpr",) if name == "eop_difference" else ("tpr", "fpr")
        points: list[np.ndarray] = []
        boots: list[np.ndarray] = []
        ses: list[np.ndarray] = []
        boot_ses: list[np.ndarray] = []
        counts: list[tuple[np.ndarray, np.ndarray]] = []
        for fam in families:
            col = 0 if fam == "tpr" else 1
            point = np.array([rates(s.cells)[col] for s in lab_ok], dtype=np.float64)
            # the statistic is over the groups whose observed rate is defined; in a replicate, every
            # one of those groups must have a defined rate, or the replicate is skipped
            keep = np.isfinite(point)
            if keep.sum() < 2:
                points = []
                break
            points.append(point[keep])
            # cells TP, FP, FN, TN: TPR = TP / (TP + FN), FPR = FP / (FP + TN)
            hit, miss = (0, 2) if fam == "tpr" else (1, 3)
            cells = np.array([s.cells for s in lab_ok])[keep]
            ses.append(binomial_se(cells[:, hit], cells[:, hit] + cells[:, miss]))
            counts.append((cells[:, hit].astype(np.float64), (cells[:, hit] + cells[:, miss]).astype(np.float64)))
            if all(s.boot_cells is not None for s in lab_ok):
                boots.append(np.vstack([rates(s.boot_cells)[col] for s in lab_ok])[keep])  # type: ignore[arg-type]
                bc = np.stack([s.boot_cells for s in lab_ok])[keep]  # type: ignore[misc]
                boot_ses.append(binomial_se(bc[..., hit], bc[..., hit] + bc[..., miss]))
        if not points:
            rows.append(MetricRow(name, attr, None, NAN, NAN, NAN, n_lab, nan_lab, "undefined"))
            continue
        value = max(float(spread(p[:, None], "difference")[0]) for p in points)
        if len(boots) != len(points):
            lo, hi, skip = NAN, NAN, 0
        elif method == "percentile":
            samples = np.max(np.vstack([spread(b, "difference") for b in boots]), axis=0)
            lo, hi, skip = percentile_ci(samples, confidence)
        else:
            lo, hi, skip = simultaneous_spread_ci(points, boots, confidence, ses, boot_ses, counts)
            hi = min(hi, 1.0)
        rows.append(MetricRow(name, attr, None, value, lo, hi, n_lab, nan_lab, n_skipped=skip))
    return rows
