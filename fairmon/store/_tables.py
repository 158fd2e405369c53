"""The schema as typed SQLAlchemy Core tables, mirroring ``sql/migrations`` (the DDL's source of truth).

Why Core tables next to SQL migrations: the migrations create and evolve the schema (reviewed SQL, no
``create_all``); these definitions give the repository typed columns to select, insert and read rows
by name. ``tests/store/test_tables.py`` compares them with a migrated database, so the two cannot
drift apart unnoticed. Only what the repository needs is declared (columns, keys); indexes, checks
and views live in the SQL files alone.

Examples
--------
>>> from fairmon.store._tables import runs
>>> [c.name for c in runs.primary_key]
['run_id']
>>> runs.c.window_start.type.timezone
True
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, DOUBLE_PRECISION, JSONB

__all__ = [
    "metadata",
    "monitors",
    "runs",
    "metrics",
    "metric_latest",
    "evidence",
    "explanation_metrics",
    "findings",
    "feu_candidates",
    "feu_baselines",
    "alerts",
    "attribution_gaps",
    "model_rescores",
    "spec_changes",
]

metadata = sa.MetaData()

_TS = sa.DateTime(timezone=True)
#: Python None is SQL NULL (not the JSON literal null), as the SQL the store wrote before
_JSON = JSONB(none_as_null=True)
_FLOAT: DOUBLE_PRECISION[float] = DOUBLE_PRECISION()


def _now() -> sa.TextClause:
    return sa.text("now()")


monitors = sa.Table(
    "monitors",
    metadata,
    sa.Column("monitor_id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("owner", sa.Text),
    sa.Column("tags", ARRAY(sa.Text), nullable=False, server_default="{}"),
    sa.Column("spec", _JSON),
    sa.Column("spec_fingerprint", sa.Text),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
    sa.Column("updated_at", _TS, nullable=False, server_default=_now()),
    # the spec file that owns the name (0010); another file with the same name is refused
    sa.Column("spec_path", sa.Text),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("run_id", sa.BigInteger, primary_key=True),
    sa.Column("monitor_id", sa.Integer, sa.ForeignKey("monitors.monitor_id"), nullable=False),
    sa.Column("window_start", _TS, nullable=False),
    sa.Column("window_end", _TS, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("model_version", sa.Text),
    sa.Column("spec_fingerprint", sa.Text),
    sa.Column("n_rows", sa.Integer),
    sa.Column("timings", _JSON, nullable=False, server_default="{}"),
    sa.Column("error", sa.Text),
    sa.Column("details", _JSON, nullable=False, server_default="{}"),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
    # the run's progress timestamp: every status mark, window write and heartbeat sets it
    sa.Column("updated_at", _TS, nullable=False, server_default=_now()),
    # the attempt holding the run (0010): a new one per resolve_window; a superseded one cannot write
    sa.Column("attempt_id", sa.Text),
    sa.UniqueConstraint("monitor_id", "window_start", "window_end", name="runs_monitor_window_key"),
)


def _result_keys(*keys: str, blank: tuple[str, ...] = ()) -> list[sa.Column[Any]]:
    """A result table's key columns: the run, its monitor and window start, then the text key columns
    ``keys`` and the text key columns ``blank`` that default to ``''`` (no attribute / group)."""
    # every result table denormalises the run's monitor and window start (time-series scans)
    cols: list[sa.Column[Any]] = [
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id"), primary_key=True),
        sa.Column("monitor_id", sa.Integer, nullable=False),
        sa.Column("window_start", _TS, nullable=False),
    ]
    cols += [sa.Column(k, sa.Text, primary_key=True) for k in keys]
    cols += [sa.Column(k, sa.Text, primary_key=True, server_default="") for k in blank]
    return cols


metrics = sa.Table(
    "metrics",
    metadata,
    *_result_keys("metric", blank=("attribute", "group_key")),
    sa.Column("value", _FLOAT),
    sa.Column("ci_low", _FLOAT),
    sa.Column("ci_high", _FLOAT),
    sa.Column("n", sa.Integer),
    sa.Column("n_nan", sa.Integer),
)

metric_latest = sa.Table(
    "metric_latest",
    metadata,
    sa.Column("monitor_id", sa.Integer, sa.ForeignKey("monitors.monitor_id"), primary_key=True),
    sa.Column("metric", sa.Text, primary_key=True),
    sa.Column("attribute", sa.Text, primary_key=True, server_default=""),
    sa.Column("group_key", sa.Text, primary_key=True, server_default=""),
    sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id"), nullable=False),
    sa.Column("window_start", _TS, nullable=False),
    sa.Column("window_end", _TS, nullable=False),
    sa.Column("value", _FLOAT),
    sa.Column("ci_low", _FLOAT),
    sa.Column("ci_high", _FLOAT),
    sa.Column("n", sa.Integer),
    sa.Column("n_nan", sa.Integer),
)

evidence = sa.Table(
    "evidence",
    metadata,
    *_result_keys("method"),
    sa.Column("dscore", _FLOAT),
    sa.Column("honest_dscore", _FLOAT),
    sa.Column("p_value", _FLOAT),
    sa.Column("key_attributes", ARRAY(sa.Text), nullable=False, server_default="{}"),
    sa.Column("rules", _JSON),
    sa.Column("rules_text", sa.Text),
    sa.Column("tree", _JSON),
    sa.Column("group_size", sa.Integer),
    sa.Column("group_fraction", _FLOAT),
    sa.Column("p_fav_in", _FLOAT),
    sa.Column("p_fav_out", _FLOAT),
    sa.Column("n", sa.Integer),
    sa.Column("group_overlap", _FLOAT),
    sa.Column("details", _JSON, nullable=False, server_default="{}"),
)

explanation_metrics = sa.Table(
    "explanation_metrics",
    metadata,
    *_result_keys("family", "metric", blank=("explainer", "group_key")),
    sa.Column("value", _FLOAT),
    sa.Column("p_value", _FLOAT),
    sa.Column("n", sa.Integer),
    sa.Column("n_nan", sa.Integer),
    sa.Column("group_stability", _JSON),
    sa.Column("details", _JSON, nullable=False, server_default="{}"),
)

findings = sa.Table(
    "findings",
    metadata,
    *_result_keys("kind", "metric", blank=("attribute", "group_key")),
    sa.Column("severity", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("value", _FLOAT),
    sa.Column("ci_low", _FLOAT),
    sa.Column("ci_high", _FLOAT),
    sa.Column("baseline", _FLOAT),
    sa.Column("since", _TS),
    sa.Column("fingerprint", sa.Text),
    sa.Column("numbers", _JSON, nullable=False, server_default="{}"),
    sa.Column("message", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
)

feu_candidates = sa.Table(
    "feu_candidates",
    metadata,
    sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("candidate_index", sa.Integer, primary_key=True),
    sa.Column("hyperparameters", _JSON, nullable=False, server_default="{}"),
    sa.Column("metrics", _JSON, nullable=False, server_default="{}"),
    sa.Column("pareto", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("selected", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("registry_version", sa.Text),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
)

feu_baselines = sa.Table(
    "feu_baselines",
    metadata,
    sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("baseline", sa.Text, primary_key=True),
    sa.Column("metrics", _JSON, nullable=False, server_default="{}"),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
)

alerts = sa.Table(
    "alerts",
    metadata,
    sa.Column("alert_id", sa.BigInteger, primary_key=True),
    sa.Column("fingerprint", sa.Text, nullable=False, unique=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("monitor_id", sa.Integer, sa.ForeignKey("monitors.monitor_id")),
    sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id")),
    sa.Column("window_start", _TS),
    sa.Column("severity", sa.Text),
    sa.Column("channel", sa.Text),
    sa.Column("payload", _JSON, nullable=False, server_default="{}"),
    sa.Column("state", sa.Text, nullable=False, server_default="pending"),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_error", sa.Text),
    sa.Column("slack_ts", sa.Text),
    sa.Column("thread_ts", sa.Text),
    sa.Column("created_at", _TS, nullable=False, server_default=_now()),
    sa.Column("updated_at", _TS, nullable=False, server_default=_now()),
    sa.Column("sent_at", _TS),
)

attribution_gaps = sa.Table(
    "attribution_gaps",
    metadata,
    *_result_keys("group_kind"),
    sa.Column("group_label", sa.Text, nullable=False, server_default=""),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False, server_default=""),
    sa.Column("explainer", sa.Text, nullable=False, server_default=""),
    sa.Column("n_inside", sa.Integer),
    sa.Column("n_outside", sa.Integer),
    sa.Column("population_inside", sa.Integer),
    sa.Column("population_outside", sa.Integer),
    sa.Column("favorable_rate_inside", _FLOAT),
    sa.Column("favorable_rate_outside", _FLOAT),
    sa.Column("n_bootstrap", sa.Integer),
    sa.Column("confidence", _FLOAT),
    sa.Column("top_feature", sa.Text),
    sa.Column("top_difference", _FLOAT),
    sa.Column("features", _JSON, nullable=False, server_default="[]"),
)

model_rescores = sa.Table(
    "model_rescores",
    metadata,
    *_result_keys("kind", "metric", blank=("group_key",)),
    sa.Column("old_version", sa.Text, nullable=False),
    sa.Column("new_version", sa.Text, nullable=False),
    sa.Column("value_fired", _FLOAT),
    sa.Column("value_new", _FLOAT),
    sa.Column("ci_new_low", _FLOAT),
    sa.Column("ci_new_high", _FLOAT),
    sa.Column("value_old", _FLOAT),
    sa.Column("ci_old_low", _FLOAT),
    sa.Column("ci_old_high", _FLOAT),
    sa.Column("baseline", _FLOAT),
    sa.Column("verdict", sa.Text, nullable=False),
    sa.Column("definition", sa.Text, nullable=False, server_default=""),
    sa.Column("status", sa.Text, nullable=False, server_default="ok"),
    sa.Column("reason", sa.Text, nullable=False, server_default=""),
)

spec_changes = sa.Table(
    "spec_changes",
    metadata,
    sa.Column("run_id", sa.BigInteger, sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("monitor_id", sa.Integer, sa.ForeignKey("monitors.monitor_id"), nullable=False),
    sa.Column("window_start", _TS, nullable=False),
    sa.Column("previous_window_start", _TS, nullable=False),
    sa.Column("previous_fingerprint", sa.Text, nullable=False),
    sa.Column("spec_fingerprint", sa.Text, nullable=False),
    sa.Column("recorded_at", _TS, nullable=False, server_default=_now()),
)
