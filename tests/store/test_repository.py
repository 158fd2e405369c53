"""Idempotent window writes, mid-write failure, status marks, history reads, FEU candidates, records."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
import sqlalchemy as sa
from store_seed import day, window

from fairmon.errors import StoreError
from fairmon.store import (
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RecordError,
    RunRecord,
    Store,
    WindowRecords,
)
from fairmon.store import records as rec

pytestmark = pytest.mark.postgres

RESULT_TABLES = (
    "runs",
    "metrics",
    "metric_latest",
    "evidence",
    "explanation_metrics",
    "findings",
    "feu_candidates",
    "feu_baselines",
)
VOLATILE = {"created_at", "updated_at"}


def dump(engine) -> dict[str, list[tuple]]:  # type: ignore[no-untyped-def]
    """Every row of every result table, without write timestamps, in a stable order."""
    out = {}
    with engine.connect() as conn:
        for t in RESULT_TABLES:
            res = conn.execute(sa.text(f"SELECT * FROM {t}"))
            keep = [i for i, c in enumerate(res.keys()) if c not in VOLATILE]
            out[t] = sorted((tuple(str(r[i]) for i in keep) for r in res), key=str)
    return out


def test_same_window_twice_gives_identical_rows(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    w = window("demo", 0)
    first = store.write_window(w)
    before = dump(engine)
    second = store.write_window(w)
    assert first == second
    assert dump(engine) == before
    assert len(before["metrics"]) == 4 and len(before["evidence"]) == 1 and len(before["findings"]) == 1
    # NaN is stored as NULL (undefined), never as a number
    eo = [m for m in store.metrics_of_run(first) if m.metric == "eo_difference"][0]
    assert eo.value is None and eo.n_nan == 5000


def test_rerun_replaces_rows_never_duplicates(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    run_id = store.write_window(window("demo", 0, dp=0.10))
    store.write_window(window("demo", 0, dp=0.30, extra=False))
    ms = {(m.metric, m.group): m.value for m in store.metrics_of_run(run_id)}
    assert ms == {
        ("dp_difference", ""): pytest.approx(0.30),
        ("selection_rate", "Female"): pytest.approx(0.40),
        ("selection_rate", "Male"): pytest.approx(0.70),
    }
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM runs")).scalar() == 1
        # the series the re-run no longer has left the latest table too
        latest = dict(
            conn.execute(sa.text("SELECT metric, value FROM latest_metrics WHERE group_key = ''")).all()
        )
    assert latest == {"dp_difference": pytest.approx(0.30)}


def test_failure_mid_write_leaves_earlier_state(
    store: Store, engine, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    store.write_window(window("demo", 0, dp=0.10))
    store.write_window(window("demo", 1, dp=0.12))
    before = dump(engine)
    calls = []

    def boom(self, conn, run_id, mid, ws, rows):  # type: ignore[no-untyped-def]
        # the run row was updated and this window's metrics deleted + re-inserted before this point
        calls.append(
            conn.execute(sa.text("SELECT count(*) FROM metrics WHERE run_id = :r"), {"r": run_id}).scalar()
        )
        raise RuntimeError("injected failure after the metrics insert")

    monkeypatch.setattr(Store, "_insert_evidence", boom)
    with pytest.raises(RuntimeError, match="injected"):
        store.write_window(window("demo", 1, dp=0.99, status="labels_pending"))
    assert calls == [4]  # half of the window was written inside the transaction...
    assert dump(engine) == before  # ...and rolled back: the earlier rows are untouched
    assert store.get_run("demo", day(1)).status == "succeeded"  # type: ignore[union-attr]


def test_mark_failed_records_failure_not_zeros(store: Store) -> None:
    """A window that never completed: failed, no result rows; the latest value is the last completed one."""
    store.write_window(window("demo", 0, dp=0.10))
    store.mark_run("demo", day(1), day(2), "running", model_version="v2")
    run_id = store.mark_run("demo", day(1), day(2), "failed", error="RuntimeError: worker lost")
    run = store.get_run("demo", day(1), day(2))
    assert run is not None and run.run_id == run_id
    assert (run.status, run.error, run.model_version) == ("failed", "RuntimeError: worker lost", None)
    assert "results_kept" not in run.details
    assert store.metrics_of_run(run_id) == [] and store.evidence_of_run(run_id) == []
    latest = store.history("demo", "dp_difference", attribute="sex")
    assert [(r["window_start"], r["value"]) for r in latest] == [(day(0), pytest.approx(0.10))]
    with store.engine.connect() as conn:
        lv = conn.execute(
            sa.text("SELECT window_start, value FROM latest_metrics WHERE metric='dp_difference'")
        ).one()
    assert lv == (day(0), pytest.approx(0.10))


@pytest.mark.parametrize("status", ["failed", "data_invalid", "skipped"])
def test_a_failed_rerun_keeps_the_rows_an_earlier_attempt_wrote(store: Store, status: str) -> None:
    """A re-run that fails (or finds its data invalid or late) loses no computed window: the rows stay,
    marked kept with the status they were written with, and describe the model version they came from."""
    run_id = store.write_window(window("demo", 0, dp=0.20))
    before = (store.metrics_of_run(run_id), store.evidence_of_run(run_id))
    store.save_feu_candidates(run_id, [FEUCandidateRecord(0, {"lr": 0.01}, {"dp": 0.05}, selected=True)])
    store.mark_run("demo", day(0), day(1), "running", details={"attempt": 2})
    assert store.get_run("demo", day(0)).details["stored_status"] == "succeeded"  # type: ignore[union-attr]
    store.mark_run("demo", day(0), day(1), status, error="ConnectionError: reset", model_version="v2",  # type: ignore[arg-type]
                   n_rows=5000, details={"attempt": 2})
    run = store.get_run("demo", day(0))
    assert run is not None and run.status == status
    assert run.details["results_kept"] is True and run.details["persisted_status"] == "succeeded"
    assert (run.model_version, run.n_rows) == ("v1", 5000)  # what the kept rows were computed with
    assert run.details["attempt_model_version"] == "v2" and "attempt_n_rows" not in run.details  # same count
    assert (store.metrics_of_run(run_id), store.evidence_of_run(run_id)) == before
    assert [c.selected for c in store.feu_candidates(run_id)] == [True]  # the recommendation of those rows
    latest = store.history("demo", "dp_difference", attribute="sex")
    assert [(r["window_start"], r["value"]) for r in latest] == [(day(0), pytest.approx(0.20))]
    # a second failed mark still knows what the rows are; a successful write replaces everything
    store.mark_run("demo", day(0), day(1), "failed", error="again", details={"attempt": 3})
    assert store.get_run("demo", day(0)).details["persisted_status"] == "succeeded"  # type: ignore[union-attr]
    store.write_window(window("demo", 0, dp=0.30))
    run = store.get_run("demo", day(0))
    assert run is not None and run.status == "succeeded" and "results_kept" not in run.details
    assert store.feu_candidates(run_id) == [] and store.feu_baselines(run_id) == {}  # computed from the old rows
    assert [float(m.value) for m in store.metrics_of_run(run_id) if m.metric == "dp_difference"] == [pytest.approx(0.30)]


def test_mark_running_keeps_results_until_rewritten(store: Store) -> None:
    run_id = store.write_window(window("demo", 0))
    store.mark_run("demo", day(0), day(1), "running")
    assert store.get_run_by_id(run_id).status == "running"  # type: ignore[union-attr]
    assert len(store.metrics_of_run(run_id)) == 4


def test_rerun_of_old_window_does_not_clobber_latest(store: Store) -> None:
    store.write_window(window("demo", 0, dp=0.10))
    store.write_window(window("demo", 1, dp=0.20))
    store.write_window(window("demo", 0, dp=0.50))  # backfill of an older window
    with store.engine.connect() as conn:
        lv = conn.execute(
            sa.text("SELECT window_start, value FROM latest_metrics WHERE metric='dp_difference'")
        ).one()
    assert lv == (day(1), pytest.approx(0.20))


def test_history_reads_use_only_earlier_completed_windows(store: Store) -> None:
    for i in range(6):  # window 2's labels arrive later: its results are stored, the label metrics pending
        store.write_window(window("demo", i, dp=0.1 + 0.01 * i, status="labels_pending" if i == 2 else "succeeded"))
    store.mark_run("demo", day(3), day(4), "data_invalid", error="3 expectations failed")
    store.write_window(window("other", 2, dp=0.9))

    runs = store.completed_runs_before("demo", day(5), 3)
    assert [r.window_start for r in runs] == [day(1), day(2), day(4)]
    assert [r.status for r in runs] == ["succeeded", "labels_pending", "succeeded"]
    assert all(r.monitor == "demo" for r in runs)
    only = store.completed_runs_before("demo", day(5), 3, statuses=("succeeded",))
    assert [r.window_start for r in only] == [day(0), day(1), day(4)]

    hist = store.metric_history("demo", "dp_difference", attribute="sex", before=day(5), n=2)
    assert [(m.window_start, round(m.value or 0, 6)) for m in hist] == [(day(2), 0.12), (day(4), 0.14)]
    sel = store.metric_history("demo", "selection_rate", attribute="sex", group="Female", before=day(2))
    assert [m.window_start for m in sel] == [day(0), day(1)]

    ev = store.evidence_history("demo", method="ie-dt", before=day(3), n=10)
    assert [e.window_start for e in ev] == [day(0), day(1), day(2)]
    assert (
        ev[0].key_attributes == ("age", "priors_count")
        and ev[0].rules_text == "age <= 25 OR priors_count > 3"
    )

    g = store.gesd_history("demo", explainer="shap+lime", before=day(6), n=2)
    assert [x.window_start for x in g] == [day(4), day(5)]
    assert g[-1].group_stability == {"Female": 0.80, "Male": 0.82}
    assert store.runs("demo", statuses=["data_invalid"])[0].error == "3 expectations failed"


def test_findings_open_and_between(store: Store) -> None:
    def f(status: str) -> list[FindingRecord]:
        return [FindingRecord("ci_outside_range", "dp_difference", "warning", status=status, group="sex")]  # type: ignore[arg-type]

    statuses = ["pending", "open", "ongoing", "resolved", "open"]
    for i, st in enumerate(statuses):
        run_id = store.write_window(window("demo", i))
        store.write_findings(run_id, f(st))
    assert [x.window_start for x in store.open_findings("demo")] == [day(4)]
    assert store.open_findings("demo", before=day(4)) == []  # resolved at window 3
    assert [x.status for x in store.open_findings("demo", before=day(3))] == ["ongoing"]
    between = store.findings_between("demo", day(1), day(3))
    assert [(x.window_start, x.status, x.monitor) for x in between] == [
        (day(1), "open", "demo"),
        (day(2), "ongoing", "demo"),
    ]
    assert len(store.findings_between(None, day(0), day(10), status="open")) == 2


def test_feu_candidates_roundtrip_and_one_selected(store: Store) -> None:
    run_id = store.write_window(window("demo", 0))
    cands = [
        FEUCandidateRecord(
            i,
            {"lr": 10 ** -(i + 2), "epochs": 10 + i, "threshold": 0.5},
            {"auc": 0.7 + i / 100, "dp": 0.1},
            pareto=i < 2,
            selected=i == 1,
        )
        for i in range(3)
    ]
    store.save_feu_candidates(run_id, cands)
    store.save_feu_candidates(run_id, cands)  # replace, not duplicate
    got = store.feu_candidates(run_id)
    assert [(c.candidate_index, c.pareto, c.selected) for c in got] == [
        (0, True, False),
        (1, True, True),
        (2, False, False),
    ]
    assert (
        store.set_feu_registry_version(run_id, 1, "7")
        and store.feu_candidates(run_id)[1].registry_version == "7"
    )
    with pytest.raises(RecordError, match="at most one may be"):
        store.save_feu_candidates(
            run_id, [FEUCandidateRecord(0, selected=True), FEUCandidateRecord(1, selected=True)]
        )
    with pytest.raises(RecordError, match="no run with id 999999"):
        store.save_feu_candidates(999999, cands)


def test_feu_baselines_are_replaced_with_the_candidates(store: Store) -> None:
    """The baselines an FEU result was compared with are stored beside its candidates, as one set."""
    run_id = store.write_window(window("demo", 1))
    base = {"production": {"validation": {"dp": 0.1, "selection_rate": 0.8}, "test": {"dp": 0.12}},
            "threshold_optimizer": {"validation": {"dp": 0.0, "band_ok": False}, "test": {"dp": 0.01, "gesd": None}}}
    store.save_feu_candidates(run_id, [FEUCandidateRecord(0, selected=True)], baselines=base)
    assert store.feu_baselines(run_id) == base
    store.save_feu_candidates(run_id, [FEUCandidateRecord(0)], baselines={"constant": {"test": {"dp": 0.0}}})
    assert store.feu_baselines(run_id) == {"constant": {"test": {"dp": 0.0}}}  # replaced, not merged
    store.save_feu_candidates(run_id, [])
    assert store.feu_baselines(run_id) == {} and store.feu_baselines(999999) == {}


def test_read_window_roundtrip(store: Store) -> None:
    w = window("demo", 0)
    run_id = store.write_window(w)
    back = store.read_window(run_id)
    assert back.run.monitor == "demo" and back.run.timings == {"rumie": 1.5, "gesd": 2.0}
    assert {m.key for m in back.metrics} == {m.key for m in w.metrics}
    assert back.evidence[0].tree == {"feature": "age", "threshold": 25.0}
    assert back.findings[0].numbers == {"allowed": [0, 0.1]} and back.findings[0].ci_low == pytest.approx(
        0.08
    )


def test_records_validate_inputs() -> None:
    naive = datetime(2026, 1, 1)
    with pytest.raises(RecordError, match="must be timezone-aware"):
        RunRecord("m", naive, naive)
    with pytest.raises(RecordError, match="must be after window_start"):
        RunRecord("m", day(1), day(0))
    with pytest.raises(RecordError, match="must be one of"):
        RunRecord("m", day(0), day(1), status="ok")  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="infinite"):
        MetricRecord("x", math.inf)
    assert MetricRecord("x", float("nan")).value is None
    with pytest.raises(RecordError, match=r"duplicate MetricRecord key \('x', 'sex', ''\)"):
        WindowRecords(RunRecord("m", day(0), day(1)), metrics=[MetricRecord("x", 1, attribute="sex")] * 2)
    with pytest.raises(RecordError, match="a failed window carries no results"):
        WindowRecords(RunRecord("m", day(0), day(1), status="failed"), metrics=[MetricRecord("x", 1)])
    assert issubclass(RecordError, StoreError) and RecordError.retryable is False
    assert rec.ERR_NAIVE_TIME.startswith("{record}.{field} must be timezone-aware")


def test_finding_record_from_drift_finding() -> None:
    class F:  # the duck-typed shape of fairmon.drift.findings.Finding
        kind, metric, group, severity, status = "rumie_dscore", "rumie_honest_dscore", "", "critical", "open"
        value, ci, baseline, since = 0.31, (0.25, 0.37), 0.1, day(3)
        fingerprint, numbers, message, notify = "ab" * 16, {"p_value": 0.001}, "DScore 0.31", True

    r = FindingRecord.from_finding(F())
    assert (r.ci_low, r.ci_high, r.since, r.fingerprint) == (0.25, 0.37, day(3), "ab" * 16)
    assert r.numbers == {"p_value": 0.001, "notify": True}


def test_concurrent_writers_of_one_window_never_duplicate(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    """Two task attempts writing the same new window at once (new monitor too): one run, one row set."""
    import threading

    errors: list[BaseException] = []
    ids: list[int] = []
    barrier = threading.Barrier(3)

    def go(dp: float) -> None:
        try:
            barrier.wait()
            ids.append(store.write_window(window("fresh", 0, dp=dp)))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(0.1 * (i + 1),)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(set(ids)) == 1
    rows = dump(engine)
    assert len(rows["runs"]) == 1 and len(rows["metrics"]) == 4 and len(rows["metric_latest"]) == 4


def test_concurrent_writers_of_one_monitor_do_not_deadlock(store: Store, engine) -> None:  # type: ignore[no-untyped-def]
    """A backfill writing old windows while the scheduled run writes (and fails) new ones: every write
    lands, the latest rows point at the newest window (writers of one monitor are serialised)."""
    import threading

    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def go(i: int) -> None:
        try:
            barrier.wait()
            for rep in range(3):
                store.write_window(window("busy", i, dp=0.1 * (i + 1) + 0.01 * rep))
                store.mark_run("busy", day(i + 10), day(i + 11), "failed", error="boom")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    rows = dump(engine)
    assert len(rows["runs"]) == 12 and len(rows["metrics"]) == 6 * 4
    with engine.connect() as conn:
        latest = conn.execute(sa.text("SELECT DISTINCT window_start FROM metric_latest")).scalars().all()
    assert latest == [day(5)]


def test_delete_monitor_removes_everything_of_that_monitor_only(store: Store) -> None:
    run_id = store.write_window(window("demo", 0))
    store.save_feu_candidates(run_id, [FEUCandidateRecord(0, {"lr": 0.01}, {"dp": 0.05}, selected=True)])
    store.write_window(window("demo", 1))
    store.write_window(window("other", 0))
    assert store.delete_monitor("demo") == 2
    assert store.monitors() == ["other"] and store.get_run("demo", day(0)) is None
    assert store.metrics_of_run(run_id) == [] and store.feu_candidates(run_id) == []
    assert store.history("demo", "dp_difference", attribute="sex") == []
    assert len(store.history("other", "dp_difference", attribute="sex")) == 1
    assert store.delete_monitor("demo") == 0  # nothing left
    store.write_window(window("other", 1))
    store.claim_monitor("other", "/specs/other.yaml")
    assert store.delete_monitor("other", owned_by="/demo-output/demo.yaml") is None  # another file's: kept
    assert len(store.runs("other")) == 2
    assert store.delete_monitor("other", owned_by="/specs/other.yaml") == 2


def test_a_new_attempt_over_kept_rows_says_what_they_are(store: Store) -> None:
    """begin_attempt marks the rows it starts over (stored_status, the carried keys) in its own
    transaction, and the run's spec fingerprint keeps describing them until a write replaces them."""
    store.write_window(window("demo", 0))
    store.mark_run("demo", day(0), day(1), "succeeded", details={"prediction_source": "model", "note": "x"})
    run_id, _, _ = store.begin_attempt("demo", day(0), day(1), spec_fingerprint="e" * 64, details={"attempt": 2},
                                       carry=["prediction_source"])
    run = store.get_run_by_id(run_id)
    assert run is not None and run.status == "running" and run.spec_fingerprint == "f" * 64
    assert run.details == {"attempt": 2, "stored_status": "succeeded", "prediction_source": "model",
                           "attempt_spec_fingerprint": "e" * 64}
    store.mark_run("demo", day(0), day(1), "failed", error="boom", spec_fingerprint="e" * 64, details=run.details)
    failed = store.get_run_by_id(run_id)
    assert failed is not None and failed.spec_fingerprint == "f" * 64 and failed.details["results_kept"] is True
    # a window that never completed: nothing to describe, the attempt's own fingerprint
    _, _, _ = store.begin_attempt("demo", day(5), day(6), spec_fingerprint="e" * 64, details={"attempt": 1})
    fresh = store.get_run("demo", day(5))
    assert fresh is not None and fresh.spec_fingerprint == "e" * 64 and "stored_status" not in fresh.details
