"""Attribution gaps and model rescores of a run (issue 19): round trip, replace, cleared on re-run."""

from __future__ import annotations

import pytest
from store_seed import window

from fairmon.store import AttributionGapRecord, RecordError, RescoreRecord, Store

pytestmark = pytest.mark.postgres

FEATS = (
    {"feature": "account_years", "inside": -0.07, "outside": 0.01, "difference": -0.08, "ci_low": -0.1, "ci_high": -0.06},
    {"feature": "age", "inside": -0.02, "outside": 0.0, "difference": -0.02, "ci_low": None, "ci_high": None},
)


def test_roundtrip_replace_and_cleared_with_the_window(store: Store) -> None:
    run_id = store.write_window(window("demo", 0))
    gaps = [AttributionGapRecord("declared", "ok", group_label="sex=F", explainer="kernelshap", n_inside=200,
                                 n_outside=200, population_inside=700, population_outside=800,
                                 favorable_rate_inside=0.3, favorable_rate_outside=0.5, n_bootstrap=200,
                                 confidence=0.95, features=FEATS),
            AttributionGapRecord("rumie", "insufficient", group_label="age <= 30", reason="3 rows inside")]
    store.save_attribution_gaps(run_id, gaps)
    store.save_attribution_gaps(run_id, gaps)  # replace, not duplicate
    got = store.attribution_gaps_of_run(run_id)
    assert [g.group_kind for g in got] == ["rumie", "declared"]
    assert got[1] == gaps[0] and got[0].features == () and got[0].reason == "3 rows inside"
    resc = [RescoreRecord("rumie_dscore", "rumie_honest_dscore", old_version="v1", new_version="v2", value_fired=0.17,
                          value_new=0.19, ci_new_low=0.15, ci_new_high=0.23, value_old=0.05, ci_old_low=0.02,
                          ci_old_high=0.08, baseline=0.04, verdict="model", definition="rules"),
            RescoreRecord("gesd_rise", "gesd", group="sex", old_version="v1", new_version="v2", status="skipped",
                          reason="not rescored")]
    store.save_rescores(run_id, resc)
    assert sorted(store.rescores_of_run(run_id), key=lambda r: r.kind) == sorted(resc, key=lambda r: r.kind)
    with pytest.raises(RecordError, match="two rows"):
        store.save_rescores(run_id, [resc[0], resc[0]])
    with pytest.raises(RecordError, match="two rows of group kind"):
        store.save_attribution_gaps(run_id, [gaps[0], gaps[0]])
    with pytest.raises(RecordError, match="no run with id 999999"):
        store.save_rescores(999999, resc)
    # re-running the window replaces its results: the diagnosis rows go with them
    assert store.write_window(window("demo", 0)) == run_id
    assert store.attribution_gaps_of_run(run_id) == [] and store.rescores_of_run(run_id) == []
