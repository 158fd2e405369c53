"""A seeded store (monitor ``credit``, 5 windows) and its rendered reports, shared by the report tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def seeded_db(pg_admin_url: str) -> Iterator[str]:
    """A throw-away database at the migration head holding :mod:`report_seed`'s windows."""
    import report_seed
    import sqlalchemy as sa

    from fairmon.store import Store, get_engine, upgrade

    name = f"fairmon_rep_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
    engine = get_engine(url)
    try:
        upgrade(engine)
        report_seed.seed(Store(engine))
        engine.dispose()
        yield url
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def store(seeded_db: str) -> Iterator[Any]:
    from fairmon.store import Store, get_engine

    engine = get_engine(seeded_db)
    yield Store(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def reports(store: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """Every window's report written once (the slow part: ~1 s of matplotlib per report)."""
    import report_seed

    from fairmon.report import rebuild_reports

    location = tmp_path_factory.mktemp("reports")
    written = rebuild_reports(store, report_seed.MONITOR, location=str(location))
    return location, written
