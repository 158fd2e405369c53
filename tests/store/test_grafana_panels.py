"""The provisioned Grafana dashboard: every panel's SQL and every variable query run on a seeded store.

Grafana's macros are expanded the way its PostgreSQL datasource does (``$__timeFilter(col)`` becomes a
``BETWEEN`` on the dashboard's time range; ``$name`` is the variable's value), so a panel that breaks
against the schema or the views fails here, not on a team's dashboard.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from store_seed import seeded_database
from test_views_queries import seed

from fairmon.store import Store

pytestmark = pytest.mark.postgres

GRAFANA = Path(__file__).resolve().parents[2] / "docker" / "grafana"
DASHBOARD = json.loads((GRAFANA / "dashboards" / "fairmon.json").read_text())
TIME_FILTER = re.compile(r"\$__timeFilter\(([^)]+)\)")


def expand(sql: str, **variables: str) -> str:
    """Grafana's macro and variable expansion for a 180-day range ending tomorrow."""
    sql = TIME_FILTER.sub(r"\1 BETWEEN now() - interval '180 days' AND now() + interval '1 day'", sql)
    for name, value in variables.items():
        sql = sql.replace(f"${name}", value)
    assert "$" not in sql.replace("$__", ""), f"unexpanded variable in {sql}"
    return sql


def rows(store: Store, sql: str) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.text(sql.replace(":", r"\:"))).mappings()]


@pytest.fixture(scope="module")
def seeded(pg_admin_url: str) -> Iterator[Store]:
    with seeded_database(pg_admin_url, seed) as store:
        yield store


def panel(title_start: str) -> dict[str, Any]:
    (p,) = [p for p in DASHBOARD["panels"] if p["title"].startswith(title_start)]
    return p


def panel_sql(title_start: str) -> str:
    return str(panel(title_start)["targets"][0]["rawSql"])


VARS = {"monitor": "demo", "metric": "dp_difference", "attribute": "sex"}


def test_provisioning_points_every_panel_at_the_store_datasource() -> None:
    ds = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "fairmon.yaml").read_text())["datasources"][0]
    assert ds["type"] == "grafana-postgresql-datasource" and ds["jsonData"]["database"] == "fairmon"
    assert ds["secureJsonData"]["password"] == "${GRAFANA_DB_PASSWORD}"  # from the environment, never literal
    prov = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "fairmon.yaml").read_text())
    assert prov["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    for p in DASHBOARD["panels"]:
        assert p["datasource"]["uid"] == ds["uid"], p["title"]
        assert p["targets"][0]["rawSql"].strip(), p["title"]
    titles = " | ".join(p["title"] for p in DASHBOARD["panels"])
    for needed in ("confidence interval", "Drift events", "RUMIE", "GESD", "Alert history", "Pipeline health"):
        assert needed in titles


def test_variable_queries_list_the_seeded_values(seeded: Store) -> None:
    values = {v["name"]: [next(iter(r.values())) for r in rows(seeded, v["query"])]
              for v in DASHBOARD["templating"]["list"]}
    assert values["monitor"] == ["demo", "other", "stale"]
    # attribute-level metrics only: per-group rates (selection_rate, tpr, ...) have no group_key '' series,
    # and choosing one left the outcome panel empty
    assert "dp_difference" in values["metric"] and "selection_rate" not in values["metric"]
    assert values["attribute"] == ["race", "sex"]


def test_outcome_panel_has_the_series_with_its_ci(seeded: Store) -> None:
    got = rows(seeded, expand(panel_sql("Outcome metric"), **VARS))
    assert len(got) == 100  # the seeded demo series: one window a day for 100 days
    assert all(r["ci_low"] < r["value"] < r["ci_high"] for r in got)
    assert [r["time"] for r in got] == sorted(r["time"] for r in got)


def test_drift_rumie_gesd_alert_panels_return_the_seeded_rows(seeded: Store) -> None:
    drift = rows(seeded, expand(panel_sql("Drift events"), **VARS))
    assert {r["status"] for r in drift} == {"open", "ongoing"}  # resolved findings are not events
    rumie = rows(seeded, expand(panel_sql("RUMIE discriminated group"), **VARS))
    assert len(rumie) == 100 and all(r["honest_dscore"] == pytest.approx(0.15) for r in rumie)
    rules = rows(seeded, expand(panel_sql("RUMIE rules"), **VARS))
    assert sum(bool(r["is_new_group"]) for r in rules) == 1
    assert rules[0]["rules_text"] == "sex = Female AND race = Black"
    gesd = rows(seeded, expand(panel_sql("GESD"), **VARS))
    assert len(gesd) == 100 and all(r["gesd"] == pytest.approx(0.03) for r in gesd)
    alerts = rows(seeded, expand(panel_sql("Alert history"), **VARS))
    assert [(r["state"], r["headline"]) for r in alerts] == [("sent", "DP difference 0.14 for sex")]
    fleet = rows(seeded, panel_sql("Latest DP difference"))
    assert {r["monitor"] for r in fleet} == {"demo", "other"}


def test_pipeline_health_panel_shows_invalid_and_stale_windows(seeded: Store) -> None:
    other = rows(seeded, expand(panel_sql("Pipeline health"), **{**VARS, "monitor": "other"}))
    assert [r["status"] for r in other] == ["data_invalid"] and "not_be_null" in other[0]["error"]
    stale = rows(seeded, expand(panel_sql("Pipeline health"), **{**VARS, "monitor": "stale"}))
    # the window running right now is not listed; stored windows that stopped or left FEU unfinished are
    assert [r["status"] for r in stale] == ["running (stale)", "succeeded (alerts sent; feu unfinished)",
                                            "succeeded (stopped before alert)", "failed"]
    assert stale[-1]["error"] == "drift: StoreError: connection lost"  # a failed run shows its own error
    assert rows(seeded, expand(panel_sql("Pipeline health"), **VARS)) == []
