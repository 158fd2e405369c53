"""``wait_for_data``: a deferrable sensor before ``pull_data`` for late data (issue 20).

The task asks the library where the window's data appears (:func:`fairmon.pipeline.late.data_location`)
or, for a SQL source, whether it is there (:func:`fairmon.pipeline.late.data_ready`:
``data.sql.ready_query``, else rows at or after the window's end). Ready: it returns at once. Not yet:
it *defers* to :class:`DataReadyTrigger` in the triggerer (no worker slot is held while waiting), which checks every ``data.poke_interval_s`` until the data is
there or ``data.max_lateness_s`` has passed since the wait began (for a scheduled run, that is the
window's end). Never ready: the window is stored as ``skipped`` with the reason
(:func:`fairmon.pipeline.late.skip_window`) and the task raises ``AirflowSkipException``, so
``pull_data`` and every later task are skipped and the run is not a failure.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowSkipException
from airflow.triggers.base import BaseTrigger, TriggerEvent

from fairmon.config import load_spec
from fairmon.window import Window
from fairmon_airflow.connections import asource_url, db_url, source_url
from fairmon_airflow.context import resolved_window, try_number

__all__ = ["DataReadyTrigger", "WaitForData", "SENSOR_TASK_ID"]

SENSOR_TASK_ID = "wait_for_data"


class DataReadyTrigger(BaseTrigger):
    """Fires ``{"ready": true}`` once the data is there, ``{"ready": false}`` at ``deadline`` (ISO).

    A files source: ``path`` (the partition) exists. A SQL source (``spec_path`` and the window's ISO
    ``start``/``end`` given; ``path`` is then what is awaited, in words): the library's readiness check
    (:func:`fairmon.pipeline.late.data_ready`) on the spec's source connection. A check that fails with
    a retryable error (a statement timeout, a lost connection) is tried again at the next poke; any
    other failure fires ``{"ready": false, "error": ...}`` and the task fails with it.
    """

    def __init__(self, path: str, deadline: str, poke_interval_s: float, spec_path: str = "", start: str = "",
                 end: str = "") -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.path, self.deadline, self.poke_interval_s = path, deadline, float(poke_interval_s)
        self.spec_path, self.start, self.end = spec_path, start, end

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{__name__}.DataReadyTrigger",
                {"path": self.path, "deadline": self.deadline, "poke_interval_s": self.poke_interval_s,
                 "spec_path": self.spec_path, "start": self.start, "end": self.end})

    def _ready(self, url: str | None) -> bool:
        if not self.spec_path:
            from fairmon.readiness import file_exists  # in the triggerer only: it loads pandas

            return file_exists(self.path)
        return _sql_ready(self.spec_path, self.start, self.end, url)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from fairmon.errors import FairmonError

        deadline = dt.datetime.fromisoformat(self.deadline)
        # the source's connection is looked up here, on the event loop with the SDK's async lookup; the
        # checks themselves (blocking SQL) run in a thread
        url = await asource_url(self.spec_path) if self.spec_path else None
        while True:
            try:
                if await asyncio.to_thread(self._ready, url):
                    yield TriggerEvent({"ready": True, "path": self.path})  # type: ignore[no-untyped-call]
                    return
            except FairmonError as exc:
                if not getattr(exc, "retryable", False):
                    yield TriggerEvent({"ready": False, "path": self.path, "error": str(exc)})  # type: ignore[no-untyped-call]
                    return
                self.log.warning("fairmon: readiness check failed, trying again: %s", exc)
            left = (deadline - dt.datetime.now(dt.UTC)).total_seconds()
            if left <= 0:
                yield TriggerEvent({"ready": False, "path": self.path})  # type: ignore[no-untyped-call]
                return
            await asyncio.sleep(min(self.poke_interval_s, left))


def _sql_ready(spec_path: str, start: str, end: str, url: str | None) -> bool:
    """The library's readiness check of a SQL source's window on ``url`` (None: ``data.sql.url_env``)."""
    from fairmon.pipeline.late import data_ready  # in the task / triggerer only (pandas)

    spec = load_spec(spec_path)
    window = Window.from_dict({"monitor": spec.name, "start": start, "end": end})
    return data_ready(spec, window, engine=url)


class WaitForData(BaseOperator):
    """The sensor task of one monitor (``spec_path``), reading the window from ``resolve_window``."""

    def __init__(self, *, spec_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec_path = spec_path

    def _window(self, context: Any) -> tuple[Any, Window, dict[str, Any]]:
        spec = load_spec(self.spec_path)
        raw = resolved_window(context)
        return spec, Window.from_dict({"monitor": spec.name, **raw}), raw

    def execute(self, context: Any) -> dict[str, Any]:
        # in the task only (parse time stays light): fairmon.pipeline.late loads pandas
        from fairmon.pipeline.late import awaited, data_location
        from fairmon.readiness import file_exists

        spec, window, _ = self._window(context)
        where = data_location(spec, window)
        sql = spec.data.sql is not None
        if spec.data.max_lateness_s == 0:
            return {"ready": True, "path": where, "waited_s": 0.0}
        start, end = window.start.isoformat(), window.end.isoformat()
        if (_sql_ready(self.spec_path, start, end, source_url(self.spec_path)) if sql else where is None or file_exists(where)):
            return {"ready": True, "path": where, "waited_s": 0.0}
        what = awaited(spec, window) if sql else str(where)
        began = dt.datetime.now(dt.UTC)
        deadline = max(began, window.end) + dt.timedelta(seconds=spec.data.max_lateness_s)
        self.log.info("fairmon: %s not there yet; waiting until %s (data.max_lateness_s=%d)",
                      what, deadline.isoformat(), spec.data.max_lateness_s)
        trigger = (DataReadyTrigger(what, deadline.isoformat(), spec.data.poke_interval_s, self.spec_path, start, end)
                   if sql else DataReadyTrigger(what, deadline.isoformat(), spec.data.poke_interval_s))
        self.defer(trigger=trigger, method_name="execute_complete", kwargs={"began": began.isoformat()})
        raise AssertionError("unreachable: defer() raises")  # pragma: no cover

    def execute_complete(self, context: Any, event: dict[str, Any] | None = None, began: str = "") -> dict[str, Any]:
        waited = (dt.datetime.now(dt.UTC) - dt.datetime.fromisoformat(began)).total_seconds() if began else 0.0
        if event is not None and event.get("ready"):
            return {"ready": True, "path": event.get("path"), "waited_s": round(waited, 1)}
        if event is not None and event.get("error"):  # a readiness query that cannot run: a failure, not late data
            from fairmon.errors import DatasetError

            raise DatasetError(str(event["error"]))
        from fairmon.pipeline.late import skip_reason, skip_window  # in the task only (pandas)

        spec, window, raw = self._window(context)
        reason = skip_reason(spec, window, waited_s=waited)
        run_id = skip_window(spec, raw, reason, db_url=db_url(), attempt=try_number(context))
        self.log.warning("fairmon: window %s skipped (run %s): %s", window.key, run_id, reason)
        raise AirflowSkipException(reason)
