"""The ``data`` section: where a window's rows come from (a SQL query or a file partition per window).

Examples
--------
>>> DataSource.model_validate({"files": {"pattern": "d/{start:%Y-%m-%d}.parquet"}}).kind
'files'
"""

from __future__ import annotations

import datetime as dt
import re
import string
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from fairmon.config._env import ENV_SOURCE_URL
from fairmon.config._limits import MAX_LATENESS_S, MAX_POKE_INTERVAL_S
from fairmon.config._messages import (
    ERR_EXACTLY_ONE_SOURCE,
    ERR_FORMAT_UNKNOWN,
    ERR_PATTERN_FIELD,
    ERR_PATTERN_FORMAT,
    ERR_PATTERN_WINDOW,
    ERR_READY_PLACEHOLDER,
    ERR_SQL_PLACEHOLDER,
    excerpt,
)
from fairmon.config._parsers import SpecSection
from fairmon.config._paths import SpecPath, format_window, split_vars

__all__ = ["DataSource", "FilesSource", "SqlSource"]

class SqlSource(SpecSection):
    """A SQL query for one window; fairmon binds ``:start`` (inclusive) and ``:end`` (exclusive).

    ``connection`` is the Airflow connection id used inside DAG tasks; outside Airflow the SQLAlchemy URL
    is read from the environment variable named by ``url_env`` (a secret, never stored in the spec).

    ``ready_query`` (optional) tells the late-data sensor when the window's rows are complete: it runs
    with the window's ``:start``/``:end`` bound (it must use at least one) and the window is ready when
    its first row's first value is true (not NULL, false or 0; no row: not ready), e.g. ``SELECT
    max(loaded_until) >= :end FROM etl_watermarks``. Without it, the window is ready once the source
    has rows at or after the window's end: ``query`` returns a row for
    ``[end, max(end, now) + (end - start))``.
    """

    query: str = Field(min_length=1)
    connection: str = "fairmon_source"
    url_env: str = ENV_SOURCE_URL
    ready_query: Annotated[str, Field(min_length=1)] | None = None

    @field_validator("query")
    @classmethod
    def _has_window(cls, v: str) -> str:
        for param in (":start", ":end"):
            if not re.search(re.escape(param) + r"\b", v):
                raise ValueError(ERR_SQL_PLACEHOLDER.format(param=param))
        return v

    @field_validator("ready_query")
    @classmethod
    def _ready_names_the_window(cls, v: str | None) -> str | None:
        if v is not None and not any(re.search(re.escape(p) + r"\b", v) for p in (":start", ":end")):
            raise ValueError(ERR_READY_PLACEHOLDER)
        return v


_SAMPLE_DATE = dt.datetime(2026, 1, 2, 3, 4, 5)


class FilesSource(SpecSection):
    """A file partition per window, e.g. ``data/{start:%Y-%m-%d}.csv`` (``{end:...}`` also allowed).

    The placeholders are Python format fields over ``datetime`` objects. ``format`` is inferred from the
    pattern's extension when omitted.
    """

    pattern: Annotated[SpecPath, Field(min_length=1)]
    format: Literal["csv", "parquet"] | None = None

    @field_validator("pattern")
    @classmethod
    def _has_window(cls, v: str) -> str:
        fields = []
        try:
            for piece in split_vars(v)[::2]:
                for _, field, _, _ in string.Formatter().parse(piece):
                    if field is not None:
                        fields.append(field)
        except ValueError as exc:
            raise ValueError(ERR_PATTERN_FORMAT.format(error=exc)) from None
        for f in fields:
            if f not in ("start", "end"):
                raise ValueError(ERR_PATTERN_FIELD.format(field=excerpt(f)))
        if not fields:
            raise ValueError(ERR_PATTERN_WINDOW.format(pattern=excerpt(v)))
        try:
            format_window(v, _SAMPLE_DATE, _SAMPLE_DATE)
        except (ValueError, KeyError, IndexError) as exc:
            raise ValueError(ERR_PATTERN_FORMAT.format(error=exc)) from None
        return v

    @model_validator(mode="after")
    def _infer_format(self) -> FilesSource:
        if self.format is None:
            low = self.pattern.lower()
            for suffix, fmt in (
                (".csv", "csv"),
                (".csv.gz", "csv"),
                (".parquet", "parquet"),
                (".pq", "parquet"),
            ):
                if low.endswith(suffix):
                    object.__setattr__(self, "format", fmt)
                    break
            else:
                raise ValueError("format: " + ERR_FORMAT_UNKNOWN.format(pattern=excerpt(self.pattern)))
        return self

    def path_for(self, start: dt.datetime, end: dt.datetime) -> str:
        """The partition path for the window ``[start, end)`` (not yet resolved against the spec folder).

        ``${VAR}`` references are kept for :meth:`MonitorSpec.resolve_path`.

        >>> files = FilesSource(pattern="${D}/{start:%Y-%m-%d}.csv")
        >>> files.path_for(dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6))
        '${D}/2026-01-05.csv'
        """
        return format_window(self.pattern, start, end)


class DataSource(SpecSection):
    """Exactly one of ``sql`` or ``files``.

    Late data: under Airflow a sensor before ``pull_data`` waits up to ``max_lateness_s`` (checking
    every ``poke_interval_s``) for the window's data to be ready (a files source: its partition
    exists; a SQL source: ``sql.ready_query`` is true, or without one the source has rows at or after
    the window's end); still not ready, the run ends ``skipped`` with the
    reason stored, not ``failed``. ``0`` (the default): no wait.
    """

    sql: SqlSource | None = None
    files: FilesSource | None = None
    max_lateness_s: Annotated[int, Field(ge=0, le=MAX_LATENESS_S)] = 0
    poke_interval_s: Annotated[int, Field(ge=1, le=MAX_POKE_INTERVAL_S)] = 60

    @model_validator(mode="after")
    def _exactly_one(self) -> DataSource:
        got = [k for k in ("sql", "files") if getattr(self, k) is not None]
        if len(got) != 1:
            raise ValueError(ERR_EXACTLY_ONE_SOURCE.format(got=got or "neither"))
        return self

    @property
    def kind(self) -> Literal["sql", "files"]:
        """Which source is given: ``"sql"`` or ``"files"``."""
        return "sql" if self.sql is not None else "files"

