"""The Core table definitions match the schema the SQL migrations build (names, types, NULLs, keys)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from fairmon.store._tables import metadata

pytestmark = pytest.mark.postgres

_DIALECT = postgresql.dialect()


def _type(t: sa.types.TypeEngine[object]) -> str:
    return t.compile(dialect=_DIALECT)


def test_every_table_is_declared(engine) -> None:  # type: ignore[no-untyped-def]
    in_db = set(sa.inspect(engine).get_table_names()) - {"schema_migrations"}
    assert in_db == set(metadata.tables)


@pytest.mark.parametrize("name", sorted(metadata.tables))
def test_columns_match_the_migrated_database(engine, name: str) -> None:  # type: ignore[no-untyped-def]
    inspector = sa.inspect(engine)
    table = metadata.tables[name]
    reflected = [(c["name"], _type(c["type"]), c["nullable"]) for c in inspector.get_columns(name)]
    declared = [(c.name, _type(c.type), c.nullable) for c in table.columns]
    assert declared == reflected
    assert [c.name for c in table.primary_key] == inspector.get_pk_constraint(name)["constrained_columns"]
