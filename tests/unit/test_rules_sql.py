"""Rules as SQL: the predicate selects exactly the rows the rule selects in pandas (real Postgres).

A property test over random rule sets on a table with integer, float and text columns holding NULLs
(and hostile category names): ``SELECT id FROM t WHERE <predicate>`` must equal
``RuleSet.membership`` row for row.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairmon.rules import Condition, RuleSet
from fairmon.rules_sql import quote_identifier, to_sql_predicate

pytestmark = pytest.mark.postgres

CATS = ["north", "south", "o'hara", 'say "hi"', "1"]
N = 60
rng = np.random.default_rng(7)
FRAME = pd.DataFrame(
    {
        "id": np.arange(N),
        "age": pd.array(rng.integers(18, 70, N), dtype="Int64"),
        "score": rng.normal(0.0, 1.0, N).round(2),
        "weird col": pd.array(rng.integers(0, 3, N), dtype="Int64"),
        "region": rng.choice(CATS, N).astype(object),
    }
)
FRAME.loc[[3, 7, 11], "age"] = pd.NA
FRAME.loc[[4, 9], "score"] = np.nan
FRAME.loc[[5, 8, 13], "region"] = None
NUMERIC = {"age", "score", "weird col"}


@pytest.fixture(scope="module")
def table(pg_admin_url: str) -> Iterator[sa.Engine]:
    import uuid

    name = f"fairmon_t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine = sa.create_engine(sa.make_url(pg_admin_url).set(database=name))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text('CREATE TABLE t (id int, age bigint, score double precision, "weird col" bigint, '
                                 'region text)'))
            rows = [{k: (None if pd.isna(v) else v) for k, v in r.items()}
                    for r in FRAME.astype(object).to_dict("records")]
            conn.execute(sa.text('INSERT INTO t VALUES (:id, :age, :score, :wc, :region)'),
                         [{"id": r["id"], "age": r["age"], "score": r["score"], "wc": r["weird col"],
                           "region": r["region"]} for r in rows])
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


numbers = st.sampled_from([-1.5, 0, 0.25, 1, 2, 18, 30, 45.5, 69, 100])
numeric_cond = st.builds(
    lambda col, op, v: Condition(col, op, v),
    st.sampled_from(sorted(NUMERIC)), st.sampled_from(["<=", ">", "<", ">=", "=", "!="]), numbers,
)
interval_cond = st.builds(
    lambda col, a, b: Condition(col, "in (a, b]", (min(a, b), max(a, b))),
    st.sampled_from(sorted(NUMERIC)), numbers, numbers,
)
category_cond = st.one_of(
    st.builds(lambda op, v: Condition("region", op, v), st.sampled_from(["=", "!="]),
              st.sampled_from([*CATS, "<NA>", "west"])),
    st.builds(lambda op, vs: Condition("region", op, tuple(vs)), st.sampled_from(["in", "not in"]),
              st.lists(st.sampled_from([*CATS, "<NA>"]), min_size=1, max_size=3, unique=True)),
)
rule_sets = st.lists(
    st.lists(st.one_of(numeric_cond, interval_cond, category_cond), min_size=0, max_size=3).map(tuple),
    min_size=0, max_size=3,
).map(lambda rules: RuleSet(tuple(rules)))


def _sql_members(engine: sa.Engine, predicate: str) -> np.ndarray:
    with engine.connect() as conn:
        ids = {r[0] for r in conn.execute(sa.text(f"SELECT id FROM t WHERE {predicate}".replace(":", r"\:")))}
    return np.array([i in ids for i in range(N)])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=rule_sets)
def test_sql_predicate_selects_the_pandas_rows(table: sa.Engine, rules: RuleSet) -> None:
    expected = rules.membership(FRAME)
    got = _sql_members(table, to_sql_predicate(rules, numeric_columns=NUMERIC))
    np.testing.assert_array_equal(got, expected, err_msg=rules.text)


def test_identifiers_and_literals_cannot_break_out() -> None:
    assert quote_identifier('x"; DROP TABLE t; --') == '"x""; DROP TABLE t; --"'
    sql = to_sql_predicate(RuleSet(((Condition("region", "=", "a'; DROP TABLE t; --"),),)), numeric_columns=())
    assert sql == "(\"region\" = 'a''; DROP TABLE t; --')"


def test_every_single_condition_selects_the_pandas_rows(table: sa.Engine) -> None:
    """Each operator alone, on every column and value (conjunctions above can mask a wrong NULL rule)."""
    values = [-1.5, 0, 0.25, 1, 2, 18, 30, 45.5, 69, 100]
    conds = [Condition(col, op, v) for col in sorted(NUMERIC) for op in ("<=", ">", "<", ">=", "=", "!=")
             for v in values]
    conds += [Condition(col, "in (a, b]", (a, b)) for col in sorted(NUMERIC) for a, b in [(0, 1), (18, 45.5)]]
    conds += [Condition("region", op, v) for op in ("=", "!=") for v in [*CATS, "<NA>", "west"]]
    conds += [Condition("region", op, vs) for op in ("in", "not in")
              for vs in [("north",), ("north", "<NA>"), ("<NA>",), ("o'hara", "1")]]
    for cond in conds:
        rules = RuleSet(((cond,),))
        got = _sql_members(table, to_sql_predicate(rules, numeric_columns=NUMERIC))
        np.testing.assert_array_equal(got, rules.membership(FRAME), err_msg=cond.text)
