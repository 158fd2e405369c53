"""Engine factory: URL normalisation, env resolution, password-free retryable errors, embedded Postgres."""

from __future__ import annotations

import traceback

import pytest

from fairmon.errors import StoreError
from fairmon.store import engine as eng_mod
from fairmon.store.engine import describe_url, get_engine, normalize_url

SECRET = "s3cr3t-Pa55word"


@pytest.mark.parametrize(
    "url",
    [
        "postgres://u:pw@db:5432/fm",
        "postgresql://u:pw@db:5432/fm",
        "postgresql+psycopg2://u:pw@db:5432/fm",
    ],
)
def test_normalize_url_pins_psycopg2(url: str) -> None:
    u = normalize_url(url)
    assert u.drivername == "postgresql+psycopg2"
    assert (u.host, u.port, u.database, u.username) == ("db", 5432, "fm", "u")


def test_normalize_url_refuses_other_backends() -> None:
    with pytest.raises(StoreError, match="unsupported backend 'sqlite'") as ei:
        normalize_url("sqlite:///x.db")
    assert ei.value.retryable is False


def test_describe_url_never_shows_password() -> None:
    text = describe_url(f"postgresql://fm:{SECRET}@db.example:5433/fairmon")
    assert text == "db.example:5433/fairmon (user fm)"
    assert SECRET not in text


def test_connection_error_names_host_not_password() -> None:
    # port 1 on localhost: connection refused, immediately
    url = f"postgresql://fairmon:{SECRET}@127.0.0.1:1/fairmon_db"
    with pytest.raises(StoreError) as ei:
        get_engine(url)
    err = ei.value
    assert err.retryable is True
    msg = str(err)
    assert msg.startswith(eng_mod.ERR_CONNECT.split("{")[0])
    assert "127.0.0.1:1/fairmon_db" in msg
    rendered = "".join(traceback.format_exception(err)) + repr(err)
    assert SECRET not in rendered


def test_bad_url_error_masks_password() -> None:
    with pytest.raises(StoreError) as ei:
        normalize_url(f"postgresql://u:{SECRET}@host:notaport/db")
    assert SECRET not in str(ei.value)


@pytest.mark.postgres
def test_env_url_is_used(fresh_database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlalchemy as sa

    monkeypatch.setenv(
        eng_mod.ENV_DATABASE_URL, fresh_database_url.replace("postgresql+psycopg2://", "postgres://")
    )
    engine = get_engine()
    with engine.connect() as conn:
        assert (
            conn.execute(sa.text("SELECT current_database()")).scalar()
            == sa.make_url(fresh_database_url).database
        )
        assert conn.execute(sa.text("SHOW timezone")).scalar() == "UTC"
    engine.dispose()


@pytest.mark.postgres
def test_embedded_pgserver_migrates_and_stores(embedded_home, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """No URL at all → embedded PostgreSQL under FAIRMON_HOME; the same migrations and writes work."""
    from store_seed import window

    from fairmon.store import Store, current_version, head_version, require_head, upgrade

    monkeypatch.delenv(eng_mod.ENV_DATABASE_URL, raising=False)
    monkeypatch.setenv(eng_mod.ENV_HOME, str(embedded_home))
    engine = get_engine()
    try:
        assert str(embedded_home / "pgdata") in str(engine.url.query.get("host"))
        assert upgrade(engine) == list(range(1, head_version() + 1))
        assert upgrade(engine) == []
        assert require_head(engine) == current_version(engine) == head_version()
        store = Store(engine)
        run_id = store.write_window(window("embedded", 0))
        assert [m.metric for m in store.metrics_of_run(run_id)][:1] == ["dp_difference"]
    finally:
        assert eng_mod.stop_embedded(embedded_home / "pgdata") is True


@pytest.mark.postgres
def test_sql_errors_are_classified(fresh_database_url: str) -> None:
    """A bad statement is a non-retryable StoreError; a statement timeout (57014) is retryable."""
    import sqlalchemy as sa

    engine = get_engine(fresh_database_url)
    with pytest.raises(StoreError, match="database error on 127.0.0.1:5432/") as ei:
        with eng_mod.translate_errors(engine), engine.connect() as conn:
            conn.execute(sa.text("SELECT * FROM no_such_table"))
    assert ei.value.retryable is False
    with pytest.raises(StoreError, match="statement timeout") as ei:
        with eng_mod.translate_errors(engine), engine.connect() as conn:
            conn.execute(sa.text("SET statement_timeout = 50"))
            conn.execute(sa.text("SELECT pg_sleep(2)"))
    assert ei.value.retryable is True
    engine.dispose()
