"""Run reports rendered from seeded store data: sections, embedded images, escaping, paths, rebuilds."""

from __future__ import annotations

import base64
import io
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import report_seed

pytestmark = pytest.mark.postgres

IMG_RE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"')


def _html(location: Path, i: int) -> str:
    from fairmon.alerts.render import report_path

    return (location / report_path(report_seed.MONITOR, report_seed.day(i))).read_text()


def _images(html: str) -> dict[str, Any]:
    from PIL import Image

    out = {}
    for b64, alt in IMG_RE.findall(html):
        im = Image.open(io.BytesIO(base64.b64decode(b64)))
        im.load()  # decodes every pixel: a truncated PNG fails here
        out[alt] = im
    return out


def test_every_window_written_at_the_alert_path(reports: tuple[Path, list[Any]]) -> None:
    from fairmon.alerts.render import report_path

    location, written = reports
    assert [w.window_start for w in written] == [report_seed.day(i) for i in range(report_seed.N_WINDOWS)]
    for w in written:
        rel = report_path(report_seed.MONITOR, w.window_start)
        assert w.path == f"{location}/{rel}"
        assert Path(w.path).stat().st_size == w.bytes
    statuses = [w.status for w in written]
    assert statuses == ["ok", "ok", "ok", "drift", "drift"]


def test_drift_window_has_every_section_and_images_decode(reports: tuple[Path, list[Any]]) -> None:
    from fairmon.report import SECTIONS

    location, _ = reports
    html = _html(location, report_seed.DRIFT_WINDOW)
    for sid, _title in SECTIONS:
        assert f'<section id="{sid}">' in html, sid
        assert f'href="#{sid}"' in html
    images = _images(html)
    assert set(images) == {
        "per-group rates with confidence intervals",
        "RUMIE decision tree with leaf sizes and P(fav)",
        "per-group explanation stability",
        "key metrics across windows",
        "FEU Pareto front",
    }
    for alt, im in images.items():
        assert im.format == "PNG" and im.size[0] > 200 and im.size[1] > 100, alt
    assert html.count("<img ") == len(images)  # every image is an embedded PNG
    # the numbers a reader needs are in the text too
    for text in (
        "age &lt;= 30",  # the rules
        "age &gt; 30 AND region = north",
        "0.22",  # honest DScore
        "1.0e-06",  # its p-value
        "kernelshap+lime",
        "gap sex",  # OpenXAI disparity column
        "rumie_honest_dscore: discriminated group above threshold",
        "RUMIE: discriminated group above threshold",  # the window's alert
        "Distribution of per-instance stabilities",
        "lr 0.001",  # FEU hyperparameters of candidate #2
        "dp_ratio · sex (Female 0.35 vs Male 0.5)",  # who a disparity finding compares
        "[0.65, 0.75] (90%)",  # the finding's interval at its stored level
        "fairmon report --monitor credit --window 2026-01-04 --output ",  # where it was written
    ):
        assert text in html, text
    assert 'class="selected"' in html  # the recommended FEU candidate is marked
    # numbered as the Slack follow-up numbers them (1-based), beside the stored baselines
    assert "<td>3 ★</td>" in html and "compared with (same split and seed)" in html
    for text in ("approve everyone", "fairlearn ExponentiatedGradient (DP)",
                 "fairlearn ThresholdOptimizer (DP) <span class=\"muted\">(outside FEU&#39;s positive-rate band on validation)"):
        assert text in html, text


def test_window_without_feu_or_instances_says_so(reports: tuple[Path, list[Any]]) -> None:
    location, _ = reports
    html = _html(location, 0)
    assert "No retraining candidates for this window" in html
    assert "per-instance values not stored" in html  # GESD falls back to group bars
    assert "No drift finding at this window" in html
    assert len(_images(html)) == 4
    assert "The latest earlier candidates" not in html  # none before it


def test_a_window_after_feu_points_at_the_latest_candidates(reports: tuple[Path, list[Any]]) -> None:
    """Session 24: windows after the drift opened said "No retraining candidates for this window (FEU runs
    when discrimination drifts)" under three active findings, which reads as "no drift"."""
    location, _ = reports
    day = f"{report_seed.day(report_seed.DRIFT_WINDOW):%Y-%m-%d}"
    text = " ".join(_html(location, report_seed.DRIFT_WINDOW + 1).split())
    assert "FEU runs at the window where a drift opens (with <code>retraining.trigger: on_drift</code>" in text
    assert (f'The latest earlier candidates (among the {report_seed.DRIFT_WINDOW + 2} windows of the trends below) '
            f'are in the report of <a href="{day}.html">{day}</a>.') in text


def test_self_contained_and_escaped(reports: tuple[Path, list[Any]]) -> None:
    location, _ = reports
    html = _html(location, report_seed.DRIFT_WINDOW)
    assert "<script" not in html.lower()  # the finding message's <script> is escaped, and no JS at all
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert not re.search(r'(src|href)="(?!data:image/png;base64,|#)', html)
    assert "url(" not in html and "@import" not in html
    assert "default-src 'none'; img-src data:" in html  # CSP: the browser loads nothing else


def test_index_lists_every_window(reports: tuple[Path, list[Any]]) -> None:
    location, _ = reports
    index = (location / report_seed.MONITOR / "index.html").read_text()
    for i in range(report_seed.N_WINDOWS):
        assert f'href="{report_seed.day(i):%Y-%m-%d}.html"' in index
    assert index.index("2026-01-05") < index.index("2026-01-01")  # newest first


def test_rebuild_is_identical(store: Any, reports: tuple[Path, list[Any]], tmp_path: Path) -> None:
    from fairmon.report import write_window_report

    location, _ = reports
    before = _html(location, report_seed.DRIFT_WINDOW)
    again = write_window_report(store, report_seed.MONITOR, "2026-01-04", location=str(location))  # its footer's command
    assert Path(again.path).read_text() == before


def test_trend_uses_only_windows_up_to_this_one(store: Any) -> None:
    from fairmon.report import load_report_data

    data = load_report_data(store, report_seed.MONITOR, "2026-01-02")
    assert [p.window_start for p in data.trend] == [report_seed.day(0), report_seed.day(1)]
    assert data.trend[-1].dp_difference["sex"][0] == pytest.approx(0.07)
    latest = load_report_data(store, report_seed.MONITOR)
    assert latest.run.window_start == report_seed.day(4)
    assert [p.drift for p in latest.trend] == [False, False, False, True, True]
    assert [p.model_version for p in latest.trend] == ["v1", "v1", "v1", "v2", "v2"]


def test_unknown_window_and_monitor_are_clear_errors(store: Any) -> None:
    from fairmon.errors import ConfigError
    from fairmon.report import load_report_data

    with pytest.raises(ConfigError, match=r"no run for the window starting 2027-01-01.*2026-01-01, 2026-01-02"):
        load_report_data(store, report_seed.MONITOR, "2027-01-01")
    with pytest.raises(ConfigError, match="'nobody' has no runs"):
        load_report_data(store, "nobody")


def test_failed_window_renders_its_error(store: Any, tmp_path: Path) -> None:
    from fairmon.report import write_window_report

    start = datetime(2026, 1, 6, tzinfo=UTC)
    store.mark_run(report_seed.MONITOR, start, datetime(2026, 1, 7, tzinfo=UTC), "failed",
                   error="rumie: MethodError: boom <b>")
    try:
        w = write_window_report(store, report_seed.MONITOR, start, location=str(tmp_path))
        html = Path(w.path).read_text()
        assert w.status == "failed"
        assert "Run failed:</b> rumie: MethodError: boom &lt;b&gt;" in html
        assert "Not available for this window (RUMIE disabled or the run has no results)" in html
        assert len(_images(html)) == 1  # only the trend (history of the earlier windows)
        assert "stored before this failure" not in html  # it holds no rows
    finally:
        with store.engine.begin() as conn:
            import sqlalchemy as sa

            conn.execute(sa.text("DELETE FROM runs WHERE window_start = :ws"), {"ws": start})


def test_tree_layout_rejects_non_tree_json() -> None:
    from fairmon.report.charts import tree_chart, tree_layout

    assert tree_layout({"feature": "age", "threshold": 25.0}) is None
    assert tree_chart({"root": {"split": {"column": "age"}, "left": {"leaf": 1}}}) is None
    placed = tree_layout(report_seed.tree_json())
    assert placed is not None
    leaves = [p for p in placed if "leaf" in p.node]
    assert [p.x for p in leaves] == [0.0, 1.0, 2.0, 3.0]
    assert [p.edge for p in placed[1:]] == ["≤ 30", "> 30", "≠ north", "≤ 41,250.5", "> 41,250.5", "= north"]


def test_report_location_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from fairmon.config import MonitorSpec
    from fairmon.report import report_location

    spec = MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"},
        "execution": {"artifact_location": str(tmp_path / "out" / "artifacts")},
    })
    monkeypatch.delenv("FAIRMON_REPORT_LOCATION", raising=False)
    monkeypatch.delenv("FAIRMON_ARTIFACT_LOCATION", raising=False)
    assert report_location(spec) == str(tmp_path / "out" / "reports")
    monkeypatch.setenv("FAIRMON_REPORT_LOCATION", "s3://b/reports")
    assert report_location(spec) == "s3://b/reports"


def test_pipeline_report_step_writes_the_window(seeded_db: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's report hook (fairmon.pipeline.steps.report) writes where the alert links."""
    from fairmon.alerts.render import report_path
    from fairmon.config import MonitorSpec
    from fairmon.pipeline.context import RunContext
    from fairmon.pipeline.steps import report
    from fairmon.window import Window

    monkeypatch.delenv("FAIRMON_REPORT_LOCATION", raising=False)
    monkeypatch.delenv("FAIRMON_ARTIFACT_LOCATION", raising=False)
    spec = MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": report_seed.MONITOR}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"},
        "execution": {"artifact_location": str(tmp_path / "artifacts")},
    })
    start = report_seed.day(report_seed.DRIFT_WINDOW)
    ctx = RunContext(spec, Window(report_seed.MONITOR, start, report_seed.day(report_seed.DRIFT_WINDOW + 1)),
                     db_url=seeded_db)
    try:
        out = report(ctx)
    finally:
        ctx.close()
    expected = tmp_path / "reports" / report_path(report_seed.MONITOR, start)
    assert out["status"] == "written" and out["path"] == str(expected)
    assert 'id="rumie"' in expected.read_text()
    assert (tmp_path / "reports" / report_seed.MONITOR / "index.html").is_file()


def test_a_broken_chart_is_named_not_fatal(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairmon.report import charts, load_report_data, render_html

    def boom(*_: Any, **__: Any) -> bytes:
        raise ValueError("bad tree")

    boom.__name__ = "tree_chart"
    monkeypatch.setattr(charts, "tree_chart", boom)
    html = render_html(load_report_data(store, report_seed.MONITOR, "2026-01-04"))
    assert "Some pictures could not be drawn" in html and "tree_chart: ValueError: bad tree" in html
    assert "No decision-tree picture for this window" in html  # the section still renders
    assert len(_images(html)) == 4


@pytest.mark.parametrize(
    "findings,expected",
    [
        ([], "ok"),
        ([("info", "open")], "watch"),
        ([("warning", "pending")], "watch"),
        ([("info", "open"), ("warning", "ongoing")], "drift"),
        ([("critical", "resolved")], "ok"),
    ],
)
def test_report_status(findings: list[tuple[str, str]], expected: str) -> None:
    from fairmon.report.data import report_status
    from fairmon.store import FindingRecord

    recs = [FindingRecord("rumie_dscore", "m", sev, status=st) for sev, st in findings]  # type: ignore[arg-type]
    assert report_status("succeeded", recs) == expected
    assert report_status("data_invalid", recs) == "data_invalid"


def test_a_failed_rerun_says_its_results_were_stored_before(store: Any, tmp_path: Path) -> None:
    """A re-run that failed keeps the window's rows (store.mark_run): the report shows them and says whose."""
    from fairmon.report import write_window_report

    start, end = report_seed.day(2), report_seed.day(3)
    run = store.get_run(report_seed.MONITOR, start, end)
    store.mark_run(report_seed.MONITOR, start, end, "failed", error="pull_data: DatasetError: timed out")
    try:
        html = Path(write_window_report(store, report_seed.MONITOR, start, location=str(tmp_path)).path).read_text()
        assert "Run failed:</b> pull_data: DatasetError: timed out The results shown were stored before this " \
               "failure (the window was then succeeded); they stay until an attempt succeeds." in html
    finally:
        store.mark_run(report_seed.MONITOR, start, end, run.status, error=None, details=run.details)


def test_a_window_where_rumie_found_no_group_shows_no_dscore_cards() -> None:
    """Session 23 (a new user): a window where no group fell within RUMIE's size bounds showed "p-value 1.000 ·
    group 0.0%", which reads as "no evidence", beside the reason. Now only the reason and that nothing was
    measured."""
    from fairmon.fairness._rumie_inputs import REASON_NO_GROUP
    from fairmon.report.data import ReportData
    from fairmon.report.render import render_html
    from fairmon.store.records import EvidenceRecord, RunRecord

    reason = REASON_NO_GROUP.format(alpha=0.45, beta=0.55, n=368)
    run = RunRecord("credit", report_seed.day(0), report_seed.day(1), status="succeeded", n_rows=368)
    ev = EvidenceRecord("ie-dt", None, p_value=1.0, group_size=0, group_fraction=0.0, n=368,
                        details={"status": "no_group_within_bounds", "reason": reason})
    html = render_html(ReportData(run, evidence=(ev,)))
    section = html[html.index('<section id="rumie">'):]
    section = section[:section.index("</section>")]
    assert "no_group_within_bounds" in section and "rumie.alpha and rumie.beta" in section
    assert "No group was measured in this window" in section
    assert "p-value 1.000" not in section and "0.0%" not in section and "DScore held-out" not in section


def _section(html: str, name: str) -> str:
    s = html[html.index(f'<section id="{name}">'):]
    return s[:s.index("</section>")]


def test_the_tree_says_whose_group_it_shades_when_the_rule_search_chose_another() -> None:
    """Session 24 (an ML lead auditing the report): the cards and rules showed the rule search's group
    (DScore 0.195, 2 rules) above IE-DT's tree, whose shaded "discriminated" leaves were IE-DT's own group
    (DScore 0.143, 41 rules) and held rows the rules leave out. The page now says whose each part is."""
    from fairmon.report.data import ReportData
    from fairmon.report.render import render_html
    from fairmon.store.records import EvidenceRecord, RunRecord

    run = RunRecord("credit", report_seed.day(0), report_seed.day(1), status="succeeded", n_rows=2000)
    same = {"status": "ok", "search": {"rule_search": {"ie_dt_dscore": 0.34, "ie_dt_n_rules": 2}}}
    other = {"status": "ok", "search": {"rule_search": {"ie_dt_dscore": 0.1433, "ie_dt_n_rules": 41}}}
    for details, differs in ((same, False), (other, True)):
        ev = EvidenceRecord("ie-dt", 0.34, honest_dscore=0.3, p_value=1e-6, rules=["age <= 30", "region = north"],
                            rules_text="age <= 30 OR region = north", tree=report_seed.tree_json(), group_size=970,
                            group_fraction=0.485, p_fav_in=0.3, p_fav_out=0.64, n=2000, details=details)
        section = _section(render_html(ReportData(run, evidence=(ev,))), "rumie")
        assert ("tree-note" in section) is differs
        assert ("ie-dt + rule search" in section) is differs
        if differs:
            assert "The shaded leaves are IE-DT&#39;s own group: " in section
            assert "in-sample DScore 0.143, 41 rules" in section
            assert "the rule search&#39;s group instead (in-sample DScore 0.34, 2 rules)" in section


def test_why_disfavored_sentences_only_for_gaps_whose_interval_excludes_zero() -> None:
    """Session 24: the report wrote a sentence for the three largest gaps whatever their interval ("income
    lowers P(favorable) by 0.02 more inside the group" with [-0.05, 0.012]) while the alert named only
    gaps excluding 0; and it called the simultaneous max-t intervals "percentile bootstrap"."""
    from fairmon.report.data import ReportData
    from fairmon.report.render import render_html
    from fairmon.store import AttributionGapRecord
    from fairmon.store.records import RunRecord

    feats = (
        {"feature": "income", "inside": -0.03, "outside": -0.01, "difference": -0.02, "ci_low": -0.05, "ci_high": 0.012},
        {"feature": "region", "inside": -0.08, "outside": 0.0, "difference": -0.08, "ci_low": -0.10, "ci_high": -0.06},
        {"feature": "age", "inside": 0.01, "outside": 0.005, "difference": 0.005, "ci_low": 0.001, "ci_high": 0.009},
    )
    gap = AttributionGapRecord("rumie", "ok", group_label="region = north", explainer="kernelshap", features=feats,
                               n_bootstrap=200, confidence=0.95)
    run = RunRecord("credit", report_seed.day(0), report_seed.day(1), status="succeeded", n_rows=2000)
    section = _section(render_html(ReportData(run, attribution_gaps=(gap,))), "diagnosis")
    assert "region lowers P(favorable) by 0.08 more inside the group" in section
    assert "income lowers" not in section  # its interval holds 0
    assert "age raises" not in section  # below the smallest gap worth a sentence
    assert "percentile" not in section and "holding for all 3 features at once (max-t)" in section


def test_feu_rows_name_a_repeated_recipe_and_the_registered_ensemble() -> None:
    """Session 24: the report's FEU table showed one recipe as three Pareto points and the recommended row's
    fold-ensemble figures beside single networks; its caption called the out-of-fold choice "validation"."""
    from fairmon.report.data import ReportData
    from fairmon.report.render import render_html
    from fairmon.store.records import FEUCandidateRecord, RunRecord

    hp = {"epochs": 10, "lr": 0.00018736483, "threshold": 0.65668382}
    test = {"auc": 0.71, "dp": 0.004, "balanced_accuracy": 0.64, "selection_rate": 0.76}
    ensemble = {"model": "fold_ensemble", "members": 5, "searched": {"test": {"dp": 0.0232, "balanced_accuracy": 0.6366}}}
    feu = (FEUCandidateRecord(0, hp, {"test": test}, pareto=True),
           FEUCandidateRecord(1, {**hp, "lr": 0.000192}, {"test": test}, pareto=True),
           FEUCandidateRecord(2, dict(hp), {"test": test, "deployment": ensemble}, pareto=True, selected=True,
                              registry_version="v3"))
    run = RunRecord("credit", report_seed.day(0), report_seed.day(1), status="succeeded", n_rows=2000)
    section = _section(render_html(ReportData(run, feu=feu)), "feu")
    assert section.count("the recipe of #1 again (another training seed)") == 1
    assert "as registered: the fold ensemble of its 5 fold models; the searched network itself: DP 0.023" in section
    text = " ".join(section.split())
    assert "judged on out-of-fold rows" in text and "lowest validation DP" not in text
