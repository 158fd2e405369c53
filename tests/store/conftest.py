"""Store fixtures: a migrated throw-away database and a Store on it, plus small record builders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def engine(fresh_database_url: str) -> Iterator[object]:
    from fairmon.store import get_engine, upgrade

    eng = get_engine(fresh_database_url)
    upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def store(engine):  # type: ignore[no-untyped-def]
    from fairmon.store import Store

    return Store(engine)
