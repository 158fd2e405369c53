"""Views and every ``sql/queries/*.sql`` example on seeded data; the read-only analyst role."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from store_seed import seeded_database

from fairmon.store import (
    AlertRecord,
    EvidenceRecord,
    ExplanationMetricRecord,
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RunRecord,
    Store,
    WindowRecords,
)

pytestmark = pytest.mark.postgres

QUERIES = Path(__file__).resolve().parents[2] / "sql" / "queries"
TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
N_DEMO = 100  # demo windows: 100 .. 1 days ago
NEW_GROUP_AGO = 10  # from this window on, RUMIE finds a different group


def ago(k: int) -> datetime:
    return TODAY - timedelta(days=k)


def windows_inside_last(days: int) -> list[int]:
    """The seeded demo windows (as days ago, oldest first) that ``now() - interval 'N days'`` keeps.

    Evaluated when the query's answer is checked, not at import: a run that crosses midnight UTC
    moves the cutoff past one more daily window (CI once failed on exactly that).
    """
    cutoff = datetime.now(UTC) - timedelta(days=days)
    return [k for k in range(N_DEMO, 0, -1) if ago(k) >= cutoff]


def dp_of(k: int) -> float:
    return round(0.05 + 0.001 * (N_DEMO - k) + (0.01 if k % 2 else 0.0), 6)


def seed(store: Store) -> dict[str, Any]:
    ids: dict[str, Any] = {}
    for k in range(N_DEMO, 0, -1):
        new = k <= NEW_GROUP_AGO
        keys = ("race", "sex") if new else ("age", "priors_count")
        rules = "sex = Female AND race = Black" if new else "age <= 25 OR priors_count > 3"
        findings = []
        status_by_k = {5: "open", 4: "ongoing", 3: "resolved"}
        if k in status_by_k:
            findings.append(
                FindingRecord(
                    "ci_outside_range",
                    "dp_difference",
                    "warning",
                    status=status_by_k[k],
                    group="sex",  # type: ignore[arg-type]
                    value=dp_of(k),
                    baseline=0.05,
                    numbers={"groups": {"rate": "selection_rate",
                                        "disadvantaged": {"group": "Female", "value": 0.3, "n": 412},
                                        "advantaged": {"group": "Male", "value": 0.3 + dp_of(k), "n": 588}}},
                    message=f"DP {dp_of(k)}",
                )
            )
        rid = store.write_window(
            WindowRecords(
                RunRecord("demo", ago(k), ago(k - 1), model_version="3"),
                metrics=[
                    MetricRecord(
                        "dp_difference",
                        dp_of(k),
                        attribute="sex",
                        ci_low=dp_of(k) - 0.02,
                        ci_high=dp_of(k) + 0.02,
                        n=5000,
                    ),
                    MetricRecord("selection_rate", 0.4, attribute="sex", group="Female", n=2400),
                ],
                evidence=[
                    EvidenceRecord(
                        "ie-dt",
                        0.2 + (0.1 if new else 0.0),
                        honest_dscore=0.15,
                        p_value=0.01,
                        key_attributes=keys,
                        rules_text=rules,
                    )
                ],
                explanation_metrics=[
                    ExplanationMetricRecord(
                        "gesd",
                        "gesd",
                        0.03,
                        explainer="shap+lime",
                        p_value=0.04,
                        group_stability={"Female": 0.8, "Male": 0.83},
                    )
                ],
                findings=findings,
            )
        )
        ids[k] = rid
    for k in range(5, 1, -1):
        store.write_window(
            WindowRecords(
                RunRecord("other", ago(k), ago(k - 1)),
                metrics=[MetricRecord("dp_difference", 0.3, attribute="race", n=800)],
                findings=[FindingRecord("data_validation", "rows", "critical", status="event")]
                if k == 2
                else [],
            )
        )
    store.mark_run(
        "other", ago(1), ago(0), "data_invalid", error="expect_column_values_to_not_be_null(age) failed"
    )
    # a window whose worker died mid-run (still 'running' 7 hours later) and one running right now
    store.mark_run("stale", ago(3), ago(2), "running")
    store.mark_run("stale", ago(1), ago(0), "running")
    # a stored window whose process died before its alert, and one whose FEU never finished (swept)
    store.write_window(WindowRecords(RunRecord("stale", ago(5), ago(4), details={"next_step": "alert"})))
    store.write_window(WindowRecords(RunRecord("stale", ago(6), ago(5), details={"next_step": "drift"})))
    store.mark_run("stale", ago(6), ago(5), "failed", error="drift: StoreError: connection lost",
                   details={"next_step": "drift", "failed_step": "drift"})  # a failed step keeps next_step
    store.write_window(WindowRecords(RunRecord("stale", ago(4), ago(3), details={
        "unfinished": {"step": "feu", "error": "stale: no progress for 25200 s before step 'feu' finished"}})))
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE runs SET updated_at = now() - interval '7 hours' WHERE window_start IN "
                             "(:ws, :stored) AND monitor_id = (SELECT monitor_id FROM monitors WHERE name = 'stale')"),
                     {"ws": ago(3), "stored": ago(5)})
    store.outbox_enqueue(
        AlertRecord(
            "fp-demo",
            "fairness",
            {"text": "DP difference 0.14 for sex"},
            monitor="demo",
            window_start=ago(5),
            severity="warning",
        )
    )
    store.outbox_transition("fp-demo", "pending", "sending")
    store.outbox_transition("fp-demo", "sending", "sent", slack_ts="1.1")
    store.outbox_enqueue(
        AlertRecord(
            "fp-other",
            "data",
            {"text": "data invalid"},
            monitor="other",
            window_start=ago(1),
            severity="critical",
        )
    )
    store.save_feu_candidates(
        ids[5],
        [
            FEUCandidateRecord(0, {"lr": 0.01}, {"auc": 0.7}, pareto=True),
            FEUCandidateRecord(1, {"lr": 0.001}, {"auc": 0.72, "test": {"balanced_accuracy": 0.7, "dp": 0.03},
                                                  "target": {"kind": "attribute", "attribute": "sex"}, "evaluation": 17},
                               pareto=True, selected=True, registry_version="v2"),
        ],
        baselines={"production": {"test": {"balanced_accuracy": 0.71, "dp": 0.12}},
                   "threshold_optimizer": {"validation": {"band_ok": False}, "test": {"balanced_accuracy": 0.73, "dp": 0.0}}},
    )
    with store.engine.begin() as conn:  # the team deployed the recommendation: windows from 3 days ago use v2
        conn.execute(sa.text("UPDATE runs SET model_version = 'v2' WHERE window_start >= :t AND monitor_id = "
                             "(SELECT monitor_id FROM monitors WHERE name = 'demo')"), {"t": ago(3)})
    return ids


@pytest.fixture(scope="module")
def seeded(pg_admin_url: str) -> Iterator[Store]:
    """One seeded database for the read-only tests of this module (seeding is the slow part)."""
    with seeded_database(pg_admin_url, seed) as store:
        yield store


def q(engine, sql: str, **params: Any) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.text(sql), params).mappings()]


def test_views(seeded: Store) -> None:
    e = seeded.engine
    series = q(
        e,
        "SELECT window_start, value, rolling_mean_7, rolling_n FROM metric_series WHERE monitor='demo' "
        "AND metric='dp_difference' AND attribute='sex' ORDER BY window_start",
    )
    values = [dp_of(k) for k in range(N_DEMO, 0, -1)]
    assert [r["value"] for r in series] == pytest.approx(values)
    for i, r in enumerate(series):
        win = values[max(0, i - 6) : i + 1]
        assert r["rolling_mean_7"] == pytest.approx(sum(win) / len(win), abs=1e-12)
        assert r["rolling_n"] == len(win)

    latest = q(
        e,
        "SELECT monitor, metric, attribute, group_key, window_start, value FROM latest_metrics ORDER BY 1, 2, 3, 4",
    )
    assert [(r["monitor"], r["metric"], r["group_key"], r["window_start"]) for r in latest] == [
        ("demo", "dp_difference", "", ago(1)),
        ("demo", "selection_rate", "Female", ago(1)),
        ("other", "dp_difference", "", ago(2)),  # window 1 of 'other' had invalid data: no results
    ]

    ev = q(e, "SELECT monitor, window_start, status, is_onset FROM drift_events ORDER BY window_start")
    assert [(r["monitor"], r["window_start"], r["status"], r["is_onset"]) for r in ev] == [
        ("demo", ago(5), "open", True),
        ("demo", ago(4), "ongoing", False),
        ("other", ago(2), "event", True),
    ]

    al = q(e, "SELECT monitor, state, headline, slack_ts FROM alert_history ORDER BY alert_id")
    assert al == [
        {"monitor": "demo", "state": "sent", "headline": "DP difference 0.14 for sex", "slack_ts": "1.1"},
        {"monitor": "other", "state": "pending", "headline": "data invalid", "slack_ts": None},
    ]

    ch = q(
        e,
        "SELECT window_start, rules_changed, is_new_group, attributes_added, attributes_removed, dscore_change "
        "FROM rumie_rule_changes WHERE monitor='demo' AND (rules_changed OR is_new_group)",
    )
    assert len(ch) == 1
    assert ch[0]["window_start"] == ago(NEW_GROUP_AGO) and ch[0]["is_new_group"] is True
    assert (ch[0]["attributes_added"], ch[0]["attributes_removed"]) == (
        ["race", "sex"],
        ["age", "priors_count"],
    )
    assert ch[0]["dscore_change"] == pytest.approx(0.1)


def _run_file(engine, path: Path) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    # run the file verbatim, as psql or a dashboard would (no bind parameters)
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute(path.read_text())
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall()]
        raw.rollback()
        return rows
    finally:
        raw.close()


EXPECT: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    # windows 89 .. 1 days ago are inside "now() - 90 days" (window 90 started at midnight, before it)
    "dp_difference_sex_last_90_days.sql": lambda rows: (
        len(rows) == len(windows_inside_last(90)) >= 88
        and [r["window_start"] for r in rows] == [ago(k) for k in windows_inside_last(90)]
        and [r["dp_difference"] for r in rows] == pytest.approx([dp_of(k) for k in windows_inside_last(90)])
    ),
    "dp_difference_all_monitors_last_90_days.sql": lambda rows: (
        [(r["monitor"], r["window_start"]) for r in rows] == [("demo", ago(k)) for k in windows_inside_last(90)]
    ),
    "new_discriminated_groups.sql": lambda rows: (
        [(r["monitor"], r["window_start"], r["new_group"]) for r in rows]
        == [("demo", ago(NEW_GROUP_AGO), "sex = Female AND race = Black")]
    ),
    "rumie_rule_changes.sql": lambda rows: (
        [(r["window_start"], r["prev_rules_text"], r["attributes_added"]) for r in rows]
        == [(ago(NEW_GROUP_AGO), "age <= 25 OR priors_count > 3", ["race", "sex"])]
    ),
    "monitors_alerted_this_week.sql": lambda rows: (
        sorted((r["monitor"], r["alerts"], r["delivered"], r["max_severity_level"]) for r in rows)
        == [("demo", 1, 1, 2), ("other", 1, 0, 3)]
    ),
    "drift_events_last_30_days.sql": lambda rows: (
        [(r["monitor"], r["window_start"], r["status"], r["disadvantaged_group"], r["advantaged_group"],
          r["results_kept"]) for r in rows]
        == [("other", ago(2), "event", None, None, False), ("demo", ago(4), "ongoing", "Female", "Male", False),
            ("demo", ago(5), "open", "Female", "Male", False)]
    ),
    "latest_dp_difference_all_monitors.sql": lambda rows: (
        [(r["monitor"], r["attribute"], float(r["dp_difference"])) for r in rows]
        == [("other", "race", 0.3), ("demo", "sex", round(dp_of(1), 4))]
    ),
    "windows_not_succeeded_last_30_days.sql": lambda rows: (
        [(r["monitor"], r["status"]) for r in rows] == [
            ("other", "data_invalid"), ("stale", "running (stale)"), ("stale", "succeeded (alerts sent; feu unfinished)"),
            ("stale", "succeeded (stopped before alert)"), ("stale", "failed")]
        and rows[0]["error"].startswith("expect_column_values")
        and rows[1]["error"].startswith("no progress for 7 hours")
        and rows[2]["error"].startswith("stale: no progress for 25200 s before step 'feu'")
        and rows[3]["error"].startswith("no progress for 7 hours")
        and rows[4]["error"] == "drift: StoreError: connection lost"  # its own error, not "no progress"
        and [r["results_kept"] for r in rows] == [False, False, False, False, True]
    ),
    "gesd_with_group_stability.sql": lambda rows: (
        len(rows) == 2 * N_DEMO
        and {r["group_value"] for r in rows} == {"Female", "Male"}
        and float(rows[0]["gesd"]) == 0.03
    ),
    "undelivered_alerts.sql": lambda rows: (
        [(r["monitor"], r["state"]) for r in rows] == [("other", "pending")]
    ),
    "feu_recommended_candidates.sql": lambda rows: (
        [(r["monitor"], r["window_start"], r["candidate_index"], r["candidate_number"], r["evaluation"],
          r["dp_target"], r["run_status"]) for r in rows]
        == [("demo", ago(5), 1, 2, 17, {"kind": "attribute", "attribute": "sex"}, "succeeded")]
    ),
    "feu_recommendation_vs_baselines.sql": lambda rows: (
        [(r["baseline"], r["candidate_number"], r["candidate_dp"], r["baseline_dp"], r["baseline_inside_band"],
          r["dp_target"]) for r in rows]
        == [("production", 2, 0.03, 0.12, None, {"kind": "attribute", "attribute": "sex"}),
            ("threshold_optimizer", 2, 0.03, 0.0, False, {"kind": "attribute", "attribute": "sex"})]
    ),
    "feu_recommendation_deployed.sql": lambda rows: (
        [(r["monitor"], r["recommended_in_window"], r["candidate_number"], r["registry_version"],
          r["first_window_scored_with_it"], r["windows_scored_with_it"]) for r in rows]
        == [("demo", ago(5), 2, "v2", ago(3), 3)]
    ),
}


def test_new_group_flag_says_its_threshold_is_fixed(seeded: Store) -> None:
    """``is_new_group`` uses a fixed 0.5 overlap, not a monitor's ``drift.rumie.min_jaccard``; psql's
    ``\\d+`` must tell analysts so, and where the drift check's own decision is."""
    (row,) = q(seeded.engine, "SELECT col_description('rumie_rule_changes'::regclass, attnum) AS c "
                              "FROM pg_attribute WHERE attrelid = 'rumie_rule_changes'::regclass "
                              "AND attname = 'is_new_group'")
    assert row["c"] is not None
    assert "fixed 0.5" in row["c"] and "min_jaccard" in row["c"] and "kind = 'rumie_new_group'" in row["c"]


def test_every_example_query_runs_and_answers(seeded: Store) -> None:
    files = sorted(QUERIES.glob("*.sql"))
    assert {f.name for f in files} == set(EXPECT), "every example query needs an expectation here"
    for f in files:
        rows = _run_file(seeded.engine, f)
        assert EXPECT[f.name](rows), f"{f.name} returned {rows[:5]}"


def test_readonly_role_can_read_but_not_write(seeded: Store) -> None:
    with seeded.engine.connect() as conn:
        conn.execute(sa.text("SET LOCAL ROLE fairmon_analyst"))
        assert conn.execute(sa.text("SELECT count(*) FROM metric_series")).scalar() == 2 * N_DEMO + 4
        assert conn.execute(sa.text("SELECT count(*) FROM latest_metrics")).scalar() == 3
        for stmt in (
            "INSERT INTO monitors (name) VALUES ('x')",
            "UPDATE metrics SET value = 0",
            "DELETE FROM alerts",
            "CREATE TABLE public.scratch (x int)",
            "TRUNCATE runs",
        ):
            with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
                with conn.begin_nested():  # a savepoint, so the next statement runs in a live transaction
                    conn.execute(sa.text(stmt))
        conn.rollback()


def test_grant_readonly_is_idempotent_and_takes_a_role_name(store: Store) -> None:
    from fairmon.store.admin import grant_readonly

    grant_readonly(store.engine)
    grant_readonly(store.engine)
    with store.engine.connect() as conn:
        n = conn.execute(sa.text("SELECT count(*) FROM pg_roles WHERE rolname = 'fairmon_analyst'")).scalar()
        can = conn.execute(
            sa.text(
                "SELECT has_table_privilege('fairmon_analyst', 'metrics', 'SELECT'), "
                "has_table_privilege('fairmon_analyst', 'metrics', 'INSERT')"
            )
        ).one()
    assert n == 1 and tuple(can) == (True, False)


def test_example_queries_name_real_metrics_and_say_when_they_are_relative_to_now() -> None:
    """A metric name in an example (SQL or comment) must be one fairmon stores (a misspelt name returns
    no rows without an error), and an example filtered on now() must say so in its header."""
    from fairmon.fairness.outcome import DISPARITY_METRICS, GROUP_METRICS

    known = set(GROUP_METRICS) | set(DISPARITY_METRICS)
    metric_like = re.compile(r"\b[a-z]+_(?:difference|ratio|rate)\b")
    for f in sorted(QUERIES.glob("*.sql")):
        text = f.read_text()
        for name in set(metric_like.findall(text)):
            assert name in known, f"{f.name} names metric {name!r}, which fairmon does not store"
        header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("--"))
        if "now()" in text:
            assert "Relative to now()" in header, f"{f.name} filters on now() without saying so"
