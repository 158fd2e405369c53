"""Cell counts of the outcome metrics: one state per row, one ``bincount`` per grouping.

Every row falls in one of :data:`N_STATES` states (decision missing; decision known, label missing,
by decision; the four confusion cells). A grouping's counts are ``bincount(code * N_STATES + state)``
over its integer group codes, and every per-group statistic (usable rows, favorable decisions,
missing counts, TP/FP/FN/TN) is a sum of those cells.
"""

from __future__ import annotations

import numpy as np

from fairmon.fairness._outcome_rows import GroupStats

__all__ = ["N_STATES", "row_states", "group_stats"]

#: states of a row: 0 decision missing; 1/2 decision 1/0 with the label missing; 3 TP, 4 FP, 5 FN, 6 TN
N_STATES = 7
_PRED_NAN, _FAV_LAB_NAN, _UNFAV_LAB_NAN, _TP, _FP, _FN, _TN = range(N_STATES)


def row_states(pred: np.ndarray, label: np.ndarray) -> np.ndarray:
    """The state (0..6) of every row from its 0/1/NaN decision and label.

    Examples
    --------
    >>> nan = float("nan")
    >>> row_states(np.array([nan, 1, 0, 1, 1, 0, 0]), np.array([1, nan, nan, 1, 0, 1, 0])).tolist()
    [0, 1, 2, 3, 4, 5, 6]
    """
    pred_nan = np.isnan(pred)
    lab_nan = np.isnan(label)
    fav = pred == 1.0
    yes = label == 1.0
    state = np.where(lab_nan, np.where(fav, _FAV_LAB_NAN, _UNFAV_LAB_NAN),
                     np.where(fav, np.where(yes, _TP, _FP), np.where(yes, _FN, _TN)))
    state[pred_nan] = _PRED_NAN
    return state.astype(np.int64)


def group_stats(names: list[str], counts: np.ndarray, rng: np.random.Generator, n_bootstrap: int) -> list[GroupStats]:
    """:class:`GroupStats` per group from its ``(groups, N_STATES)`` counts, with the bootstrap draws
    (per group, in order: replicate selection rates, then replicate cells — the seed's stream)."""
    stats: list[GroupStats] = []
    for name, row in zip(names, counts.astype(np.int64), strict=True):
        cells = row[[_TP, _FP, _FN, _TN]].copy()
        st = GroupStats(
            name=name,
            n_pred=int(row[1:].sum()),
            n_pred_nan=int(row[_PRED_NAN]),
            fav=int(row[_FAV_LAB_NAN] + row[_TP] + row[_FP]),
            n_lab=int(cells.sum()),
            n_lab_nan=int(row[_PRED_NAN] + row[_FAV_LAB_NAN] + row[_UNFAV_LAB_NAN]),
            cells=cells,
        )
        if n_bootstrap:
            if st.n_pred > 0:
                st.boot_sr = rng.binomial(st.n_pred, st.fav / st.n_pred, size=n_bootstrap) / st.n_pred
            if st.n_lab > 0:
                st.boot_cells = rng.multinomial(st.n_lab, cells / st.n_lab, size=n_bootstrap)
        stats.append(st)
    return stats
