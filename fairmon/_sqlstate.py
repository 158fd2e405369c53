"""PostgreSQL SQLSTATE codes fairmon maps to its own errors (the store's timeouts, a source's cancelled query).

Examples
--------
>>> QUERY_CANCELED, LOCK_NOT_AVAILABLE
('57014', '55P03')
"""

from __future__ import annotations

__all__ = ["QUERY_CANCELED", "LOCK_NOT_AVAILABLE"]

#: ``query_canceled``: a statement ran past ``statement_timeout`` (or was cancelled)
QUERY_CANCELED = "57014"
#: ``lock_not_available``: a lock was not granted within ``lock_timeout``
LOCK_NOT_AVAILABLE = "55P03"
