"""Bootstrap CI coverage of the outcome metrics in a simulation with a known truth."""

from __future__ import annotations

import numpy as np

from fairmon.fairness.outcome import outcome_metrics

N_DRAWS = 500


def test_percentile_bootstrap_coverage_of_nominal_95() -> None:
    """≥ 500 simulated windows; the 95 % intervals must cover the truth 92–98 % of the time."""
    rng = np.random.default_rng(2026)
    n_a, n_b, p_a, p_b = 600, 400, 0.30, 0.20
    tpr_a, tpr_b, base = 0.70, 0.55, 0.5
    groups = np.array(["a"] * n_a + ["b"] * n_b, dtype=object)
    hits = {"dp_difference": 0, "selection_rate_a": 0, "tpr_b": 0}
    for draw in range(N_DRAWS):
        pred = np.r_[rng.random(n_a) < p_a, rng.random(n_b) < p_b].astype(float)
        # labels independent of pred within group except through a fixed TPR (pred | y=1)
        y = (rng.random(n_a + n_b) < base).astype(float)
        tpr = np.r_[np.full(n_a, tpr_a), np.full(n_b, tpr_b)]
        pos = y == 1
        pred[pos] = (rng.random(pos.sum()) < tpr[pos]).astype(float)
        r = outcome_metrics(pred, sensitive_features={"g": groups}, y_true=y, n_bootstrap=1000,
                            intersections=False, metrics=("selection_rate", "tpr", "dp_difference"),
                            random_state=draw)
        # true selection rates: P(pred)=base*tpr + (1-base)*p
        sr_a = base * tpr_a + (1 - base) * p_a
        sr_b = base * tpr_b + (1 - base) * p_b
        row = r.get("dp_difference", "g")
        hits["dp_difference"] += row.ci_low <= abs(sr_a - sr_b) <= row.ci_high
        row = r.get("selection_rate", "g", "a")
        hits["selection_rate_a"] += row.ci_low <= sr_a <= row.ci_high
        row = r.get("tpr", "g", "b")
        hits["tpr_b"] += row.ci_low <= tpr_b <= row.ci_high
    coverage = {k: v / N_DRAWS for k, v in hits.items()}
    for name, cov in coverage.items():
        assert 0.92 <= cov <= 0.98, (name, coverage)
