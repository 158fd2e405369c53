"""Issue 15 items 2 and 5, and the chaos test: overlapping attempts of one window, a connection killed
mid-transaction, a second spec file claiming a monitor's name.

Each Airflow task is its own process, so the attempts here run their steps through
:func:`fairmon.pipeline.run_step` with the small dict ``resolve_window`` returned (what XCom carries),
each step in a context of its own, against a fresh Postgres database and the local fake Slack Web API.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS / "pipeline", _TESTS / "alerts"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pipeline_demo_setup import SMALL, prepare_demo  # noqa: E402
from slack_server import SlackTestServer  # noqa: E402

from fairmon.errors import AttemptSupersededError, ConfigError  # noqa: E402
from fairmon.pipeline import run_step, run_window  # noqa: E402
from fairmon.pipeline.artifacts import MissingArtifactError  # noqa: E402
from fairmon.pipeline.table import STEP_ORDER  # noqa: E402
from fairmon.store import open_store  # noqa: E402

pytestmark = pytest.mark.postgres

#: cheap settings; the drifted window has ONE fairness alert (RUMIE's honest DScore above its threshold,
#: alerted on its first window)
CHEAP: dict[str, Any] = {**SMALL, "rumie.iterations": 60, "retraining.enabled": False,
                         "drift.rumie.honest_dscore_threshold": 0.0001, "drift.persistence": {"m": 1, "n": 1}}

#: what "the same end state" compares: every results table, without ids of attempts, times and paths
SNAPSHOT = {
    "runs": "SELECT window_start, window_end, status, model_version, spec_fingerprint, n_rows, error FROM runs",
    "metrics": "SELECT metric, attribute, group_key, value, ci_low, ci_high, n, n_nan FROM metrics",
    "metric_latest": "SELECT metric, attribute, group_key, value, ci_low, ci_high, n FROM metric_latest",
    "evidence": "SELECT method, dscore, honest_dscore, p_value, key_attributes, rules_text, group_size FROM evidence",
    "explanation_metrics": "SELECT family, metric, explainer, group_key, value, p_value, n FROM explanation_metrics",
    "findings": "SELECT kind, metric, attribute, group_key, severity, status, value, fingerprint FROM findings",
    "alerts": "SELECT fingerprint, kind, state, channel FROM alerts",
    "feu_candidates": "SELECT candidate_index FROM feu_candidates",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("overlap") / "demo"
    spec, manifest = prepare_demo(out, windows=3, rows=600, drift_window=2, overrides=CHEAP)
    return spec, manifest["windows"][2]["start"]  # the drifted window


def _snapshot(db_url: str) -> dict[str, list[tuple[Any, ...]]]:
    eng = sa.create_engine(db_url)
    try:
        with eng.connect() as c:
            return {t: sorted((tuple(r) for r in c.execute(sa.text(q))), key=repr) for t, q in SNAPSHOT.items()}
    finally:
        eng.dispose()


def _posts(slack: SlackTestServer) -> list[str]:
    """Fingerprints of the messages the fake Slack stored (one entry per stored message)."""
    return [(m.get("metadata") or {}).get("event_payload", {}).get("fingerprint")
            for msgs in slack.messages.values() for m in msgs]


class _Attempt:
    """One attempt of the window, its steps run one task at a time (as Airflow does)."""

    def __init__(self, spec: Path, day: str, db_url: str, token: str) -> None:
        self.spec, self.db_url, self.token = str(spec), db_url, token
        self.window = run_step("resolve_window", self.spec, {"logical_date": day}, db_url=db_url, slack_token=token)
        self.next = 1

    def step(self) -> dict[str, Any]:
        name = STEP_ORDER[self.next]
        out = run_step(name, self.spec, self.window, db_url=self.db_url, slack_token=self.token)
        self.next += 1
        return out

    @property
    def done(self) -> bool:
        return self.next >= len(STEP_ORDER)


def _clean_run(spec: Path, day: str, db_url: str, channel_env: pytest.MonkeyPatch) -> tuple[dict, list[str]]:
    open_store(db_url, upgrade=True).engine.dispose()
    with SlackTestServer(channels=("#fairness-demo", "#fairness")) as slack:
        channel_env.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        o = run_window(spec, day, db_url=db_url, slack_token=slack.token)
        assert o.status == "succeeded", o.error
        return _snapshot(db_url), _posts(slack)


@pytest.fixture(scope="module")
def reference(demo: tuple[Path, str], pg_admin_url: str) -> tuple[dict, list[str]]:
    """The end state of ONE clean run of the window (its own database)."""
    spec, day = demo
    eng = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    name = "fairmon_test_overlap_reference"
    with eng.connect() as c:
        c.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
        c.execute(sa.text(f"CREATE DATABASE {name}"))
    url = sa.make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
    mp = pytest.MonkeyPatch()
    try:
        snap, posts = _clean_run(spec, day, url, mp)
    finally:
        mp.undo()
        with eng.connect() as c:
            c.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        eng.dispose()
    assert len(posts) == len(set(posts)) == len(snap["alerts"]) == 1  # one alert, one message
    assert snap["metrics"] and snap["evidence"]
    return snap, posts


@pytest.mark.slow
def test_a_superseded_attempt_stops_and_a_missing_artifact_keeps_the_rows(
    demo: tuple[Path, str], fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2: attempt B taking the window over never makes attempt A delete B's (or the window's)
    rows; a step failing on a missing artifact keeps the persisted rows."""
    spec, day = demo
    snap, _ = _clean_run(spec, day, fresh_database_url, monkeypatch)
    n_metrics = len(snap["metrics"])
    with SlackTestServer(channels=("#fairness-demo", "#fairness")) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        a = _Attempt(spec, day, fresh_database_url, slack.token)
        for _ in range(3):
            a.step()  # through validate
        b = _Attempt(spec, day, fresh_database_url, slack.token)  # takes the window over
        assert a.window["attempt_id"] != b.window["attempt_id"]
        with pytest.raises(AttemptSupersededError):
            a.step()  # A's predict: refused, nothing written
        assert len(_snapshot(fresh_database_url)["metrics"]) == n_metrics
        b.step()
        b.step()  # B pulled its data
        # B's artifacts vanish (a wiped volume): its validate step fails, the stored rows stay
        art = Path(spec).parent / "artifacts"
        shutil.rmtree(next(art.rglob(b.window["attempt_id"])))
        with pytest.raises(MissingArtifactError):
            b.step()
        after = _snapshot(fresh_database_url)
        assert len(after["metrics"]) == n_metrics and after["evidence"] == snap["evidence"]
        assert after["runs"][0][2] == "failed"


@pytest.mark.slow
def test_chaos_two_attempts_interleaved_at_every_step_boundary(
    demo: tuple[Path, str], reference: tuple[dict, list[str]], pg_admin_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Attempt B starts after attempt A ran k steps (every k), then the two alternate step by step; and
    once, B's persist connection is killed mid-transaction (pg_terminate_backend) and the task retried.
    Every time: the end state of one clean run, each alert posted exactly once."""
    spec, day = demo
    ref, ref_posts = reference
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    killed: list[int] = []

    def kill_mid_persist(conn, cursor, statement, params, context, executemany):  # type: ignore[no-untyped-def]
        if not killed and statement.lstrip().upper().startswith("INSERT INTO METRICS"):
            pid = conn.connection.dbapi_connection.get_backend_pid()
            with admin.connect() as c:
                c.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            killed.append(pid)

    try:
        for k in range(1, len(STEP_ORDER) + 1):
            name = f"fairmon_test_chaos_{k}"
            with admin.connect() as c:
                c.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                c.execute(sa.text(f"CREATE DATABASE {name}"))
            url = sa.make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
            open_store(url, upgrade=True).engine.dispose()
            with SlackTestServer(channels=("#fairness-demo", "#fairness")) as slack:
                monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
                a = _Attempt(spec, day, url, slack.token)
                while a.next < k and not a.done:
                    a.step()
                b = _Attempt(spec, day, url, slack.token)
                kill = k == 5  # once: B's persist loses its connection mid-transaction
                if kill:
                    sa.event.listen(sa.engine.Engine, "before_cursor_execute", kill_mid_persist)
                try:
                    while not b.done:
                        if not a.done:
                            with pytest.raises(AttemptSupersededError):
                                a.step()
                        try:
                            b.step()
                        except Exception:
                            if not (kill and killed and STEP_ORDER[b.next] == "persist"):
                                raise
                            b.step()  # the task's retry
                finally:
                    if kill:
                        sa.event.remove(sa.engine.Engine, "before_cursor_execute", kill_mid_persist)
                posts = _posts(slack)
            got = _snapshot(url)
            with admin.connect() as c:
                c.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            assert got == ref, f"end state differs with B starting after step {k}"
            assert sorted(posts) == sorted(ref_posts), f"Slack messages differ with B starting after step {k}"
        assert killed, "the connection kill did not happen"
    finally:
        admin.dispose()


@pytest.mark.slow
def test_a_second_spec_file_with_the_same_name_is_refused(
    demo: tuple[Path, str], tmp_path: Path, fresh_database_url: str
) -> None:
    """Item 5: the monitor name belongs to the first spec file; another file is refused (both named)
    and nothing of the monitor's window changes, unless the operator takes the monitor over."""
    spec, day = demo
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    run_step("resolve_window", str(spec), {"logical_date": day}, db_url=fresh_database_url, notify=False)
    other = tmp_path / "copy" / "demo.yaml"
    other.parent.mkdir()
    shutil.copy(spec, other)  # the demo spec's paths are absolute: the copy reads the same data
    with pytest.raises(ConfigError) as ei:
        run_step("resolve_window", str(other), {"logical_date": day}, db_url=fresh_database_url, notify=False)
    assert str(Path(spec).resolve()) in str(ei.value) and str(other.resolve()) in str(ei.value)
    assert "--take-over-monitor" in str(ei.value)
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        assert c.execute(sa.text("SELECT status FROM runs")).scalar_one() == "running"  # untouched
        assert c.execute(sa.text("SELECT spec_path FROM monitors")).scalar_one() == str(Path(spec).resolve())
    out = run_step("resolve_window", str(other), {"logical_date": day}, db_url=fresh_database_url, notify=False,
                   take_over_monitor=True)
    assert out["attempt_id"]
    with eng.connect() as c:
        assert c.execute(sa.text("SELECT spec_path FROM monitors")).scalar_one() == str(other.resolve())
    eng.dispose()


def test_the_cli_says_take_over_explicitly() -> None:
    from fairmon.cli import build_parser

    args = build_parser().parse_args(["run", "--monitor", "m.yaml", "--logical-date", "2026-01-03"])
    assert args.take_over_monitor is False
    args = build_parser().parse_args(["run", "--monitor", "m.yaml", "--logical-date", "2026-01-03",
                                      "--take-over-monitor"])
    assert args.take_over_monitor is True


@pytest.mark.slow
def test_a_process_killed_after_persist_is_found_stale_and_a_rerun_sends_the_alert(
    demo: tuple[Path, str], fresh_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies after persist (kill -9 of ``fairmon run`` during drift): the window held its
    result status and looked complete, its alert never sent. Persist records the step still to run, each
    later step advances it, and the monitor's next run fails the window as stale naming that step; the
    re-run its error asks for completes it and sends the alert once."""
    spec, day = demo
    url = fresh_database_url
    open_store(url, upgrade=True).engine.dispose()
    eng = sa.create_engine(url)

    def run_row() -> Any:
        with eng.connect() as c:
            return c.execute(sa.text("SELECT status, error, details FROM runs WHERE window_start = :d"),
                             {"d": day}).one()

    try:
        with SlackTestServer(channels=("#fairness-demo", "#fairness", "#oncall")) as slack:
            monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
            monkeypatch.setenv("FAIRMON_PIPELINE_SLACK_CHANNEL", "#oncall")
            a = _Attempt(spec, day, url, slack.token)
            while STEP_ORDER[a.next - 1] != "persist":
                a.step()
            row = run_row()  # the process dies here
            assert row.status == "succeeded" and row.details["next_step"] == "drift" and _posts(slack) == []
            with eng.begin() as c:  # ... and stays dead for longer than any step may run
                c.execute(sa.text("UPDATE runs SET updated_at = now() - interval '2 days'"))
            # the monitor's next run (another window's first step) finds it
            run_step("resolve_window", str(spec), {"logical_date": "2026-01-01"}, db_url=url, slack_token=slack.token)
            row = run_row()
            assert row.status == "failed" and row.error.startswith("stale: results stored, then no progress for ")
            assert "before step 'drift' finished" in row.error and row.details["failed_step"] == "drift"
            assert row.details["results_kept"] is True and row.details["persisted_status"] == "succeeded"
            assert _snapshot(url)["metrics"]  # the computed window is kept
            (page,) = slack.posted("#oncall")  # nobody else would say it: a killed process leaves no failure
            assert page["text"].startswith(":rotating_light: fairmon pipeline error in fairmon_demo.drift (run window ")
            assert "stale: results stored, then no progress for " in page["text"]

            b = _Attempt(spec, day, url, slack.token)  # the re-run
            seen = []
            while not b.done:
                name = STEP_ORDER[b.next]
                b.step()
                if STEP_ORDER.index(name) >= STEP_ORDER.index("persist"):
                    d = run_row().details
                    seen.append(d.get("next_step") or (f"later: {d['later_step']}" if "later_step" in d else None))
            # persist wrote 'drift', each later step the one after it (after the alert as a later step: a
            # death there leaves the window as it is), the last one removed it
            assert seen == ["drift", "diagnose", "report", "alert", "later: feu", "later: followup", None]
            assert STEP_ORDER[STEP_ORDER.index("drift"):] == ("drift", "diagnose", "report", "alert", "feu", "followup")
            row = run_row()
            assert row.status == "succeeded" and row.error is None
            assert len([m for m in _posts(slack) if m]) == 1  # the alert the dead process never sent, once
    finally:
        eng.dispose()
