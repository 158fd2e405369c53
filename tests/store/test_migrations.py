"""Versioned SQL migrations: empty → head, no-op second upgrade, refusal when not at head, checksums,
rollback of a failing migration, concurrent upgrades."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from fairmon.errors import SchemaNotAtHeadError, StoreError
from fairmon.store import Store, current_version, get_engine, head_version, require_head, upgrade
from fairmon.store import migrations as mig

pytestmark = pytest.mark.postgres

TABLES = {
    "schema_migrations",
    "monitors",
    "runs",
    "metrics",
    "metric_latest",
    "evidence",
    "explanation_metrics",
    "findings",
    "feu_candidates",
    "feu_baselines",
    "alerts",
}
VIEWS = {"metric_series", "latest_metrics", "drift_events", "alert_history", "alert_history_findings",
         "rumie_rule_changes"}


def _copy_migrations(tmp_path: Path, upto: int | None = None) -> Path:
    d = tmp_path / "migrations"
    d.mkdir()
    for m in mig.discover():
        if upto is None or m.version <= upto:
            shutil.copy(m.path, d / m.path.name)
    return d


def test_files_are_numbered_and_contiguous() -> None:
    versions = [m.version for m in mig.discover()]
    assert versions == list(range(1, len(versions) + 1))
    assert head_version() == versions[-1] >= 5


def test_empty_to_head_then_noop(fresh_database_url: str) -> None:
    engine = get_engine(fresh_database_url)
    assert current_version(engine) == 0
    assert upgrade(engine) == list(range(1, head_version() + 1))
    assert current_version(engine) == head_version()
    with engine.connect() as conn:
        tables = set(
            conn.execute(sa.text("SELECT tablename FROM pg_tables WHERE schemaname='public'")).scalars()
        )
        views = set(
            conn.execute(sa.text("SELECT viewname FROM pg_views WHERE schemaname='public'")).scalars()
        )
        n_rows = conn.execute(sa.text("SELECT count(*) FROM schema_migrations")).scalar()
        applied_at = conn.execute(sa.text("SELECT max(applied_at) FROM schema_migrations")).scalar()
    assert TABLES <= tables and VIEWS <= views
    assert upgrade(engine) == []  # second upgrade: nothing applied, nothing changed
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM schema_migrations")).scalar() == n_rows
        assert conn.execute(sa.text("SELECT max(applied_at) FROM schema_migrations")).scalar() == applied_at
    assert require_head(engine) == head_version()


def test_refuses_empty_database(fresh_database_url: str) -> None:
    engine = get_engine(fresh_database_url)
    expected = mig.ERR_NOT_AT_HEAD.format(current=0, head=head_version())
    with pytest.raises(SchemaNotAtHeadError) as ei:
        Store(engine)
    assert str(ei.value) == expected
    assert "run `fairmon db upgrade`" in str(ei.value)
    assert ei.value.retryable is False
    with engine.connect() as conn:  # and it created nothing
        assert conn.execute(sa.text("SELECT count(*) FROM pg_tables WHERE schemaname='public'")).scalar() == 0


def test_refuses_database_behind_head(fresh_database_url: str, tmp_path: Path) -> None:
    engine = get_engine(fresh_database_url)
    assert upgrade(engine, directory=_copy_migrations(tmp_path, upto=2)) == [1, 2]
    with pytest.raises(SchemaNotAtHeadError, match=rf"database at version 2, code expects {head_version()}"):
        require_head(engine)
    assert upgrade(engine) == list(range(3, head_version() + 1))
    require_head(engine)


def test_changed_applied_migration_is_an_error(fresh_database_url: str, tmp_path: Path) -> None:
    engine = get_engine(fresh_database_url)
    d = _copy_migrations(tmp_path)
    upgrade(engine, directory=d)
    f = d / mig.discover()[0].path.name
    f.write_text(f.read_text() + "\n-- edited\n")
    with pytest.raises(StoreError, match="was changed after it was applied"):
        upgrade(engine, directory=d)
    with pytest.raises(StoreError, match="was changed after it was applied"):
        require_head(engine, directory=d)


def test_failing_migration_rolls_back(fresh_database_url: str, tmp_path: Path) -> None:
    engine = get_engine(fresh_database_url)
    d = _copy_migrations(tmp_path)
    head = head_version()
    (d / f"{head + 1:04d}_broken.sql").write_text("CREATE TABLE half_done (x int);\nSELECT 1/0;\n")
    with pytest.raises(StoreError) as ei:
        upgrade(engine, directory=d)
    assert str(ei.value).startswith(f"migration {head + 1:04d} (broken) failed and was rolled back")
    assert current_version(engine) == head  # the good ones stayed
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT to_regclass('public.half_done')")).scalar() is None


def test_bad_file_name_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "1_init.sql").write_text("SELECT 1;")
    with pytest.raises(StoreError, match=r"does not match NNNN_description\.sql"):
        mig.discover(d)


def test_concurrent_upgrades_are_serialised(fresh_database_url: str) -> None:
    engine = get_engine(fresh_database_url)
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def go() -> None:
        try:
            results.append(upgrade(engine))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(results, key=len) == [[], [], list(range(1, head_version() + 1))]
    require_head(engine)
