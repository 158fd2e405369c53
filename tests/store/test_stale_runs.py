"""Runs left ``running`` by a crashed process are failed with a reason by the next run (issue 15 item 12)."""

from __future__ import annotations

import dataclasses

import pytest
import sqlalchemy as sa
from store_seed import day, window

from fairmon.store import NEXT_STEP, RecordError, Store
from fairmon.store._liveness import (
    ERR_STALE_AGE,
    ERR_STALE_LATER,
    ERR_STALE_RUN,
    ERR_STALE_UNFINISHED,
    LATER_STEP,
)

pytestmark = pytest.mark.postgres


def _age(engine, monitor: str, i: int, hours: float) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE runs SET updated_at = now() - make_interval(hours => :h) FROM monitors m "
                "WHERE m.monitor_id = runs.monitor_id AND m.name = :mon AND runs.window_start = :ws"
            ),
            {"h": hours, "mon": monitor, "ws": day(i)},
        )


def test_stale_running_runs_become_failed_with_a_reason(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    store.write_window(window("demo", 0, dp=0.10))
    stuck = store.write_window(window("demo", 1, dp=0.20))
    store.mark_run("demo", day(1), day(2), "running", details={"attempt": 2})  # a re-run that crashed
    store.mark_run("demo", day(2), day(3), "running")  # a live run
    store.mark_run("other", day(1), day(2), "running")  # another monitor's run
    _age(engine, "demo", 1, 2)
    _age(engine, "other", 1, 2)

    failed = store.fail_stale_runs("demo", 3600)

    assert [r.run_id for r in failed] == [stuck]
    run = failed[0]
    assert run == store.get_run_by_id(stuck)
    assert run.status == "failed" and run.error is not None
    assert run.error.startswith("stale: no progress for 72") and run.error.endswith(" s (process crashed?)")
    assert ERR_STALE_RUN.format(seconds=7200.0) == "stale: no progress for 7200 s (process crashed?)"
    assert run.details["error"] == run.error and run.details["attempt"] == 2
    assert run.details["stale_since"] is not None
    # the crashed re-run loses nothing: the rows of the attempt that completed stay, marked kept
    assert run.details["results_kept"] is True and run.details["persisted_status"] == "succeeded"
    assert len(store.metrics_of_run(stuck)) == 4 and store.evidence_of_run(stuck) != []
    latest = store.history("demo", "dp_difference", attribute="sex")
    assert [(r["window_start"], r["value"]) for r in latest] == [
        (day(0), pytest.approx(0.10)), (day(1), pytest.approx(0.20))]
    assert [r.status for r in store.runs("demo")] == ["succeeded", "failed", "running"]
    assert store.get_run("other", day(1)).status == "running"  # type: ignore[union-attr]
    assert store.fail_stale_runs("demo", 3600) == []  # nothing left to fail


def test_heartbeat_keeps_a_slow_run_alive(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    run_id = store.mark_run("demo", day(0), day(1), "running")
    _age(engine, "demo", 0, 2)
    assert store.heartbeat_run(run_id) is True
    assert store.fail_stale_runs("demo", 3600) == []
    _age(engine, "demo", 0, 2)
    assert [r.run_id for r in store.fail_stale_runs("demo", 3600)] == [run_id]
    assert store.heartbeat_run(run_id) is False  # it is failed now: a heartbeat does not revive it
    assert store.get_run_by_id(run_id).status == "failed"  # type: ignore[union-attr]


def test_status_marks_count_as_progress(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    store.mark_run("demo", day(0), day(1), "running")
    _age(engine, "demo", 0, 2)
    store.mark_run("demo", day(0), day(1), "running")  # the next attempt starts the window again
    assert store.fail_stale_runs("demo", 3600) == []
    assert store.fail_stale_runs("no-such-monitor", 0) == []
    assert store.monitors() == ["demo"]  # asking about a monitor does not create it
    with pytest.raises(RecordError) as info:
        store.fail_stale_runs("demo", -1)
    assert str(info.value) == ERR_STALE_AGE.format(value=-1)


def _stored(store: Store, i: int, next_step: str) -> int:
    """A stored window (persist wrote ``details.next_step``, as the pipeline's persist does)."""
    rec = window("demo", i, dp=0.1 * (i + 1))
    rec = dataclasses.replace(rec, run=dataclasses.replace(rec.run, details={NEXT_STEP: next_step}))
    return store.write_window(rec)


def test_a_stored_window_whose_alerting_steps_stopped_is_failed_naming_the_step(
    store: Store, engine  # type: ignore[no-untyped-def]
) -> None:
    """A process killed after persist (its drift, alerts and FEU never ran) left the window 'succeeded'
    with nothing to say its alert was never sent; persist now records the step still to run."""
    done = _stored(store, 0, "drift")
    stopped = _stored(store, 1, "drift")
    assert store.advance_run(stopped, "drift", "alert")  # drift (and more) finished, then the process died
    moving = _stored(store, 2, "drift")
    assert store.get_run_by_id(stopped).details[NEXT_STEP] == "alert"  # type: ignore[union-attr]
    assert store.advance_run(done, "drift", None)  # its last step finished
    assert NEXT_STEP not in store.get_run_by_id(done).details  # type: ignore[union-attr]
    for i in (0, 1):
        _age(engine, "demo", i, 2)

    failed = store.fail_stale_runs("demo", 3600)

    assert [r.run_id for r in failed] == [stopped]
    run = failed[0]
    assert run.status == "failed" and run.error is not None
    assert run.error == ERR_STALE_UNFINISHED.format(seconds=float(run.error.split()[7]), step="alert")
    assert run.error.startswith("stale: results stored, then no progress for 72")
    assert run.details["failed_step"] == "alert" and run.details["results_kept"] is True
    assert run.details["persisted_status"] == "succeeded" and run.model_version is not None
    assert len(store.metrics_of_run(stopped)) == 4  # the stored window loses nothing
    assert [r.status for r in store.runs("demo")] == ["succeeded", "failed", "succeeded"]  # the live one stays
    assert store.get_run_by_id(moving).details[NEXT_STEP] == "drift"  # type: ignore[union-attr]


def test_a_window_whose_feu_stopped_keeps_its_status_and_says_what_is_unfinished(
    store: Store, engine  # type: ignore[no-untyped-def]
) -> None:
    """Review (session 24): a death in FEU or the follow-up failed a window whose alerts were sent, taking
    it out of the drift history. After the alerts only the unfinished step is recorded; FEU finishing
    later (it was slow, not dead) removes the note."""
    run_id = _stored(store, 0, "drift")
    assert store.advance_run(run_id, "alert", "feu") is False  # not the step it records: nothing changes
    assert store.advance_run(run_id, "drift", "feu", later=True)
    _age(engine, "demo", 0, 2)
    (swept,) = store.fail_stale_runs("demo", 3600)
    assert swept.status == "succeeded" and swept.error is None
    note = swept.details["unfinished"]
    assert note["step"] == "feu" and note["error"] == ERR_STALE_LATER.format(
        seconds=float(note["error"].split()[4]), step="feu")
    assert "its FEU candidates or follow-up are not: request them with fairmon feu" in note["error"]
    assert LATER_STEP not in swept.details and store.fail_stale_runs("demo", 0) == []  # swept once
    assert store.advance_run(run_id, "feu", "followup", later=True)  # FEU was slow, not dead
    after = store.get_run_by_id(run_id)
    assert after is not None and "unfinished" not in after.details and after.details[LATER_STEP] == "followup"
    assert store.advance_run(run_id, "followup", None)
    assert store.advance_run(run_id, "report", "alert") is False  # a task re-run on a complete window
    assert not {NEXT_STEP, LATER_STEP, "unfinished"} & set(store.get_run_by_id(run_id).details)  # type: ignore[union-attr]


def test_advance_run_is_the_holding_attempts_and_a_heartbeat_keeps_steps_alive(
    store: Store, engine  # type: ignore[no-untyped-def]
) -> None:
    run_id = _stored(store, 0, "drift")
    assert store.advance_run(run_id, "drift", "diagnose", "someone-else") is True  # no attempt holds the row
    run_id, attempt, _ = store.begin_attempt("demo", day(1), day(2))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE runs SET status = 'succeeded', details = '{\"next_step\": \"drift\"}' "
                             "WHERE run_id = :r"), {"r": run_id})
    assert store.advance_run(run_id, "drift", "diagnose", "someone-else") is False
    assert store.advance_run(run_id, "drift", "diagnose", attempt) is True
    _age(engine, "demo", 1, 2)
    assert store.heartbeat_run(run_id, attempt)  # the next step started (it waited in a queue)
    assert store.fail_stale_runs("demo", 3600) == []
