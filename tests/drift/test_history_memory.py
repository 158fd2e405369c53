"""Drift history assembled over the reader protocol from memory: no Postgres needed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fairmon.drift import AlertPolicy, Baseline, decide
from fairmon.drift.history import (
    ERR_HISTORY_CAPPED,
    InMemoryHistory,
    history_summaries,
    open_drift_since,
    reference_summary,
)
from fairmon.drift.window import WindowSummary
from fairmon.fairness.rumie import Evidence
from fairmon.results import evidence_from_dict, evidence_record
from fairmon.store.records import FindingRecord, MetricRecord, RunRecord

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RULE = "age <= 30 OR region = north"


def _day(i: int) -> datetime:
    return T0 + timedelta(days=i)


def _store(values: list[float], *, statuses: dict[int, str] | None = None) -> InMemoryHistory:
    mem = InMemoryHistory()
    for i, v in enumerate(values):
        status = (statuses or {}).get(i, "succeeded")
        ev = evidence_from_dict({"method": "ie-dt", "status": "ok", "dscore": 0.1, "honest_dscore": 0.08,
                                 "p_value": 0.2, "rules": [RULE], "rule": RULE, "key_attributes": ["age"],
                                 "fraction": 0.4, "group_size": 400, "n_rows": 1000,
                                 "rule_conditions": [[{"column": "age", "op": "<=", "value": 30}]]})
        mem.add_run(
            RunRecord("m", _day(i), _day(i + 1), status=status),  # type: ignore[arg-type]
            metrics=[MetricRecord("dp_difference", v, attribute="sex", ci_low=v - 0.01, ci_high=v + 0.01, n=5000)],
            evidence=[evidence_record(ev, group_overlap=0.9)],
        )
    return mem


def test_history_comes_back_as_the_typed_results_the_windows_computed() -> None:
    mem = _store([0.03] * 6, statuses={2: "failed"})
    hist, short = history_summaries(mem, "m", _day(6), lead=10)
    assert short is None
    assert [h.window_start for h in hist] == [_day(i) for i in (0, 1, 3, 4, 5)]  # the failed window is no history
    ev = hist[-1].evidence
    assert isinstance(ev, Evidence) and ev.rule == RULE and ev.rules == [RULE] and ev.n_rows == 1000
    assert ev.rule_conditions == [[{"column": "age", "op": "<=", "value": 30}]]
    assert hist[-1].group_overlap == 0.9 and hist[-1].key_attributes == ("age",)
    assert hist[-1].measurements()[("dp_difference", "sex")].value == 0.03


def test_a_decision_over_the_in_memory_history_finds_the_change() -> None:
    mem = _store([0.03, 0.031, 0.029, 0.03, 0.032, 0.028, 0.03, 0.031])
    hist, _ = history_summaries(mem, "m", _day(8), lead=10)
    rows = [{"metric": "dp_difference", "attribute": "sex", "group": None, "value": 0.12, "ci_low": 0.11,
             "ci_high": 0.13, "n": 5000, "status": "ok"}]
    current = WindowSummary("m", _day(8), _day(9), metrics=rows)
    findings = decide(current, hist, baseline=Baseline(min_history=5), policy=AlertPolicy(persistence_m=1,
                                                                                         persistence_n=1))
    assert [(f.kind, f.metric, f.status) for f in findings if f.metric == "dp_difference"] == [
        ("significant_change", "dp_difference", "open")]


def test_the_cap_says_why_the_history_is_short() -> None:
    mem = _store([0.03] * 12)
    since = {"significant_change:dp_difference:sex": _day(3)}
    hist, short = history_summaries(mem, "m", _day(12), lead=5, open_since=since, max_windows=8)
    assert len(hist) == 8
    assert short == ERR_HISTORY_CAPPED.format(cap=8, monitor="m", oldest=_day(3).isoformat(), drifted=9, lead=5)


def test_reference_window_and_open_drifts() -> None:
    mem = _store([0.03, 0.04], statuses={1: "failed"})
    ok = reference_summary(mem, WindowSummary("m", _day(0), _day(1)))
    assert ok.status == "completed" and ok.evidence is not None and ok.evidence.rule == RULE
    assert reference_summary(mem, WindowSummary("m", _day(1), _day(2))).status == "failed"
    assert reference_summary(mem, WindowSummary("m", _day(5), _day(6))).status == "not run yet"
    mem.findings = [
        FindingRecord("ci_outside_range", "dp_difference", "warning", "open", attribute="sex", group="sex",
                      since=_day(0), window_start=_day(0), monitor="m"),
        FindingRecord("ci_outside_range", "dp_difference", "warning", "resolved", attribute="sex", group="sex",
                      since=_day(0), window_start=_day(1), monitor="m"),
        FindingRecord("rumie_rise", "rumie_honest_dscore", "critical", "ongoing", since=_day(0),
                      window_start=_day(1), monitor="m"),
    ]
    assert open_drift_since(mem, "m", _day(2)) == {"rumie_rise:rumie_honest_dscore:*": _day(0)}
    assert open_drift_since(mem, "m", _day(1)) == {"ci_outside_range:dp_difference:sex": _day(0)}
