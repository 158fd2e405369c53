"""The recommendation gate since session 7 (issue 16): one simultaneous paired bootstrap over all
feasible candidates, and the positive-rate band shrunk by each candidate's noise.

Synthetic 0/1 decisions, no training: a production model with a strong group effect (group rates
0.7 / 0.3) and candidates whose group rates are set, so the truth of "better than production" and
"inside the band" is known.
"""

from __future__ import annotations

import numpy as np
import pytest

from fairmon.errors import MethodError
from fairmon.feu._metrics import dp_difference
from fairmon.feu._recommend import (
    RATE_MARGIN_Z,
    bootstrap_weights,
    choose_lowest_dp,
    dp_gain,
    simultaneous_gate,
)

N = 400  # validation rows, half per group
S = np.repeat(["a", "b"], N // 2)
BAND = 0.10


def _draw(rng: np.random.Generator, rate_a: float, rate_b: float) -> np.ndarray:
    return np.asarray(np.r_[rng.random(N // 2) < rate_a, rng.random(N // 2) < rate_b], dtype=int)


def _like_production(rng: np.random.Generator, prod: np.ndarray) -> np.ndarray:
    """Same group rates as production, half its decisions shared (paired, as a retrained network is)."""
    return np.where(rng.random(N) < 0.5, prod, _draw(rng, 0.7, 0.3))


def test_vectorised_gate_matches_the_per_row_definitions() -> None:
    rng = np.random.default_rng(0)
    prod = _draw(rng, 0.7, 0.3)
    cands = np.vstack([_draw(rng, 0.6, 0.4), _draw(rng, 0.5, 0.5), prod])
    g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=1)
    for j, c in enumerate(cands):
        assert g.gain[j] == pytest.approx(dp_difference(prod, S) - dp_difference(c, S))
        assert g.rate_diff[j] == pytest.approx(c.mean() - prod.mean())
        # the rate difference of two 400-row rates: SE near its binomial value (paired: covariance counts)
        d = c - prod
        assert g.rate_se[j] == pytest.approx(d.std() / np.sqrt(N), rel=0.25, abs=1e-9)
    assert g.gain_se[2] == 0.0 and g.lower_bound[2] == 0.0 and not g.eligible[2]  # production itself
    assert g.critical > 1.645  # three candidates at once: wider than one-sided 95% for one
    assert g.rate_critical > RATE_MARGIN_Z  # the band margin too (since session 15)
    assert np.all(g.lower_bound <= g.gain)
    rec = g.record(0)
    assert rec["simultaneous_lb"] == g.lower_bound[0] and rec["eligible"] == bool(g.eligible[0])
    assert rec["rate_margin_z"] == g.rate_critical
    assert rec["rate_margin"] == pytest.approx(abs(rec["rate_diff"]) + g.rate_critical * rec["rate_diff_se"])
    one = dp_gain(prod, cands[0], S, n_boot=300, random_state=1)
    assert one.rate_diff == pytest.approx(g.rate_diff[0]) and one.rate_se == pytest.approx(g.rate_se[0])
    with pytest.raises(MethodError, match="same non-empty rows"):
        simultaneous_gate(prod, cands[:, :10], S, band=BAND, n_boot=50, random_state=0)


@pytest.mark.parametrize("fresh", [None, 0, 300, 1600])
def test_the_band_margin_is_the_rate_differences_se_on_a_fresh_sample(fresh: int | None) -> None:
    """Since session 13: ``|d| + z * se * sqrt(1 + n / m)`` for a fresh sample of ``m`` rows; without one
    the bootstrap SE of the rows read, as before."""
    rng = np.random.default_rng(3)
    prod = _draw(rng, 0.7, 0.3)
    cands = np.vstack([_draw(rng, 0.62, 0.38), _draw(rng, 0.66, 0.36)])
    g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=1, fresh_rows=fresh)
    base = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=1)
    factor = np.sqrt(1.0 + N / fresh) if fresh else 1.0
    assert np.array_equal(g.rate_se, base.rate_se) and np.array_equal(g.rate_diff, base.rate_diff)
    assert g.rate_critical == base.rate_critical >= RATE_MARGIN_Z  # the fresh sample scales the SE only
    assert g.rate_margin == pytest.approx(np.abs(g.rate_diff) + g.rate_critical * g.rate_se * factor)
    assert np.array_equal(g.eligible, (g.lower_bound > 0) & (g.rate_margin <= BAND))
    rec = g.record(0)
    assert rec["rate_fresh_rows"] == (fresh or None)
    assert rec["rate_prediction_se"] == pytest.approx(rec["rate_diff_se"] * factor)
    if fresh == 300:  # 400 rows read, 300 fresh: the margin's SE grows by sqrt(1 + 4/3)
        assert rec["rate_prediction_se"] / rec["rate_diff_se"] == pytest.approx(1.5275, abs=1e-4)


def test_pure_noise_candidates_pass_the_simultaneous_gate_far_less_often_than_one_at_a_time() -> None:
    """Family-wise false positives: 15 candidates identical in distribution to production (no true gain)."""
    seeds, k = range(40), 15
    any_simultaneous = any_per_candidate = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        prod = _draw(rng, 0.7, 0.3)
        cands = np.vstack([_like_production(rng, prod) for _ in range(k)])
        g = simultaneous_gate(prod, cands, S, band=None, n_boot=300, random_state=seed)
        any_simultaneous += bool((g.lower_bound > 0).any())
        any_per_candidate += bool((g.per_candidate_lb > 0).any())  # the rule before session 7
    fwer_sim, fwer_per = any_simultaneous / len(seeds), any_per_candidate / len(seeds)
    assert fwer_sim <= 0.10, fwer_sim
    assert fwer_per >= 0.25 and fwer_per >= 3 * max(fwer_sim, 0.025), (fwer_per, fwer_sim)


def _fairer(rng: np.random.Generator, prod: np.ndarray) -> np.ndarray:
    """Production with 1/7 of group a's positives and of group b's negatives flipped: rates 0.6 / 0.4."""
    flip = rng.random(N) < 1 / 7
    a = np.arange(N) < N // 2
    return np.where(flip & a & (prod == 1), 0, np.where(flip & ~a & (prod == 0), 1, prod))


def test_a_real_gain_still_passes_among_noise_candidates() -> None:
    """Power: one candidate with half production's DP among 14 noise ones is found on most seeds."""
    found = 0
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        prod = _draw(rng, 0.7, 0.3)
        cands = np.vstack([_like_production(rng, prod) for _ in range(14)] + [_fairer(rng, prod)])
        g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=seed)
        found += bool(g.eligible[-1])
    assert found >= 17, found


def test_no_recommended_candidate_is_within_its_noise_of_the_band_edge() -> None:
    """Property over seeds: lower DP sits nearer the band's edge (as on the FEU fronts); the choice
    among the eligible never has ``|Δrate| + z SE`` beyond the band, while the old rule (band on the
    point estimate only) picks such a candidate on some seeds — the margin is what prevents it."""
    old_in_margin = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        prod = _draw(rng, 0.7, 0.3)
        deltas = np.linspace(0.0, 0.11, 12)  # true positive-rate shift; the DP falls as it grows
        cands = np.vstack([_draw(rng, 0.6, 0.4 + 2 * d) for d in deltas])
        rate_diff = cands.mean(axis=1) - prod.mean()
        feasible = np.flatnonzero(np.abs(rate_diff) <= BAND)  # the search's pymoo constraint
        if len(feasible) == 0:
            continue
        g = simultaneous_gate(prod, cands[feasible], S, band=BAND, n_boot=300, random_state=seed)
        dp = [dp_difference(c, S) for c in cands[feasible]]
        flat = [0.0] * len(feasible)
        elig = np.flatnonzero(g.eligible)
        if len(elig):
            k = int(elig[choose_lowest_dp([dp[j] for j in elig], [float(g.dp_se[j]) for j in elig],
                                          [flat[j] for j in elig], [flat[j] for j in elig], gesd_floor=None)])
            assert abs(g.rate_diff[k]) + g.rate_critical * g.rate_se[k] <= BAND
            assert g.record(k)["band_ok"] and g.lower_bound[k] > 0
        old = np.flatnonzero(g.per_candidate_lb > 0)
        if len(old):
            j = int(old[np.argmin([dp[i] for i in old])])
            old_in_margin += bool(g.rate_margin[j] > BAND)
    assert old_in_margin >= 5, old_in_margin  # the defect the margin fixes does occur here


def test_the_simultaneous_band_margin_keeps_the_chosen_candidate_inside_the_band() -> None:
    """Since session 15: 20 candidates (German's fronts at 30 x 15) whose true positive rate is 0.105
    below production's, outside the ±0.10 band, and whose DP is truly lower. Whichever is eligible
    may be recommended, so the band margin must hold for all of them at once. With the per-candidate
    1.645 some estimate errs far enough inside on many seeds; with the simultaneous margin on few."""
    seeds, k = range(60), 20
    wrong_simultaneous = wrong_per_candidate = 0
    for seed in seeds:
        rng = np.random.default_rng(500 + seed)
        prod = _draw(rng, 0.7, 0.3)  # rate 0.50, DP 0.40
        cands = np.vstack([_draw(rng, 0.49, 0.30) for _ in range(k)])  # rate 0.395, DP 0.19
        g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=seed)
        assert g.rate_critical >= RATE_MARGIN_Z
        per_candidate = (g.lower_bound > 0) & (np.abs(g.rate_diff) + RATE_MARGIN_Z * g.rate_prediction_se <= BAND)
        wrong_simultaneous += bool(g.eligible.any())
        wrong_per_candidate += bool(per_candidate.any())
    rate_sim, rate_per = wrong_simultaneous / len(seeds), wrong_per_candidate / len(seeds)
    assert rate_sim <= 0.10, rate_sim  # 2 of 60 seeds when written
    assert rate_per >= 0.15 and rate_per >= 3 * max(rate_sim, 0.05), (rate_per, rate_sim)  # 13 of 60


def test_honest_none_when_no_candidate_is_better() -> None:
    rng = np.random.default_rng(7)
    prod = _draw(rng, 0.5, 0.5)  # already fair: nothing can improve its DP beyond noise
    cands = np.vstack([_draw(rng, 0.5, 0.5) for _ in range(10)])
    g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=300, random_state=7)
    assert not g.eligible.any()
    assert all(not g.record(j)["gain_ok"] for j in range(10))


def test_the_band_margin_reads_the_estimates_error_towards_the_nearer_edge() -> None:
    """Since session 17 the deviations are ``Δrate - Δrate*`` (the basic orientation, as the DP gate's bound),
    towards the edge each rate moved to; recomputed here from the gate's own resamples."""
    rng = np.random.default_rng(5)
    prod = _draw(rng, 0.7, 0.3)
    cands = np.vstack([_draw(rng, 0.75, 0.35), _draw(rng, 0.6, 0.3), _like_production(rng, prod),
                       _draw(rng, 0.68, 0.4), _draw(rng, 0.7, 0.22)])
    g = simultaneous_gate(prod, cands, S, band=BAND, n_boot=400, random_state=2)
    W = bootstrap_weights(N, 400, random_state=2).astype(float)
    rdiff_b = (W @ cands.T) / N - ((W @ prod) / N)[:, None]
    side = np.sign(g.rate_diff)
    assert np.all(side != 0)
    basic = np.quantile((side * (g.rate_diff - rdiff_b) / g.rate_se).max(axis=1), 0.95)
    percentile = np.quantile((side * (rdiff_b - g.rate_diff) / g.rate_se).max(axis=1), 0.95)
    assert basic > RATE_MARGIN_Z and g.rate_critical == pytest.approx(basic)
    assert abs(basic - percentile) > 1e-6, "the seed gives an asymmetric max: the two orientations differ"
    # a rate that did not move is taken upwards (the side of a positive difference), not both ways
    same = rng.permutation(prod)
    g0 = simultaneous_gate(prod, np.vstack([cands, same]), S, band=BAND, n_boot=400, random_state=2)
    W = bootstrap_weights(N, 400, random_state=2).astype(float)
    rdiff_b = (W @ np.vstack([cands, same]).T) / N - ((W @ prod) / N)[:, None]
    assert g0.rate_diff[-1] == 0.0 and g0.rate_se[-1] > 0
    side = np.where(g0.rate_diff < 0, -1.0, 1.0)
    upwards = np.quantile((side * (g0.rate_diff - rdiff_b) / g0.rate_se).max(axis=1), 0.95)
    both_ways = np.quantile(np.maximum((side * (g0.rate_diff - rdiff_b) / g0.rate_se)[:, :-1].max(axis=1),
                                       np.abs(g0.rate_diff[-1] - rdiff_b[:, -1]) / g0.rate_se[-1]), 0.95)
    assert g0.rate_critical == pytest.approx(upwards) and abs(upwards - both_ways) > 1e-6

