"""Outcome push-down (issue 21 req 3): the (group x decision x label) counts computed with GROUP BY in
PostgreSQL equal the in-memory counts, and the outcome metrics from them equal those of the rows."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from fairmon.config import MonitorSpec, SqlSource
from fairmon.errors import ConfigError
from fairmon.fairness.outcome import outcome_metrics
from fairmon.pipeline.ingest import label_favorable, logged_favorable
from fairmon.sources import COUNT_COLUMN, load_window, load_window_counts

START, END = dt.datetime(2026, 3, 1), dt.datetime(2026, 3, 2)
QUERY = "SELECT * FROM apps WHERE ts >= :start AND ts < :end;"


def _spec() -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1,
        "identity": {"name": "pd", "owner": "o@example.com"},
        "model": {"registry_uri": "/tmp/none"},
        "data": {"sql": {"query": QUERY}},
        "columns": {"features": ["x"], "extra": ["sex", "race"], "sensitive": ["sex", "race"],
                    "label": "repaid", "decision": "approved"},
        "favorable": {"class": "yes", "label_class": 1},
        "schedule": {"cron": "0 0 * * *", "window": "1d", "start_date": "2026-01-01"},
        "outcome": {"push_down": True, "bootstrap": 200},
        "retraining": {"enabled": False},
    })


def _rows(n: int, rng: np.random.Generator) -> pd.DataFrame:
    ts = START - dt.timedelta(hours=6) + pd.to_timedelta(rng.uniform(0, 36, n), unit="h")  # some outside
    sex = pd.Series(rng.choice(["female", "male", "o'x&y"], n, p=[0.48, 0.48, 0.04]), dtype=object)
    sex[rng.random(n) < 0.03] = None
    race = pd.Series(rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1]), dtype=object)
    approved = pd.Series(rng.choice(["yes", "no"], n), dtype=object)
    approved[rng.random(n) < 0.02] = None
    repaid = pd.Series(rng.integers(0, 2, n), dtype="Int64").mask(rng.random(n) < 0.1)
    return pd.DataFrame({"ts": ts, "x": rng.normal(size=n), "sex": sex, "race": race,
                         "approved": approved, "repaid": repaid})


@pytest.mark.postgres
def test_push_down_counts_equal_in_memory_counts(fresh_database_url: str) -> None:
    rng = np.random.default_rng(3)
    engine = sa.create_engine(fresh_database_url)
    _rows(4000, rng).to_sql("apps", engine, index=False)
    spec = _spec()
    assert spec.data.sql is not None
    cols = ["sex", "race", "approved", "repaid"]
    try:
        rows = load_window(spec, START, END, engine=engine)
        counts = load_window_counts(spec.data.sql, START, END, cols, engine=engine)
    finally:
        engine.dispose()
    # the same cells with the same multiplicities as a groupby over the loaded rows
    want = rows.groupby(cols, dropna=False).size()
    got = counts.set_index(cols)[COUNT_COLUMN]
    key = lambda idx: [tuple("<null>" if pd.isna(v) else str(v) for v in t) for t in idx]  # noqa: E731
    assert dict(zip(key(got.index), got.tolist(), strict=True)) == dict(zip(key(want.index), want.tolist(), strict=True))
    assert int(counts[COUNT_COLUMN].sum()) == len(rows)
    # and identical outcome metrics, intervals included (same bootstrap stream)
    kw = {"n_bootstrap": 200, "min_group_size": 30, "random_state": 5}
    mem = outcome_metrics(logged_favorable(spec, rows), sensitive_features=rows[["sex", "race"]],
                          y_true=label_favorable(spec, rows), **kw)
    pushed = outcome_metrics(logged_favorable(spec, counts), sensitive_features=counts[["sex", "race"]],
                             y_true=label_favorable(spec, counts), row_counts=counts[COUNT_COLUMN], **kw)
    assert len(mem.rows) == len(pushed.rows) > 0
    for a, b in zip(mem.rows, pushed.rows, strict=True):
        assert (a.metric, a.attribute, a.group, a.status, a.n, a.n_nan, a.n_skipped) == (
            b.metric, b.attribute, b.group, b.status, b.n, b.n_nan, b.n_skipped)
        np.testing.assert_allclose([a.value, a.ci_low, a.ci_high], [b.value, b.ci_low, b.ci_high], rtol=0, atol=1e-12)


def test_push_down_needs_sql_and_a_logged_decision() -> None:
    raw = _spec().model_dump(by_alias=True, exclude_none=True)
    raw["columns"].pop("decision")
    with pytest.raises(ValueError, match="outcome.push_down.*columns.decision"):
        MonitorSpec.model_validate(raw)


def test_reserved_count_column_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="reserved"):
        load_window_counts(SqlSource(query=QUERY), START, END, [COUNT_COLUMN], engine="postgresql://x@127.0.0.1:1/x")
