"""The late-data trigger: ready once the partition exists, not ready at the deadline (no Airflow DB)."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

from fairmon_airflow.sensor import DataReadyTrigger


def _first_event(trigger: DataReadyTrigger) -> dict:
    async def first() -> dict:
        async for event in trigger.run():
            return dict(event.payload)
        raise AssertionError("no event")

    return asyncio.run(asyncio.wait_for(first(), timeout=10))


def test_fires_ready_when_the_partition_lands(tmp_path: Path) -> None:
    part = tmp_path / "2026-01-03.csv"
    deadline = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)).isoformat()

    async def land() -> None:
        await asyncio.sleep(0.3)
        part.write_text("a\n1\n")

    async def both() -> dict:
        t = DataReadyTrigger(str(part), deadline, 0.1)
        lander = asyncio.create_task(land())
        async for event in t.run():
            await lander
            return dict(event.payload)
        raise AssertionError("no event")

    assert asyncio.run(asyncio.wait_for(both(), timeout=10)) == {"ready": True, "path": str(part)}


def test_fires_not_ready_at_the_deadline_and_round_trips(tmp_path: Path) -> None:
    deadline = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=0.3)).isoformat()
    t = DataReadyTrigger(str(tmp_path / "never.csv"), deadline, 0.1)
    path, kwargs = t.serialize()
    assert path == "fairmon_airflow.sensor.DataReadyTrigger" and DataReadyTrigger(**kwargs).deadline == deadline
    assert _first_event(t) == {"ready": False, "path": str(tmp_path / "never.csv")}
