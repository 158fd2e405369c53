"""The store: the only place in fairmon that writes SQL — one facade over one module per concern.

Why one object: writes for a window must be one transaction keyed by (monitor, window) so an Airflow
retry or re-run replaces rows instead of duplicating them, and a failure half-way leaves the earlier
state intact. Reads that drive decisions (history of earlier, completed windows) live here too, so
their semantics ("before this window", "completed only": succeeded or labels_pending) are defined once.

Where each part lives (every part is a class over the shared plumbing of ``_base``):

==================  ==============================================================================
``_base``           engine, transactions with lock/statement timeouts, the monitor's writer lock
``_runs``           monitors, run rows, status marks, heartbeats, stale runs
``_attempts``       attempts of a window (the run's lease), the spec file owning a monitor name
``_windows``        window writes (results of one window in one transaction), findings, latest
``_reads``          runs and the results of one run
``_history``        series for drift decisions, findings across windows, ``metric_series``
``_outbox``         the Slack outbox state machine
``_feu``            FEU retraining candidates
``_diagnosis``      attribution gaps and model rescores of a run (issue 19)
``_tables``         the schema as SQLAlchemy Core tables; ``_rows`` maps rows to records by name
``_settings``       ``FAIRMON_DB_LOCK_TIMEOUT_S`` / ``FAIRMON_DB_STATEMENT_TIMEOUT_S``
==================  ==============================================================================

Examples
--------
>>> from datetime import datetime, UTC
>>> from fairmon.store import get_engine, upgrade, Store, RunRecord, MetricRecord, WindowRecords
>>> engine = get_engine("postgresql://postgres@127.0.0.1:5432/fm")  # doctest: +SKIP
>>> upgrade(engine); store = Store(engine)  # doctest: +SKIP
>>> run = RunRecord("demo", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
>>> store.write_window(WindowRecords(run, metrics=[MetricRecord("dp_difference", 0.12, attribute="sex")]))  # doctest: +SKIP
1
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from fairmon.store._attempts import ERR_MONITOR_OWNED, AttemptWrites
from fairmon.store._base import ERR_LOCK_TIMEOUT, ERR_STATEMENT_TIMEOUT, ERR_SUPERSEDED, ERR_UNKNOWN_RUN
from fairmon.store._diagnosis import DiagnosisRows
from fairmon.store._feu import ERR_TWO_SELECTED, FEUCandidates
from fairmon.store._history import HistoryReads
from fairmon.store._liveness import ERR_STALE_RUN, RunLiveness
from fairmon.store._outbox import ALLOWED_TRANSITIONS, ERR_TRANSITION, Outbox
from fairmon.store._reads import RunReads
from fairmon.store._settings import StoreTimeouts
from fairmon.store._spec_changes import SpecChanges
from fairmon.store._windows import WindowWrites
from fairmon.store.engine import get_engine
from fairmon.store.migrations import upgrade as upgrade_schema

__all__ = [
    "Store",
    "StoreTimeouts",
    "open_store",
    "ALLOWED_TRANSITIONS",
    "ERR_UNKNOWN_RUN",
    "ERR_TRANSITION",
    "ERR_TWO_SELECTED",
    "ERR_LOCK_TIMEOUT",
    "ERR_STATEMENT_TIMEOUT",
    "ERR_STALE_RUN",
    "ERR_SUPERSEDED",
    "ERR_MONITOR_OWNED",
]


class Store(WindowWrites, AttemptWrites, RunLiveness, RunReads, HistoryReads, Outbox, FEUCandidates, DiagnosisRows, SpecChanges):
    """Repository over the fairmon schema (``sql/migrations``).

    Parameters
    ----------
    engine
        From :func:`fairmon.store.get_engine`.
    check_schema
        Refuse to work on a database that is not at the migration head
        (:class:`~fairmon.errors.SchemaNotAtHeadError`); on by default.
    timeouts
        ``lock_timeout`` / ``statement_timeout`` of every transaction; default
        :meth:`StoreTimeouts.from_env` (30 s / 5 min unless ``FAIRMON_DB_LOCK_TIMEOUT_S`` /
        ``FAIRMON_DB_STATEMENT_TIMEOUT_S`` say otherwise). An expired one raises a retryable
        :class:`~fairmon.errors.StoreError` naming the monitor and the limit.

    Examples
    --------
    >>> store = Store(get_engine(), timeouts=StoreTimeouts(lock_s=5))  # doctest: +SKIP
    >>> store.timeouts.lock_s  # doctest: +SKIP
    5.0
    """

    def __init__(
        self, engine: Engine, *, check_schema: bool = True, timeouts: StoreTimeouts | None = None
    ) -> None:
        super().__init__(engine, check_schema=check_schema, timeouts=timeouts)


def open_store(db_url: str | None = None, *, upgrade: bool = False) -> Store:
    """Engine (``--db`` / ``FAIRMON_DATABASE_URL`` / embedded) → optional upgrade → :class:`Store`.

    ``upgrade=True`` is for the demo and first-run tools; production tasks leave it off so a database
    behind the code fails fast with :class:`~fairmon.errors.SchemaNotAtHeadError`.

    Examples
    --------
    >>> store = open_store("postgresql://postgres@127.0.0.1:5432/fm", upgrade=True)  # doctest: +SKIP
    """
    engine = get_engine(db_url)
    if upgrade:
        upgrade_schema(engine)
    return Store(engine)
