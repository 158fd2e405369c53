"""A window re-run under an edited spec records a spec_changed event, and ``fairmon run`` says so (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairmon.cli.run import print_outcome
from fairmon.pipeline import WindowOutcome, run_step

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[2]


def test_resolve_window_notes_an_edited_spec(
    tmp_path: Path, fresh_database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fairmon.store import open_store

    monkeypatch.setenv("FAIRMON_DEMO_DIR", str(tmp_path))
    open_store(fresh_database_url, upgrade=True).engine.dispose()
    spec = tmp_path / "demo.yaml"  # the operator's spec file, edited in place below
    spec.write_text((REPO / "monitors" / "demo.yaml").read_text())
    first = run_step("resolve_window", spec, {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    assert "spec_changed" not in first
    assert "spec_changed" not in run_step("resolve_window", spec, {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    spec.write_text(spec.read_text().replace("bootstrap: 200", "bootstrap: 300"))
    again = run_step("resolve_window", spec, {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    assert again["spec_changed"].startswith("spec_changed: demo window 2026-01-03 uses spec ")
    store = open_store(fresh_database_url)
    try:
        assert [c.window_start.date().isoformat() for c in store.spec_changes("demo")] == ["2026-01-03"]
    finally:
        store.engine.dispose()
    # reverted: the rerun under the original spec differs from this window's edited run (an event), and
    # the next rerun under the same spec voids the window's event instead of keeping a stale marker
    spec.write_text(spec.read_text().replace("bootstrap: 300", "bootstrap: 200"))
    assert "spec_changed" in run_step("resolve_window", spec, {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    assert "spec_changed" not in run_step("resolve_window", spec, {"logical_date": "2026-01-03"}, db_url=fresh_database_url)
    store = open_store(fresh_database_url)
    try:
        assert store.spec_changes("demo") == []
    finally:
        store.engine.dispose()
    print_outcome(WindowOutcome("demo", {"start": "2026-01-03", "end": "2026-01-04"}, "succeeded",
                                steps={"resolve_window": again}), as_json=False)
    assert again["spec_changed"] in capsys.readouterr().out
