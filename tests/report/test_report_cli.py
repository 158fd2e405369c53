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
