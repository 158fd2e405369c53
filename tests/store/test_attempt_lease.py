"""Issue 15 items 2 and 5 in the store: the attempt holding a window's run (a lease a newer attempt takes
over explicitly) and the spec file owning a monitor name."""

from __future__ import annotations

import dataclasses

import pytest
from store_seed import day, window

from fairmon.errors import AttemptSupersededError, ConfigError
from fairmon.store import AttributionGapRecord, FindingRecord, RescoreRecord, Store
from fairmon.store._attempts import ERR_MONITOR_OWNED

pytestmark = pytest.mark.postgres


def _counts(store: Store, run_id: int) -> tuple[int, int]:
    return len(store.metrics_of_run(run_id)), len(store.findings_of_run(run_id))


def test_a_superseded_attempt_cannot_write_the_window(store: Store) -> None:
    w = window("demo", 0)
    run_id, a, prev = store.begin_attempt("demo", day(0), day(1))
    assert prev is None and store.current_attempt("demo", day(0), day(1)) == a
    store.write_window(dataclasses.replace(w, run=dataclasses.replace(w.run, attempt_id=a)))
    before = _counts(store, run_id)
    assert before[0] > 0

    run_b, b, prev = store.begin_attempt("demo", day(0), day(1))  # B takes the window over
    assert (run_b, prev) == (run_id, a) and b != a
    assert store.get_run("demo", day(0), day(1)).attempt_id == b  # type: ignore[union-attr]
    with pytest.raises(AttemptSupersededError) as ei:
        store.mark_run("demo", day(0), day(1), "failed", error="A's predict failed", attempt_id=a)
    assert a in str(ei.value) and b in str(ei.value) and not ei.value.retryable
    with pytest.raises(AttemptSupersededError):
        store.write_window(dataclasses.replace(w, run=dataclasses.replace(w.run, attempt_id=a)))
    with pytest.raises(AttemptSupersededError):
        store.write_findings(run_id, [FindingRecord("outcome", "dp_difference", "warning")], attempt_id=a)
    with pytest.raises(AttemptSupersededError):  # the diagnose step's rows too (issue 19 x issue 15)
        store.save_attribution_gaps(run_id, [AttributionGapRecord("rumie", "ok")], attempt_id=a)
    with pytest.raises(AttemptSupersededError):
        store.save_rescores(run_id, [RescoreRecord("rumie_dscore", "rumie_honest_dscore", "", "v1", "v2")], attempt_id=a)
    assert store.attribution_gaps_of_run(run_id) == [] and store.rescores_of_run(run_id) == []
    assert not store.heartbeat_run(run_id, a)
    assert _counts(store, run_id) == before  # A deleted nothing
    assert store.get_run("demo", day(0), day(1)).status == "running"  # type: ignore[union-attr]
    # the holder writes as usual
    assert store.heartbeat_run(run_id, b)
    store.write_window(dataclasses.replace(w, run=dataclasses.replace(w.run, attempt_id=b)))
    assert store.get_run("demo", day(0), day(1)).status == "succeeded"  # type: ignore[union-attr]


def test_a_monitor_name_is_owned_by_one_spec_file(store: Store) -> None:
    assert store.claim_monitor("demo", "/srv/monitors/demo.yaml") is None
    assert store.claim_monitor("demo", "/srv/monitors/demo.yaml") == "/srv/monitors/demo.yaml"
    with pytest.raises(ConfigError) as ei:
        store.claim_monitor("demo", "/home/eve/demo.yaml")
    assert str(ei.value) == ERR_MONITOR_OWNED.format(
        name="demo", owner="/srv/monitors/demo.yaml", path="/home/eve/demo.yaml"
    )
    assert store.claim_monitor("demo", "/srv/new/demo.yaml", take_over=True) == "/srv/monitors/demo.yaml"
    with pytest.raises(ConfigError):
        store.claim_monitor("demo", "/srv/monitors/demo.yaml")  # the old file is now the intruder


def test_the_owning_file_releases_a_monitor_name(store) -> None:  # type: ignore[no-untyped-def]
    """Session 24 (an on-call tryout): `fairmon demo --db ...` kept the name 'demo', so Airflow's fairmon_demo
    (monitors/demo.yaml) was refused on every task; the demo now releases it when it ends."""
    assert store.claim_monitor("demo", "/srv/demo-output/demo.yaml") is None
    assert store.release_monitor("demo", "/srv/monitors/demo.yaml") is False  # not the owner
    assert store.release_monitor("demo", "/srv/demo-output/demo.yaml") is True
    assert store.claim_monitor("demo", "/srv/monitors/demo.yaml") is None  # no owner left: claimed
