"""RUMIE on a sample, honestly (issue 21 req 1/2): mined once on a stratified sample, the honest
DScore, p-value and group size on every other row; sample sizes and the SQL predicate stored."""

from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa
from _rumie_data import jaccard, planted_frame

from fairmon.errors import MethodError
from fairmon.fairness._rumie_core import stratified_split
from fairmon.fairness.rumie import dscore, mine
from fairmon.results import evidence_from_record, evidence_record

KW = {"k": 4, "alpha": 0.4, "beta": 0.6, "iterations": 300, "random_state": 0}


@pytest.mark.slow  # mines 24,000 rows twice (~10 CPU-s)
def test_planted_group_on_a_sample_matches_the_full_data_run() -> None:
    X, fav, member = planted_frame(24_000, gap=0.2, random_state=4)
    full = mine(X, fav, **KW)
    ev = mine(X, fav, max_rows=4_000, **KW)
    assert ev.status == "ok" and full.status == "ok"
    assert (ev.n_mined, ev.n_honest, ev.n_rows) == (4_000, 20_000, 24_000)
    assert ev.significance["n_mine"] == 4_000 and ev.significance["n_test"] == 20_000
    # the same group (the planted one) ...
    assert jaccard(ev.mask, member) > 0.9 and jaccard(ev.mask, full.mask) > 0.9
    # ... its honest DScore on the 20,000 unused rows within noise (SE ~0.007) of the full-data DScore
    assert full.dscore is not None and ev.honest_dscore is not None
    assert abs(ev.honest_dscore - full.dscore) < 0.03
    assert abs(ev.honest_dscore - dscore(fav, member)) < 0.03
    assert ev.p_value is not None and ev.p_value < 1e-6
    # group size: on the unused rows (honest) and on the window (mask)
    assert ev.honest_group_size is not None and 0.4 * 20_000 < ev.honest_group_size < 0.6 * 20_000
    assert ev.group_size == int(ev.mask.sum()) and ev.mask.shape == (24_000,)
    # without max_rows nothing is sampled: mined on the window, honest rows from the split
    assert full.n_mined == 24_000 and full.n_honest == 12_000


def test_stratified_split_keeps_the_decision_share() -> None:
    fav = np.random.default_rng(0).random(10_001) < 0.3
    a, b = stratified_split(fav, 2_000, 7)
    assert a.size == 2_000 and b.size == 8_001 and not np.intersect1d(a, b).size
    assert abs(fav[a].mean() - fav.mean()) < 1e-3
    assert np.array_equal(stratified_split(fav, 2_000, 7)[0], a)  # seeded


def test_small_windows_and_bad_max_rows() -> None:
    X, fav, _ = planted_frame(600, random_state=1)
    assert mine(X, fav, max_rows=600, **KW).n_mined == 600  # not above max_rows: the whole window
    with pytest.raises(MethodError, match="max_rows"):
        mine(X, fav, max_rows=5, **KW)


@pytest.mark.postgres
def test_sizes_and_sql_predicate_are_stored_and_select_the_group(fresh_database_url: str) -> None:
    X, fav, _ = planted_frame(3_000, gap=0.3, random_state=2)
    ev = mine(X, fav, max_rows=1_000, **KW)
    assert ev.sql_predicate
    back = evidence_from_record(evidence_record(ev))
    assert (back.n_mined, back.n_honest, back.honest_group_size, back.sql_predicate) == (
        ev.n_mined, ev.n_honest, ev.honest_group_size, ev.sql_predicate)
    engine = sa.create_engine(fresh_database_url)
    try:
        X.assign(row_id=np.arange(len(X))).to_sql("w", engine, index=False)
        with engine.connect() as conn:
            rows = conn.execute(sa.text(f"SELECT row_id FROM w WHERE {ev.sql_predicate} ORDER BY row_id")).scalars()
            got = np.asarray(list(rows), dtype=int)
    finally:
        engine.dispose()
    assert np.array_equal(got, np.flatnonzero(ev.mask))
