"""A window's diagnosis rows: attribution gaps ("why disfavored") and model rescores ("model or data?").

Both are written by the pipeline's ``diagnose`` step once the window's other results are stored,
replaced as a set per run (a re-run never duplicates them), and cleared with the window's other
result rows when it is re-run or fails.

Examples
--------
>>> AttributionGapRecord("rumie", "ok", group_label="age <= 30").features
()
>>> RescoreRecord("rumie_dscore", "rumie_honest_dscore", old_version="v1", new_version="v2").verdict
'undetermined'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from fairmon._numbers import finite_float
from fairmon.store._base import StoreBase
from fairmon.store._rows import jsonable
from fairmon.store._tables import attribution_gaps, model_rescores
from fairmon.store.records import RecordError

__all__ = ["AttributionGapRecord", "RescoreRecord", "DiagnosisRows", "ERR_DUPLICATE_GAP", "ERR_DUPLICATE_RESCORE"]

ERR_DUPLICATE_GAP = "save_attribution_gaps: two rows of group kind {key!r} for run {run_id}"
ERR_DUPLICATE_RESCORE = "save_rescores: two rows for finding {key!r} of run {run_id}"
_GAP_COLS = ("group_label", "status", "reason", "explainer", "n_inside", "n_outside", "population_inside",
             "population_outside", "favorable_rate_inside", "favorable_rate_outside", "n_bootstrap", "confidence")
_RESCORE_COLS = ("old_version", "new_version", "value_fired", "value_new", "ci_new_low", "ci_new_high",
                 "value_old", "ci_old_low", "ci_old_high", "baseline", "verdict", "definition", "status", "reason")


@dataclass(frozen=True)
class AttributionGapRecord:
    """One group's attribution gap (a row of ``attribution_gaps``); ``features`` ranked by |difference|,
    each ``{feature, inside, outside, difference, ci_low, ci_high}``."""

    group_kind: str
    status: str
    group_label: str = ""
    reason: str = ""
    explainer: str = ""
    n_inside: int | None = None
    n_outside: int | None = None
    population_inside: int | None = None
    population_outside: int | None = None
    favorable_rate_inside: float | None = None
    favorable_rate_outside: float | None = None
    n_bootstrap: int | None = None
    confidence: float | None = None
    features: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class RescoreRecord:
    """One fired finding's metric under the earlier model version (a row of ``model_rescores``)."""

    kind: str
    metric: str
    group: str = ""
    old_version: str = ""
    new_version: str = ""
    value_fired: float | None = None
    value_new: float | None = None
    ci_new_low: float | None = None
    ci_new_high: float | None = None
    value_old: float | None = None
    ci_old_low: float | None = None
    ci_old_high: float | None = None
    baseline: float | None = None
    verdict: str = "undetermined"
    definition: str = ""
    status: str = "ok"
    reason: str = ""


class DiagnosisRows(StoreBase):
    """:meth:`save_attribution_gaps`, :meth:`attribution_gaps_of_run`, :meth:`save_rescores`,
    :meth:`rescores_of_run`."""

    def _replace_rows(self, table: sa.Table, run_id: int, keys: Sequence[str], duplicate: str,
                      rows: Sequence[dict[str, Any]], attempt_id: str | None) -> None:
        """Replace a run's rows of ``table`` by ``rows`` (the columns after the run's keys) in one
        transaction, refused for a superseded ``attempt_id``; two rows with the same ``keys`` are refused
        with ``duplicate`` (a message of ``key`` and ``run_id``)."""
        seen = [":".join(str(r[k]) for k in keys) for r in rows]
        for k in seen:
            if seen.count(k) > 1:
                raise RecordError(duplicate.format(key=k, run_id=run_id))
        with self._tx() as conn:
            mid, ws = self._run_key(conn, run_id)
            self._check_run_lease(conn, run_id, mid, ws, attempt_id)
            conn.execute(sa.delete(table).where(table.c.run_id == run_id))
            if rows:
                conn.execute(sa.insert(table), [{"run_id": run_id, "monitor_id": mid, "window_start": ws, **r}
                                                for r in rows])

    def _rows_of_run(self, table: sa.Table, run_id: int, *order: sa.ColumnElement[Any]) -> list[sa.RowMapping]:
        """A run's rows of ``table`` (as mappings) in the order ``order``."""
        with self._read() as conn:
            return list(conn.execute(sa.select(table).where(table.c.run_id == run_id).order_by(*order)).mappings())

    def save_attribution_gaps(self, run_id: int, rows: Sequence[AttributionGapRecord], *,
                              attempt_id: str | None = None) -> None:
        """Replace the attribution gaps of a run (one transaction; refused for a superseded ``attempt_id``).

        Examples
        --------
        >>> store.save_attribution_gaps(run_id, [AttributionGapRecord("rumie", "ok")])  # doctest: +SKIP
        """
        self._replace_rows(attribution_gaps, run_id, ("group_kind",), ERR_DUPLICATE_GAP, [
            {"group_kind": r.group_kind, **{c: getattr(r, c) for c in _GAP_COLS},
             "top_feature": str(r.features[0]["feature"]) if r.features else None,
             "top_difference": finite_float(r.features[0]["difference"]) if r.features else None,
             "features": jsonable([dict(f) for f in r.features])}
            for r in rows
        ], attempt_id)

    def attribution_gaps_of_run(self, run_id: int) -> list[AttributionGapRecord]:
        """The attribution gaps of a run (``rumie`` before ``declared``).

        Examples
        --------
        >>> [g.group_kind for g in store.attribution_gaps_of_run(run_id)]  # doctest: +SKIP
        ['rumie', 'declared']
        """
        return [
            AttributionGapRecord(group_kind=r["group_kind"], **{c: r[c] for c in _GAP_COLS},
                                 features=tuple(r["features"] or ()))
            for r in self._rows_of_run(attribution_gaps, run_id, attribution_gaps.c.group_kind.desc())
        ]

    def save_rescores(self, run_id: int, rows: Sequence[RescoreRecord], *, attempt_id: str | None = None) -> None:
        """Replace the model rescores of a run (one transaction; refused for a superseded ``attempt_id``).

        Examples
        --------
        >>> store.save_rescores(run_id, [RescoreRecord("rumie_dscore", "rumie_honest_dscore", "", "v1", "v2")])  # doctest: +SKIP
        """
        self._replace_rows(model_rescores, run_id, ("kind", "metric", "group_key"), ERR_DUPLICATE_RESCORE, [
            {"kind": r.kind, "metric": r.metric, "group_key": r.group, **{c: getattr(r, c) for c in _RESCORE_COLS}}
            for r in rows
        ], attempt_id)

    def rescores_of_run(self, run_id: int) -> list[RescoreRecord]:
        """The model rescores of a run, by finding key.

        Examples
        --------
        >>> [r.verdict for r in store.rescores_of_run(run_id)]  # doctest: +SKIP
        ['model']
        """
        t = model_rescores.c
        return [
            RescoreRecord(kind=r["kind"], metric=r["metric"], group=r["group_key"], **{c: r[c] for c in _RESCORE_COLS})
            for r in self._rows_of_run(model_rescores, run_id, t.kind, t.metric, t.group_key)
        ]
