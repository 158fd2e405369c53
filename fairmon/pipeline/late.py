"""Late data: where a window's data will appear, whether it is there, and a window skipped for it.

Late data is the normal case in monitoring: the run of window ``[start, end)`` starts at ``end``,
often before the day's partition lands. The Airflow DAG waits for it (a deferrable sensor before
``pull_data``, :mod:`fairmon_airflow.sensor`) up to the spec's ``data.max_lateness_s``; data that
never arrives ends the window ``skipped`` with the reason stored (:func:`skip_window`), not
``failed``: nothing was wrong with the pipeline, and a later re-run computes the window normally.

A files source is ready when its partition exists (local path or fsspec URL). A SQL source is ready
when its ``data.sql.ready_query`` is true for the window, or, without one, when the source has rows at
or after the window's end (the spec's query returns a row from the window's end to one window length past now): rows keep arriving in
time order, so a later row means the window's rows have landed
(:func:`fairmon.readiness.sql_window_ready`; under the source's statement timeout).

Examples
--------
>>> import datetime as dt
>>> from fairmon.config import load_spec
>>> from pathlib import Path
>>> spec = load_spec(Path(__file__).resolve().parents[2] / "monitors" / "demo.yaml")
>>> w = Window("demo", dt.datetime(2026, 1, 3, tzinfo=dt.UTC), dt.datetime(2026, 1, 4, tzinfo=dt.UTC))
>>> data_location(spec, w).endswith("stream/2026-01-03.csv")
True
>>> skip_reason(spec, w, waited_s=600).startswith("late data: ")
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fairmon.config import MonitorSpec, load_spec
from fairmon.pipeline import runs
from fairmon.pipeline.context import RunContext
from fairmon.readiness import file_exists, sql_window_ready
from fairmon.sources import describe_window_source
from fairmon.window import Window

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["awaited", "data_location", "data_ready", "skip_reason", "skip_window", "ERR_LATE_DATA", "SKIP_KIND_LATE"]

#: the stored reason of a window skipped for late data
ERR_LATE_DATA = "late data: {what} not there {waited_s:.0f} s after the run started (data.max_lateness_s={lateness})"
#: ``details.skip.kind`` of such a run
SKIP_KIND_LATE = "late_data"


def data_location(spec: MonitorSpec, window: Window) -> str | None:
    """The window's partition path (a files source) or None (a SQL source: nothing to wait for)."""
    if spec.data.files is None:
        return None
    return describe_window_source(spec, window.start, window.end)  # the path pull_data reads


def data_ready(
    spec: MonitorSpec, window: Window, *, engine: Engine | str | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Whether the window's data can be pulled now: its partition exists (files), or the source's
    readiness query says so (SQL; ``engine`` or the URL in ``data.sql.url_env``).

    Raises
    ------
    DatasetError
        The SQL readiness query failed (``retryable`` for a statement timeout or a lost connection).
    """
    sql = spec.data.sql
    if sql is not None:
        return sql_window_ready(sql, window.start, window.end, engine=engine, env=env)
    where = data_location(spec, window)
    return where is None or file_exists(where)


def awaited(spec: MonitorSpec, window: Window) -> str:
    """What the sensor waits for, in words: the partition, or the SQL source's readiness.

    Examples
    --------
    >>> from fairmon.config import parse_spec
    >>> spec = parse_spec("spec_version: 1\\nidentity: {name: m}\\nmodel: {registry_uri: r}\\n"
    ...     "data: {sql: {query: 'SELECT * FROM t WHERE ts >= :start AND ts < :end'}}\\n"
    ...     "columns: {features: [x, s], sensitive: [s]}\\nschedule: {start_date: 2026-01-01}\\n")
    >>> import datetime as dt
    >>> awaited(spec, Window("m", dt.datetime(2026, 1, 3, tzinfo=dt.UTC), dt.datetime(2026, 1, 4, tzinfo=dt.UTC)))
    'rows at or after 2026-01-04T00:00:00+00:00 (data.sql.query from the window end on)'
    """
    sql = spec.data.sql
    if sql is None:
        return f"partition {data_location(spec, window)}"
    if sql.ready_query is not None:
        return "the window's rows (data.sql.ready_query not true)"
    return f"rows at or after {window.end.isoformat()} (data.sql.query from the window end on)"


def skip_reason(spec: MonitorSpec, window: Window, *, waited_s: float) -> str:
    """The stored reason of a window whose data did not arrive in time."""
    return ERR_LATE_DATA.format(what=awaited(spec, window), waited_s=waited_s, lateness=spec.data.max_lateness_s)


def skip_window(
    spec: MonitorSpec | str,
    window: dict[str, Any] | Window,
    reason: str,
    *,
    db_url: str | None = None,
    attempt: int = 1,
) -> int:
    """Record the window as ``skipped`` with ``reason`` (rows an earlier attempt wrote stay, marked kept); returns the run id.

    ``window`` is a :class:`Window` or the dict ``resolve_window`` returned: with its ``attempt_id`` the
    skip is written by that attempt (the DAG run's, no new one is started); without it a new attempt
    registers the monitor and its spec first, like every window.
    """
    s = spec if isinstance(spec, MonitorSpec) else load_spec(spec)
    w = window if isinstance(window, Window) else Window.from_dict({"monitor": s.name, **window})
    attempt_id = window.get("attempt_id") if isinstance(window, dict) else None
    ctx = RunContext(s, w, db_url=db_url, attempt=attempt, attempt_id=attempt_id)
    try:
        if attempt_id is None:
            runs.start_run(ctx)
        return int(
            ctx.store.mark_run(
                s.name, w.start, w.end, "skipped", error=reason, spec_fingerprint=s.fingerprint,
                details=runs.merged_details(ctx, {"attempt": attempt,
                                                  "skip": {"kind": SKIP_KIND_LATE, "reason": reason}}),
                attempt_id=ctx.attempt_id,
            )
        )
    finally:
        ctx.close()
