"""spec_changed events: a window computed under another spec than the series' previous one (issue 20)."""

from __future__ import annotations

import dataclasses

import pytest
import sqlalchemy as sa
from store_seed import day, window

pytestmark = pytest.mark.postgres

NEW = "e" * 64


def test_a_changed_fingerprint_is_noted_stored_and_marked_in_metric_series(store) -> None:  # type: ignore[no-untyped-def]
    for i in range(2):
        store.write_window(window("demo", i))
    assert store.spec_change_of("demo", day(0), "f" * 64) is None  # a first window / the same spec
    assert store.spec_change_of("demo", day(2), "f" * 64) is None
    change = store.spec_change_of("demo", day(2), NEW)
    assert change is not None and change.previous_window_start == day(1) and change.previous_fingerprint == "f" * 64
    assert "spec_changed: demo window 2026-01-03 uses spec eeeeeeeeeeee" in change.text
    recs = window("demo", 2)
    recs = dataclasses.replace(recs, run=dataclasses.replace(recs.run, spec_fingerprint=NEW))
    run_id = store.write_window(recs)
    run_id = int(run_id if isinstance(run_id, int) else store.get_run("demo", day(2), day(3)).run_id)
    store.record_spec_change(run_id, change)
    store.record_spec_change(run_id, change)  # a retry: still one event
    assert store.spec_changes("demo") == [change]
    # re-running window 1 with the new spec: compared with that window's own earlier run
    again = store.spec_change_of("demo", day(1), NEW)
    assert again is not None and again.previous_window_start == day(1)
    with store.engine.connect() as c:
        marked = c.execute(sa.text(
            "SELECT window_start, bool_or(spec_changed), min(spec_fingerprint) FROM metric_series "
            "WHERE monitor = 'demo' GROUP BY 1 ORDER BY 1")).all()
    assert [(r[1], r[2][:1]) for r in marked] == [(False, "f"), (False, "f"), (True, "e")]
