"""Store timeouts: ``lock_timeout`` and ``statement_timeout`` of every store transaction.

Why: without them a writer waits forever on a lock a stuck session holds, and a runaway statement
holds its locks without end. The values come from the environment (read here and nowhere else; the
names live in :mod:`fairmon.config` with every other variable) with
defaults that fit a daily monitoring job: 30 s for the monitor's writer lock, 5 min per statement.

=================================  ===================================  =========
variable                           meaning                              default
=================================  ===================================  =========
``FAIRMON_DB_LOCK_TIMEOUT_S``      longest wait for any lock (seconds)  30
``FAIRMON_DB_STATEMENT_TIMEOUT_S``  longest single statement (seconds)  300
=================================  ===================================  =========

``0`` disables a timeout (Postgres' meaning).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fairmon.config import ENV_DB_LOCK_TIMEOUT_S, ENV_DB_STATEMENT_TIMEOUT_S
from fairmon.errors import ConfigError

__all__ = [
    "ENV_LOCK_TIMEOUT_S",
    "ENV_STATEMENT_TIMEOUT_S",
    "DEFAULT_LOCK_TIMEOUT_S",
    "DEFAULT_STATEMENT_TIMEOUT_S",
    "ERR_TIMEOUT_VALUE",
    "StoreTimeouts",
]

#: the variables (their names are defined with every other one in :mod:`fairmon.config`)
ENV_LOCK_TIMEOUT_S = ENV_DB_LOCK_TIMEOUT_S
ENV_STATEMENT_TIMEOUT_S = ENV_DB_STATEMENT_TIMEOUT_S
DEFAULT_LOCK_TIMEOUT_S = 30.0
DEFAULT_STATEMENT_TIMEOUT_S = 300.0
ERR_TIMEOUT_VALUE = "{name}: expected a number of seconds >= 0 (0 = no timeout), got {value!r}"


def _seconds(value: object, name: str) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(ERR_TIMEOUT_VALUE.format(name=name, value=value)) from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(ERR_TIMEOUT_VALUE.format(name=name, value=value))
    return seconds


@dataclass(frozen=True)
class StoreTimeouts:
    """Lock and statement timeouts (seconds) set with ``SET LOCAL`` in every store transaction.

    Examples
    --------
    >>> StoreTimeouts.from_env({"FAIRMON_DB_LOCK_TIMEOUT_S": "2.5"})
    StoreTimeouts(lock_s=2.5, statement_s=300.0)
    >>> StoreTimeouts(lock_s=2.5).settings()
    {'lock_timeout': '2500ms', 'statement_timeout': '300000ms'}
    """

    lock_s: float = DEFAULT_LOCK_TIMEOUT_S
    statement_s: float = DEFAULT_STATEMENT_TIMEOUT_S

    def __post_init__(self) -> None:
        object.__setattr__(self, "lock_s", _seconds(self.lock_s, "lock_timeout"))
        object.__setattr__(self, "statement_s", _seconds(self.statement_s, "statement_timeout"))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StoreTimeouts:
        """Read ``FAIRMON_DB_LOCK_TIMEOUT_S`` / ``FAIRMON_DB_STATEMENT_TIMEOUT_S`` (unset: defaults)."""
        env = os.environ if environ is None else environ
        lock = env.get(ENV_LOCK_TIMEOUT_S) or DEFAULT_LOCK_TIMEOUT_S
        statement = env.get(ENV_STATEMENT_TIMEOUT_S) or DEFAULT_STATEMENT_TIMEOUT_S
        return cls(
            lock_s=_seconds(lock, ENV_LOCK_TIMEOUT_S),
            statement_s=_seconds(statement, ENV_STATEMENT_TIMEOUT_S),
        )

    def settings(self) -> dict[str, str]:
        """The Postgres settings as ``set_config`` values (milliseconds; ``0ms`` = off)."""
        return {
            "lock_timeout": f"{round(self.lock_s * 1000)}ms",
            "statement_timeout": f"{round(self.statement_s * 1000)}ms",
        }
