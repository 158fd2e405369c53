"""FEU retraining candidates of a run and the baselines they are compared with: replaced as one set (at
most one ``selected``), versions recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from fairmon.store._base import StoreBase
from fairmon.store._rows import FEU_COLUMNS, feu_candidate_from_row, jsonable
from fairmon.store._tables import feu_baselines as baselines_table
from fairmon.store._tables import feu_candidates as candidates_table
from fairmon.store.records import FEUCandidateRecord, RecordError

__all__ = ["ERR_TWO_SELECTED", "ERR_DUPLICATE_CANDIDATE", "FEUCandidates"]

ERR_TWO_SELECTED = "FEU candidates of run {run_id}: {count} marked selected, at most one may be"
ERR_DUPLICATE_CANDIDATE = "save_feu_candidates: duplicate candidate_index for run {run_id}"

_C = candidates_table.c


class FEUCandidates(StoreBase):
    """:meth:`save_feu_candidates`, :meth:`set_feu_registry_version`, :meth:`feu_candidates`,
    :meth:`feu_baselines`."""

    def save_feu_candidates(self, run_id: int, candidates: Sequence[FEUCandidateRecord], *,
                            baselines: Mapping[str, Mapping[str, Any]] | None = None,
                            attempt_id: str | None = None) -> None:
        """Replace the FEU candidates of a run and the baselines they were compared with (one transaction;
        at most one ``selected``; refused for a superseded ``attempt_id``).

        ``baselines`` maps a baseline name (``production``, ``constant``, ``threshold_optimizer``,
        ``exponentiated_gradient``, ``threshold_optimizer_tuned``) to its ``{"validation": metrics, "test": metrics}``
        (``FEUResult.baselines``); None or empty stores none.

        Examples
        --------
        >>> store.save_feu_candidates(run_id, [FEUCandidateRecord(0, {"lr": 0.01}, selected=True)])  # doctest: +SKIP
        """
        selected = sum(1 for c in candidates if c.selected)
        if selected > 1:
            raise RecordError(ERR_TWO_SELECTED.format(run_id=run_id, count=selected))
        idx = [c.candidate_index for c in candidates]
        if len(set(idx)) != len(idx):
            raise RecordError(ERR_DUPLICATE_CANDIDATE.format(run_id=run_id))
        with self._tx() as conn:
            mid, ws = self._run_key(conn, run_id)
            self._check_run_lease(conn, run_id, mid, ws, attempt_id)
            conn.execute(sa.delete(candidates_table).where(_C.run_id == run_id))
            conn.execute(sa.delete(baselines_table).where(baselines_table.c.run_id == run_id))
            if baselines:
                conn.execute(sa.insert(baselines_table), [
                    {"run_id": run_id, "baseline": str(name), "metrics": jsonable(dict(parts))}
                    for name, parts in baselines.items()])
            if candidates:
                conn.execute(
                    sa.insert(candidates_table),
                    [
                        {
                            "run_id": run_id,
                            "candidate_index": c.candidate_index,
                            "hyperparameters": jsonable(c.hyperparameters),
                            "metrics": jsonable(c.metrics),
                            "pareto": bool(c.pareto),
                            "selected": bool(c.selected),
                            "registry_version": c.registry_version,
                        }
                        for c in candidates
                    ],
                )

    def set_feu_registry_version(self, run_id: int, candidate_index: int, registry_version: str) -> bool:
        """Record the registry version under which a candidate was registered.

        Examples
        --------
        >>> store.set_feu_registry_version(run_id, 0, "3")  # doctest: +SKIP
        True
        """
        stmt = (
            sa.update(candidates_table)
            .where(_C.run_id == run_id, _C.candidate_index == candidate_index)
            .values(registry_version=registry_version)
        )
        with self._tx() as conn:
            return conn.execute(stmt).rowcount == 1

    def feu_candidates(self, run_id: int) -> list[FEUCandidateRecord]:
        """The FEU candidates of a run, by ``candidate_index``.

        Examples
        --------
        >>> [c.selected for c in store.feu_candidates(run_id)]  # doctest: +SKIP
        [True]
        """
        stmt = sa.select(*FEU_COLUMNS).where(_C.run_id == run_id).order_by(_C.candidate_index)
        with self._read() as conn:
            return [feu_candidate_from_row(r) for r in conn.execute(stmt).mappings()]

    def feu_baselines(self, run_id: int) -> dict[str, dict[str, Any]]:
        """The baselines of a run's FEU candidates: ``{name: {"validation": ..., "test": ...}}``.

        Examples
        --------
        >>> sorted(store.feu_baselines(run_id))  # doctest: +SKIP
        ['constant', 'exponentiated_gradient', 'production', 'threshold_optimizer']
        """
        t = baselines_table.c
        stmt = sa.select(t.baseline, t.metrics).where(t.run_id == run_id).order_by(t.baseline)
        with self._read() as conn:
            return {str(r.baseline): dict(r.metrics or {}) for r in conn.execute(stmt)}
