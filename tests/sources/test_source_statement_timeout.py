"""Issue 15: a SQL source's window query runs under a statement timeout (FAIRMON_SOURCE_STATEMENT_TIMEOUT_S)
and a cancelled query is a DatasetError naming the limit, not a task hanging on the source."""

from __future__ import annotations

import datetime as dt

import pytest

from fairmon.config import ENV_SOURCE_STATEMENT_TIMEOUT_S, SqlSource
from fairmon.errors import ConfigError, DatasetError
from fairmon.sources import ERR_TIMEOUT_VALUE, load_window, source_statement_timeout_s

pytestmark = pytest.mark.postgres

START, END = dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
SLOW = "SELECT 1 AS x, CAST(:start AS timestamptz) AS s, CAST(:end AS timestamptz) AS e FROM pg_sleep(3)"


def test_a_query_over_the_limit_is_cancelled_with_a_clear_error(fresh_database_url: str) -> None:
    src = SqlSource(query=SLOW)
    with pytest.raises(DatasetError) as ei:
        load_window(src, START, END, engine=fresh_database_url, env={ENV_SOURCE_STATEMENT_TIMEOUT_S: "0.3"})
    text = str(ei.value)
    assert "ran longer than 0.3 s and was cancelled" in text and ENV_SOURCE_STATEMENT_TIMEOUT_S in text
    assert "pg_sleep" in text and ei.value.retryable


def test_a_query_within_the_limit_runs(fresh_database_url: str) -> None:
    src = SqlSource(query=SLOW.replace("pg_sleep(3)", "pg_sleep(0.1)"))
    frame = load_window(src, START, END, engine=fresh_database_url, env={ENV_SOURCE_STATEMENT_TIMEOUT_S: "5"})
    assert frame["x"].tolist() == [1]


@pytest.mark.parametrize("raw", ["-2", "never", "inf"])
def test_a_bad_limit_names_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError) as ei:
        source_statement_timeout_s({ENV_SOURCE_STATEMENT_TIMEOUT_S: raw})
    assert str(ei.value) == ERR_TIMEOUT_VALUE.format(env=ENV_SOURCE_STATEMENT_TIMEOUT_S, value=raw)
