"""Shared fixtures: dataset location, a throw-away database on the machine's Postgres, a benchmark's module.

Markers (see pyproject): ``slow``, ``postgres``, ``airflow``, ``gpu``, ``datasets``. The fast set is
``pytest -m "not slow and not airflow"``.
"""

from __future__ import annotations

import importlib.util
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO.parent / "shared" / "datasets"
#: admin URL of the machine's PostgreSQL server (trust auth); tests create their own databases
PG_ADMIN_URL = os.environ.get("FAIRMON_TEST_PG_ADMIN_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """Real datasets (``FAIRMON_DATA_DIR``, default ``../shared/datasets``); CI must have them."""
    path = Path(os.environ.get("FAIRMON_DATA_DIR", DEFAULT_DATA_DIR))
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"datasets not found at {path}; set FAIRMON_DATA_DIR")
        pytest.skip(f"datasets not found at {path}")
    return path


def _admin_engine():  # type: ignore[no-untyped-def]
    import sqlalchemy as sa

    return sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    import sqlalchemy as sa

    try:
        with _admin_engine().connect() as conn:
            conn.execute(sa.text("select 1"))
    except Exception as exc:  # noqa: BLE001 - turn into a clear failure
        pytest.fail(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {exc}")
    return PG_ADMIN_URL


@pytest.fixture
def fresh_database_url(pg_admin_url: str) -> Iterator[str]:
    """An empty database on the machine's Postgres, dropped after the test."""
    import sqlalchemy as sa

    name = f"fairmon_t_{uuid.uuid4().hex[:12]}"
    eng = _admin_engine()
    with eng.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with eng.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        eng.dispose()


@pytest.fixture(scope="module")
def embedded_home() -> Iterator[Path]:
    """A FAIRMON_HOME for the embedded PostgreSQL, outside pytest's temp root.

    Why: pgserver runs PostgreSQL as its own user when tests run as root, so every parent of the data
    directory must be traversable; pytest resets ``/tmp/pytest-of-<user>`` to mode 0700 whenever any
    pytest session starts, which broke a running embedded server's ``initdb`` mid-session.
    """
    import shutil
    import tempfile

    from fairmon.store.engine import stop_embedded

    home = Path(tempfile.mkdtemp(prefix="fairmon-test-home-"))
    home.chmod(0o755)
    try:
        yield home
    finally:
        stop_embedded(home / "pgdata")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def benchmark_module() -> Callable[[str], ModuleType]:
    """Import ``benchmarks/<name>/run.py`` as a module (the benchmarks' smoke tests call its ``main``)."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"bench_{name}_run", REPO / "benchmarks" / name / "run.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
