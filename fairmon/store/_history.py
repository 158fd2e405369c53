"""History reads: the series drift decisions use (earlier, completed windows only) and the CLI's history.

Why the semantics live here, once: "before this window" and "completed only" (``succeeded`` or
``labels_pending``) decide what a drift check may see, so re-running an old window never sees — and
never rewrites — the decisions of later windows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import distinct_on

from fairmon.store._base import StoreBase
from fairmon.store._rows import (
    EVIDENCE_COLUMNS,
    EXPLANATION_COLUMNS,
    METRIC_COLUMNS,
    as_utc,
    evidence_from_row,
    explanation_from_row,
    finding_from_row,
    finding_select,
    metric_from_row,
)
from fairmon.store._tables import evidence, explanation_metrics, findings, metrics, monitors, runs
from fairmon.store.records import (
    RESULT_STATUSES,
    EvidenceRecord,
    ExplanationMetricRecord,
    FindingRecord,
    MetricRecord,
    utc,
)

__all__ = ["HistoryReads", "METRIC_SERIES_COLUMNS"]

#: the columns of the ``metric_series`` view that :meth:`HistoryReads.history` returns
METRIC_SERIES_COLUMNS = (
    "monitor",
    "window_start",
    "window_end",
    "status",
    "metric",
    "attribute",
    "group_key",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "rolling_mean_7",
)
_metric_series = sa.table("metric_series", *(sa.column(c) for c in METRIC_SERIES_COLUMNS))


def _series_of(table: sa.Table, columns: Sequence[sa.ColumnElement[Any]]) -> sa.Select[Any]:
    """``SELECT columns FROM table ⋈ monitors ⋈ runs``: a result table with its monitor and run."""
    return sa.select(*columns).select_from(
        table.join(monitors, monitors.c.monitor_id == table.c.monitor_id).join(
            runs, runs.c.run_id == table.c.run_id
        )
    )


class HistoryReads(StoreBase):
    """:meth:`metric_history`, :meth:`evidence_history`, :meth:`gesd_history`, findings, :meth:`history`."""

    def _window_history(
        self,
        stmt: sa.Select[Any],
        table: sa.Table,
        *,
        before: datetime | None = None,
        since: datetime | None = None,
        n: int | None = None,
    ) -> list[sa.RowMapping]:
        """Rows of a per-window series query, oldest first: the ``n`` latest in [since, before)."""
        ws = table.c.window_start
        if before is not None:
            stmt = stmt.where(ws < utc(before, name="before"))
        if since is not None:
            stmt = stmt.where(ws >= utc(since, name="since"))
        stmt = stmt.order_by(ws.desc())
        if n is not None:
            stmt = stmt.limit(int(n))
        with self._read() as conn:
            rows = conn.execute(stmt).mappings().all()
        return list(reversed(rows))

    def metric_history(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str = "",
        group: str = "",
        before: datetime | None = None,
        since: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[MetricRecord]:
        """One metric series of a monitor, oldest first: the ``n`` latest points with window_start < ``before``.

        Only runs whose status is in ``statuses`` count (completed windows by default).

        Examples
        --------
        >>> [m.value for m in store.metric_history("demo", "dp_difference", attribute="sex", n=2)]  # doctest: +SKIP
        [0.1, 0.12]
        """
        m = metrics.c
        stmt = _series_of(metrics, METRIC_COLUMNS).where(
            monitors.c.name == monitor,
            m.metric == metric,
            m.attribute == attribute,
            m.group_key == group,
            runs.c.status.in_(list(statuses)),
        )
        rows = self._window_history(stmt, metrics, before=before, since=since, n=n)
        return [metric_from_row(r) for r in rows]

    def evidence_history(
        self,
        monitor: str,
        *,
        method: str = "ie-dt",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[EvidenceRecord]:
        """RUMIE evidence of earlier completed windows, oldest first (the ``n`` latest before ``before``).

        Examples
        --------
        >>> [e.dscore for e in store.evidence_history("demo", n=2)]  # doctest: +SKIP
        [0.31, 0.29]
        """
        stmt = _series_of(evidence, EVIDENCE_COLUMNS).where(
            monitors.c.name == monitor, evidence.c.method == method, runs.c.status.in_(list(statuses))
        )
        return [evidence_from_row(r) for r in self._window_history(stmt, evidence, before=before, n=n)]

    def explanation_history(
        self,
        monitor: str,
        family: str,
        metric: str,
        *,
        explainer: str = "",
        group: str = "",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[ExplanationMetricRecord]:
        """An explanation-metric series of earlier completed windows, oldest first.

        Examples
        --------
        >>> store.explanation_history("demo", "openxai", "PGI", explainer="shap", n=1)  # doctest: +SKIP
        [ExplanationMetricRecord(family='openxai', metric='PGI', ...)]
        """
        x = explanation_metrics.c
        stmt = _series_of(explanation_metrics, EXPLANATION_COLUMNS).where(
            monitors.c.name == monitor,
            x.family == family,
            x.metric == metric,
            x.explainer == explainer,
            x.group_key == group,
            runs.c.status.in_(list(statuses)),
        )
        rows = self._window_history(stmt, explanation_metrics, before=before, n=n)
        return [explanation_from_row(r) for r in rows]

    def gesd_history(
        self,
        monitor: str,
        *,
        explainer: str = "",
        before: datetime | None = None,
        n: int | None = None,
        statuses: Sequence[str] = RESULT_STATUSES,
    ) -> list[ExplanationMetricRecord]:
        """GESD values (``family="gesd", metric="gesd"``) of earlier completed windows, oldest first.

        Examples
        --------
        >>> [g.value for g in store.gesd_history("demo", explainer="shap", n=2)]  # doctest: +SKIP
        [0.04, 0.05]
        """
        return self.explanation_history(
            monitor, "gesd", "gesd", explainer=explainer, before=before, n=n, statuses=statuses
        )

    def open_findings(
        self, monitor: str, *, before: datetime | None = None, statuses: Sequence[str] = ("open", "ongoing")
    ) -> list[FindingRecord]:
        """Drifts still active: per (kind, metric, attribute, group) the latest decision (of a window
        before ``before``) when its status is in ``statuses``. Drives resolution messages and cooldowns.

        Examples
        --------
        >>> [f.status for f in store.open_findings("demo")]  # doctest: +SKIP
        ['ongoing']
        """
        f = findings.c
        latest = finding_select().where(monitors.c.name == monitor)
        if before is not None:
            latest = latest.where(f.window_start < utc(before, name="before"))
        sub = (
            latest.ext(distinct_on(f.kind, f.metric, f.attribute, f.group_key))
            .order_by(f.kind, f.metric, f.attribute, f.group_key, f.window_start.desc())
            .subquery("latest")
        )
        stmt = (
            sa.select(sub)
            .where(sub.c.status.in_(list(statuses)))
            .order_by(sub.c.window_start, sub.c.kind, sub.c.metric)
        )
        with self._read(monitor) as conn:
            return [finding_from_row(r) for r in conn.execute(stmt).mappings()]

    def findings_between(
        self, monitor: str | None, start: datetime, end: datetime, *, status: str | None = None
    ) -> list[FindingRecord]:
        """Findings with ``start <= window_start < end`` (all monitors when ``monitor`` is None).

        Examples
        --------
        >>> len(store.findings_between(None, start, end, status="open"))  # doctest: +SKIP
        3
        """
        f = findings.c
        stmt = finding_select().where(
            f.window_start >= utc(start, name="start"), f.window_start < utc(end, name="end")
        )
        if monitor is not None:
            stmt = stmt.where(monitors.c.name == monitor)
        if status is not None:
            stmt = stmt.where(f.status == status)
        stmt = stmt.order_by(f.window_start, monitors.c.name, f.kind, f.metric, f.attribute, f.group_key)
        with self._read(monitor) as conn:
            return [finding_from_row(r) for r in conn.execute(stmt).mappings()]

    def history(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str | None = None,
        group: str | None = None,
        since: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Rows of the ``metric_series`` view (value, CI, 7-window rolling mean) for ``fairmon history``.

        ``attribute``/``group`` ``None`` = every series of the metric. Ordered by series then time.

        Examples
        --------
        >>> store.history("demo", "dp_difference", attribute="sex")[0]["rolling_mean_7"]  # doctest: +SKIP
        0.1
        """
        v = _metric_series.c
        stmt = sa.select(_metric_series).where(v.monitor == monitor, v.metric == metric)
        if attribute is not None:
            stmt = stmt.where(v.attribute == attribute)
        if group is not None:
            stmt = stmt.where(v.group_key == group)
        if since is not None:
            stmt = stmt.where(v.window_start >= utc(since, name="since"))
        with self._read(monitor) as conn:
            rows = conn.execute(stmt.order_by(v.attribute, v.group_key, v.window_start)).mappings().all()
        out = []
        for r in rows:
            d = dict(r)
            d["window_start"] = as_utc(d["window_start"])
            d["window_end"] = as_utc(d["window_end"])
            out.append(d)
        return out

    def metric_series(
        self,
        monitor: str,
        metric: str,
        *,
        attribute: str | None = None,
        group: str | None = None,
        since: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Alias of :meth:`history` (the name INTERFACES.md sketched): rows of the ``metric_series`` view.

        Examples
        --------
        >>> store.metric_series("demo", "dp_difference") == store.history("demo", "dp_difference")  # doctest: +SKIP
        True
        """
        return self.history(monitor, metric, attribute=attribute, group=group, since=since)
