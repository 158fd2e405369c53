"""``fairmon report``: rebuild reports from the store, readable by default, JSON with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import report_seed

from fairmon.cli import main

pytestmark = pytest.mark.postgres


def test_report_cli_one_window(seeded_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["report", "--monitor", report_seed.MONITOR, "--window", "2026-01-04", "--db", seeded_db,
               "--output", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    path = tmp_path / report_seed.MONITOR / "2026-01-04.html"
    assert f"2026-01-04  drift        {path}" in out
    assert f"1 report(s); index {tmp_path / report_seed.MONITOR / 'index.html'}" in out
    assert path.is_file()


def test_report_cli_json_and_errors(seeded_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["report", "--monitor", report_seed.MONITOR, "--window", "2026-01-01", "--window", "2026-01-05",
               "--db", seeded_db, "--output", str(tmp_path), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in doc["reports"]] == ["ok", "drift"]
    assert all(Path(r["path"]).is_file() and r["bytes"] > 10_000 for r in doc["reports"])
    rc = main(["report", "--monitor", report_seed.MONITOR, "--window", "2030-01-01", "--db", seeded_db,
               "--output", str(tmp_path)])
    assert rc == 2
    assert "has no run for the window starting 2030-01-01" in capsys.readouterr().err


def test_the_rebuild_line_names_the_spec_it_was_built_with(seeded_db: str, tmp_path: Path) -> None:
    """Session 24: the footer's command dropped --spec, so run as printed it rebuilt the page without the
    spec's allowed ranges; the store is named beside it (a URL may hold a password)."""
    spec = tmp_path / "credit.yaml"
    spec.write_text(
        "spec_version: 1\nidentity: {name: " + report_seed.MONITOR + "}\nmodel: {registry_uri: r}\n"
        "data: {files: {pattern: 'd/{start:%Y-%m-%d}.csv'}}\ncolumns: {features: [a], sensitive: [a]}\n"
        "schedule: {start_date: '2026-01-01'}\n")
    out = tmp_path / "reports"
    assert main(["report", "--monitor", report_seed.MONITOR, "--window", "2026-01-04", "--db", seeded_db,
                 "--output", str(out), "--spec", str(spec)]) == 0
    html = (out / report_seed.MONITOR / "2026-01-04.html").read_text()
    assert (f"rebuild: <code>fairmon report --monitor {report_seed.MONITOR} --window 2026-01-04 --spec "
            f"{spec.resolve()} --output {out}</code> (against the store it was built from") in html
