"""FEU on demand (DESIGN §1 "when discrimination drifts, or on demand") on the demo monitor and Postgres.

The monitor has ``retraining.trigger: manual``, so the scheduled windows skip FEU. :func:`feu_on_demand`
then proposes candidates for a window without drift (posted as a message of its own) and for the drift
window (threaded under its drift alert), through the real slack-sdk client and a local Slack stand-in.
A repeated request posts nothing more; a window whose artifacts are gone is recomputed through the
pipeline steps first; a monitor without retraining is a clear ConfigError.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
for _p in (_TESTS / "pipeline", _TESTS / "alerts"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from pipeline_demo_setup import prepare_demo  # noqa: E402
from slack_server import SlackTestServer  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

CHANNEL = "#fairness-demo"
#: trigger manual; the drift window alerts on its own (honest DScore significantly above 0.05, no persistence)
OVERRIDES = {"retraining.trigger": "manual", "drift.rumie.honest_dscore_threshold": 0.05,
             "drift.persistence": {"m": 1, "n": 1}}


def _candidates(url: str) -> dict[str, list[tuple]]:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as c:
            rows = c.execute(sa.text(
                "SELECT r.window_start, f.candidate_index, f.selected, f.registry_version FROM feu_candidates f "
                "JOIN runs r USING (run_id) ORDER BY 1, 2")).all()
    finally:
        eng.dispose()
    out: dict[str, list[tuple]] = {}
    for r in rows:
        out.setdefault(f"{r[0]:%Y-%m-%d}", []).append(tuple(r[1:]))
    return out


def test_feu_on_demand_stores_and_posts_candidates_once(tmp_path: Path, fresh_database_url: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from fairmon.pipeline import feu_on_demand, run_window
    from fairmon.pipeline.steps import STEP_ORDER
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2, overrides=OVERRIDES)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    quiet, drifting = manifest["windows"][0]["start"], manifest["windows"][2]["start"]
    day = quiet[:10]

    with SlackTestServer(channels=(CHANNEL,)) as slack:
        monkeypatch.setenv("FAIRMON_SLACK_BASE_URL", slack.base_url)
        kw = {"db_url": fresh_database_url, "slack_token": slack.token}
        for start in (quiet, drifting):  # the scheduled path: trigger manual → no FEU
            o = run_window(spec, start, **kw)
            assert o.status == "succeeded", o.error
            assert o.steps["feu"]["status"] == "skipped" and "manual" in o.steps["feu"]["reason"]
        drift_alerts = [m for m in slack.posted(CHANNEL) if not m["text"].startswith("FEU")]
        assert drift_alerts and _candidates(fresh_database_url) == {}

        # a window without drift: candidates stored, posted as a message of their own
        o = feu_on_demand(spec, quiet, **kw)
        assert list(o.steps) == ["feu", "followup"] and o.status == "succeeded"
        assert o.steps["feu"]["status"] == "done" and o.steps["feu"]["requested"] is True
        assert o.steps["followup"]["status"] == "queued" and o.steps["followup"]["threaded"] is False
        feu_posts = [m for m in slack.posted(CHANNEL) if m["text"].startswith("FEU")]
        assert len(feu_posts) == 1 and feu_posts[0]["thread_ts"] is None
        assert "requested on demand" in feu_posts[0]["text"] and f"window {day}" in feu_posts[0]["text"]
        stored = _candidates(fresh_database_url)[day]
        assert len(stored) == o.steps["feu"]["candidates"] >= 1
        # at most one recommended candidate, the only one with a registry version; with none better than
        # production (FEU's default rule, issue 16) the follow-up says so instead of recommending one
        n_selected = [r[1] for r in stored].count(True)
        assert n_selected <= 1 and all((r[2] is not None) == r[1] for r in stored)
        assert n_selected == 1 or "no candidate better than production" in feu_posts[0]["text"], feu_posts[0]["text"]
        assert "Baselines (test split)" in feu_posts[0]["text"] or "ThresholdOptimizer" in feu_posts[0]["text"]
        assert o.steps["followup"]["report"]["status"] == "written"  # the report now shows the candidates
        assert 'alt="FEU Pareto front"' in Path(o.steps["followup"]["report"]["path"]).read_text()

        # the drift window: threaded under its drift alert
        o = feu_on_demand(spec, drifting, **kw)
        assert o.steps["followup"]["threaded"] is True
        threaded = [m for m in slack.posted(CHANNEL) if m["text"].startswith("FEU") and m["thread_ts"]]
        assert len(threaded) == 1 and threaded[0]["thread_ts"] in {m["ts"] for m in drift_alerts}

        # asking again posts nothing more; artifacts gone → the window is recomputed through the steps
        n_posts = len(slack.posted(CHANNEL))
        assert feu_on_demand(spec, quiet, **kw).steps["followup"]["status"] == "already_queued"
        shutil.rmtree(_artifact_dir(spec, quiet))
        o = feu_on_demand(spec, quiet, **kw)
        assert list(o.steps) == list(STEP_ORDER) and o.status == "succeeded", o.error
        assert o.steps["feu"]["status"] == "done" and o.steps["followup"]["status"] == "already_queued"
        assert len(slack.posted(CHANNEL)) == n_posts
        # re-running the drift window: its alert step lists its findings' alerts, not the earlier follow-up
        again = run_window(spec, drifting, **kw)
        assert again.steps["alert"]["rendered"]
        assert not any(m["text"].startswith("FEU") for m in again.steps["alert"]["rendered"])
        assert len(slack.posted(CHANNEL)) == n_posts
    assert [r[1] for r in _candidates(fresh_database_url)[day]].count(True) == n_selected  # unchanged by re-runs


def _artifact_dir(spec: Path, start: str) -> str:
    """The window's artifact folder (every attempt's folder is inside it)."""
    from fairmon.config import load_spec
    from fairmon.pipeline import window_for
    from fairmon.pipeline.artifacts import ArtifactStore
    from fairmon.pipeline.context import RunContext

    ctx = RunContext(load_spec(spec), window_for(load_spec(spec), start))
    return ArtifactStore(ctx.artifact_location, ctx.monitor, ctx.window.key).base_uri


def test_cli_feu_json_without_notify_and_with_retraining_disabled(
    tmp_path: Path, fresh_database_url: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """``fairmon feu --no-notify --json`` on a window never run: computed, candidates stored, nothing posted."""
    import json

    from fairmon.cli import main
    from fairmon.cli.demo import write_demo_spec
    from fairmon.pipeline.runner import ERR_FEU_DISABLED
    from fairmon.store import open_store

    spec, manifest = prepare_demo(tmp_path / "demo", windows=3, drift_window=2, overrides=OVERRIDES)
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    day = manifest["windows"][0]["start"][:10]
    code = main(["feu", "--monitor", str(spec), "--window", day, "--db", fresh_database_url, "--no-notify", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "succeeded", out.get("error")
    assert out["steps"]["feu"]["status"] == "done" and out["steps"]["followup"]["status"] == "skipped"
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        n_alerts = c.execute(sa.text("SELECT count(*) FROM alerts")).scalar_one()
        n_cand = c.execute(sa.text("SELECT count(*) FROM feu_candidates")).scalar_one()
        # the baselines the candidates were compared with, beside them (an analyst's SQL sees both)
        base = dict(c.execute(sa.text("SELECT baseline, metrics -> 'test' ->> 'dp' FROM feu_baselines")).all())
    eng.dispose()
    assert n_alerts == 0 and n_cand == out["steps"]["feu"]["candidates"] > 0
    assert {"production", "constant", "threshold_optimizer", "exponentiated_gradient"} <= set(base)
    assert float(base["constant"]) == 0.0

    (tmp_path / "off").mkdir()
    off = write_demo_spec(tmp_path / "off", {"retraining.enabled": False})
    assert main(["feu", "--monitor", str(off), "--window", day, "--db", fresh_database_url]) == 2
    err = capsys.readouterr().err
    assert ERR_FEU_DISABLED.format(monitor="demo", source=off.resolve()) in err, err
