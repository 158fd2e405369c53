"""Third-party INFO chatter off fairmon's logs (CLI and Airflow tasks alike).

Great Expectations alone writes ~150 INFO lines per ``validate``; they bury fairmon's own lines. The
filter sits on the handlers, not on a logger level: great_expectations sets INFO on its own child
loggers when it is imported, and a logger's filter never sees its children's records.

Examples
--------
>>> import logging
>>> rec = logging.LogRecord("great_expectations.core", logging.INFO, __file__, 1, "chatter", None, None)
>>> QuietThirdParty().filter(rec), QuietThirdParty().filter(logging.makeLogRecord({"name": "fairmon", "levelno": 20}))
(False, True)
"""

from __future__ import annotations

import logging

__all__ = ["NOISY_LOGGERS", "QuietThirdParty", "quiet_third_party"]

#: libraries whose INFO logs are progress chatter (the CLI shows them again with ``--debug``)
NOISY_LOGGERS: tuple[str, ...] = ("great_expectations", "alembic", "matplotlib", "urllib3", "httpx", "pgserver")


class QuietThirdParty(logging.Filter):
    """Drops records below WARNING from :data:`NOISY_LOGGERS` at the handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or record.name.split(".", 1)[0] not in NOISY_LOGGERS


def quiet_third_party(logger: logging.Logger | None = None) -> int:
    """Add one :class:`QuietThirdParty` to each handler of ``logger`` (default: root); returns how many
    handlers carry it (idempotent)."""
    handlers = (logger or logging.getLogger()).handlers
    for handler in handlers:
        if not any(isinstance(f, QuietThirdParty) for f in handler.filters):
            handler.addFilter(QuietThirdParty())
    return len(handlers)
