"""fairmon.store: the Postgres time-series store (engine, migrations, typed records, repository).

Nothing outside this package writes SQL. Typical use::

    from fairmon.store import open_store, WindowRecords, RunRecord, MetricRecord
    store = open_store()                      # --db / FAIRMON_DATABASE_URL / embedded Postgres
    run_id = store.write_window(WindowRecords(run, metrics=[...]))

The schema lives in ``sql/migrations`` (``fairmon db upgrade``); views and example queries are
documented in ``sql/README.md``. :class:`Store` is one facade over private modules per concern (runs,
window writes, reads, history, outbox, FEU candidates; see :mod:`fairmon.store.repository`). Every
transaction sets ``lock_timeout`` / ``statement_timeout`` from ``FAIRMON_DB_LOCK_TIMEOUT_S`` /
``FAIRMON_DB_STATEMENT_TIMEOUT_S`` (30 s / 300 s by default).
"""

from fairmon.store._diagnosis import AttributionGapRecord, RescoreRecord
from fairmon.store._outbox import STALE_CLAIM_S
from fairmon.store.engine import describe_url, embedded_url, get_engine, normalize_url, ping
from fairmon.store.migrations import current_version, head_version, require_head, upgrade
from fairmon.store.records import (
    NEXT_STEP,
    RESULT_STATUSES,
    AlertRecord,
    EvidenceRecord,
    ExplanationMetricRecord,
    FEUCandidateRecord,
    FindingRecord,
    MetricRecord,
    RecordError,
    RunRecord,
    WindowRecords,
)
from fairmon.store.repository import ALLOWED_TRANSITIONS, Store, open_store

__all__ = [
    "get_engine",
    "normalize_url",
    "describe_url",
    "embedded_url",
    "ping",
    "upgrade",
    "require_head",
    "current_version",
    "head_version",
    "Store",
    "open_store",
    "ALLOWED_TRANSITIONS",
    "STALE_CLAIM_S",
    "RESULT_STATUSES",
    "NEXT_STEP",
    "RecordError",
    "RunRecord",
    "MetricRecord",
    "EvidenceRecord",
    "ExplanationMetricRecord",
    "FindingRecord",
    "AlertRecord",
    "FEUCandidateRecord",
    "WindowRecords",
    "AttributionGapRecord",
    "RescoreRecord",
]
