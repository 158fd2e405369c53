"""``fairmon db`` and ``fairmon history`` end to end (in-process, real Postgres)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from store_seed import day, window

from fairmon.cli import main
from fairmon.cli.history import parse_since
from fairmon.errors import ConfigError
from fairmon.store import Store, get_engine, head_version

pytestmark = pytest.mark.postgres


def test_db_upgrade_status_grant(fresh_database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "status", "--db", fresh_database_url]) == 1
    assert "NOT at head: run `fairmon db upgrade`" in capsys.readouterr().out
    assert main(["db", "upgrade", "--db", fresh_database_url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["applied"] == list(range(1, head_version() + 1)) and out["version"] == head_version()
    assert main(["db", "upgrade", "--db", fresh_database_url]) == 0
    assert "nothing to apply" in capsys.readouterr().out
    assert main(["db", "status", "--db", fresh_database_url, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["at_head"] is True and st["pending"] == []
    assert main(["db", "grant-readonly", "--db", fresh_database_url, "--role", "fairmon_analyst"]) == 0
    assert "SELECT only" in capsys.readouterr().out
    assert main(["db", "grant-readonly", "--db", fresh_database_url, "--role", "Robert'); DROP"]) == 2
    assert "invalid role name" in capsys.readouterr().err


def test_history_formats(fresh_database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    engine = get_engine(fresh_database_url)
    assert (
        main(["history", "--monitor", "demo", "--metric", "dp_difference", "--db", fresh_database_url]) == 2
    )
    assert "database at version 0" in capsys.readouterr().err  # refuses a database not at head
    main(["db", "upgrade", "--db", fresh_database_url])
    store = Store(engine)
    for i in range(3):
        store.write_window(window("demo", i, dp=0.1 * (i + 1)))
    capsys.readouterr()

    base = ["history", "--monitor", "demo", "--metric", "dp_difference", "--db", fresh_database_url]
    assert main([*base, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["value"] for r in rows] == pytest.approx([0.1, 0.2, 0.3])
    assert rows[-1]["rolling_mean_7"] == pytest.approx(0.2) and rows[0]["window_start"] == day(0).isoformat()

    assert main([*base, "--format", "csv", "--since", "2026-01-02"]) == 0
    got = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["window_start"][:10], round(float(r["value"]), 9)) for r in got] == [
        ("2026-01-02", 0.2),
        ("2026-01-03", 0.3),
    ]

    assert main([*base, "--attribute", "sex"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "demo · dp_difference" and table[1].split()[:2] == ["window_start", "status"]
    assert table[2].split()[:3] == ["2026-01-01", "succeeded", "sex"] and len(table) == 5

    sel = [
        "history",
        "--monitor",
        "demo",
        "--metric",
        "selection_rate",
        "--group",
        "Female",
        "--json",
        "--db",
        fresh_database_url,
    ]
    assert main(sel) == 0
    assert {r["group_key"] for r in json.loads(capsys.readouterr().out)} == {"Female"}

    # an unknown monitor or metric is named as such, with what does exist
    assert main(["history", "--monitor", "nosuch", "--metric", "dp_difference", "--db", fresh_database_url]) == 2
    assert "no monitor 'nosuch' in the store; monitors: demo" in capsys.readouterr().err
    assert main(["history", "--monitor", "demo", "--metric", "dp_diff", "--db", fresh_database_url]) == 2
    err = capsys.readouterr().err
    assert "monitor 'demo' has no metric 'dp_diff'; its metrics: " in err and "dp_difference" in err
    assert "rumie_rule_changes" not in err
    # the metric a RUMIE alert names is evidence: the error says where it is
    assert main(["history", "--monitor", "demo", "--metric", "rumie_honest_dscore", "--db", fresh_database_url]) == 2
    assert "per-window evidence, not metrics: psql -f sql/queries/rumie_rule_changes.sql" in capsys.readouterr().err
    assert main([*base, "--since", "2030-01-01"]) == 2  # known series, no rows in range: says where it ends
    err = capsys.readouterr().err
    assert "no 'dp_difference' values for monitor 'demo', since='2030-01-01'" in err
    assert "its latest window starts 2026-" in err and "before --since (2030-01-01): widen --since" in err

    assert store.metric_series("demo", "dp_difference") == store.history("demo", "dp_difference")

    assert main([*base, "--attribute", "race"]) == 2
    err = capsys.readouterr().err
    assert "no 'dp_difference' values for monitor 'demo', attribute='race'; series there: sex/-" in err


def test_parse_since() -> None:
    now = datetime(2026, 3, 31, 12, tzinfo=UTC)
    assert parse_since("89d", now=now) == datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert parse_since("2w", now=now) == datetime(2026, 3, 17, 12, tzinfo=UTC)
    assert parse_since("2026-01-31") == datetime(2026, 1, 31, tzinfo=UTC)
    with pytest.raises(ConfigError, match="use a date"):
        parse_since("last tuesday")
