"""What a task reads from its Airflow context: the window, the notify / feu params, the try number.

Pure functions of the context mapping (duck-typed: ``dag_run``, ``ti`` and ``params`` are read by
attribute or key only), so they are tested without an Airflow database.

Windows: a scheduled run computes its data interval. Airflow 3 gives a manually triggered run the
interval before the trigger time, so a run triggered with ``conf={"logical_date": "2026-01-03"}``
computes the window starting at that date, what ``fairmon run --logical-date 2026-01-03`` computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["window_of", "resolved_window", "RESOLVE_TASK_ID", "window_text", "notify_of", "feu_requested", "try_number", "is_backfill"]

_BACKFILL = "backfill"
#: the task whose XCom is the resolved window (the first row of the step table)
RESOLVE_TASK_ID = "resolve_window"


def _conf(context: Mapping[str, Any]) -> Mapping[str, Any]:
    conf = getattr(context.get("dag_run"), "conf", None)
    return conf if isinstance(conf, Mapping) else {}


def _params(context: Mapping[str, Any]) -> Mapping[str, Any]:
    params = context.get("params")
    return params if isinstance(params, Mapping) else {}


def window_of(context: Mapping[str, Any]) -> dict[str, str]:
    """The run's window for :func:`fairmon.pipeline.run_step`: conf ``logical_date``, else the interval.

    Never ``now()``: a scheduled run, a backfill and a retry of either compute the same window.

    Examples
    --------
    >>> import datetime as dt
    >>> start, end = dt.datetime(2026, 1, 3, tzinfo=dt.UTC), dt.datetime(2026, 1, 4, tzinfo=dt.UTC)
    >>> window_of({"data_interval_start": start, "data_interval_end": end})
    {'data_interval_start': '2026-01-03T00:00:00+00:00', 'data_interval_end': '2026-01-04T00:00:00+00:00'}

    A chosen window (trigger conf) wins over the interval Airflow gave a manual run:

    >>> from types import SimpleNamespace as Run
    >>> window_of({"dag_run": Run(conf={"logical_date": "2026-01-03"}), "data_interval_start": start})
    {'logical_date': '2026-01-03'}
    """
    logical_date = _conf(context).get("logical_date")
    if logical_date:
        return {"logical_date": str(logical_date)}
    return {
        "data_interval_start": context["data_interval_start"].isoformat(),
        "data_interval_end": context["data_interval_end"].isoformat(),
    }


def resolved_window(context: Mapping[str, Any]) -> dict[str, Any]:
    """The resolve_window task's output (its XCom), read by every later task.

    Tasks take it from XCom rather than as an argument, so the graph has no edge from resolve_window
    to every task: edges are drawn only where data flows (issue 20).

    Examples
    --------
    >>> from types import SimpleNamespace as TI
    >>> resolved_window({"ti": TI(xcom_pull=lambda task_ids: {"task": task_ids})})
    {'task': 'resolve_window'}
    """
    window = context["ti"].xcom_pull(task_ids=RESOLVE_TASK_ID)
    if not isinstance(window, Mapping):
        raise RuntimeError(f"no window in the XCom of {RESOLVE_TASK_ID!r} (got {type(window).__name__})")
    return dict(window)


def _resolved_or_none(context: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """resolve_window's XCom when the context can read it (a task's failure callback), else None."""
    ti = context.get("ti")
    if ti is None or not hasattr(ti, "xcom_pull"):
        return None
    try:
        window = ti.xcom_pull(task_ids=RESOLVE_TASK_ID)
    except Exception:  # noqa: BLE001 - a failure message must not fail on its window text
        return None
    return window if isinstance(window, Mapping) else None


def window_text(context: Mapping[str, Any]) -> str:
    """The window for humans (failure messages); ``?`` when the context carries none.

    Examples
    --------
    >>> window_text({"data_interval_start": "2026-01-03T00:00:00+00:00",
    ...              "data_interval_end": "2026-01-04T00:00:00+00:00"})
    '2026-01-03T00:00:00+00:00 → 2026-01-04T00:00:00+00:00'
    >>> window_text({})
    '?'

    A run triggered for a chosen day names the window resolve_window computed for it (its XCom), not
    only the date it was asked for:

    >>> from types import SimpleNamespace as Run, SimpleNamespace as TI
    >>> window = {"start": "2026-01-08T00:00:00+00:00", "end": "2026-01-09T00:00:00+00:00"}
    >>> window_text({"dag_run": Run(conf={"logical_date": "2026-01-08"}), "ti": TI(xcom_pull=lambda task_ids: window)})
    '2026-01-08T00:00:00+00:00 → 2026-01-09T00:00:00+00:00 (logical_date 2026-01-08)'
    """
    logical_date = _conf(context).get("logical_date")
    if logical_date:
        resolved = _resolved_or_none(context)
        if resolved is not None and resolved.get("start") and resolved.get("end"):
            return f"{resolved['start']} → {resolved['end']} (logical_date {logical_date})"
        return f"logical_date {logical_date}"
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if start is None or end is None:
        return "?"
    iso = [v.isoformat() if hasattr(v, "isoformat") else str(v) for v in (start, end)]
    return f"{iso[0]} → {iso[1]}"


def is_backfill(context: Mapping[str, Any]) -> bool:
    """Whether the run is an Airflow backfill (its run type names it).

    Examples
    --------
    >>> from types import SimpleNamespace as Run
    >>> is_backfill({"dag_run": Run(run_type="backfill")}), is_backfill({"dag_run": Run(run_type="manual")})
    (True, False)
    """
    run_type = str(getattr(context.get("dag_run"), "run_type", "") or "")
    return _BACKFILL in run_type.lower()


def notify_of(context: Mapping[str, Any]) -> bool:
    """Whether this run sends alerts: ``notify`` (default on); backfills only with ``notify_backfill``.

    Backfills store their findings either way.

    Examples
    --------
    >>> from types import SimpleNamespace as Run
    >>> notify_of({"params": {"notify": True, "notify_backfill": False}, "dag_run": Run(run_type="backfill")})
    False
    >>> notify_of({}), notify_of({"params": {"notify": False}})
    (True, False)
    """
    params = _params(context)
    if is_backfill(context):
        return bool(params.get("notify_backfill", False))
    return bool(params.get("notify", True))


def feu_requested(context: Mapping[str, Any]) -> bool:
    """The run's ``feu`` param (trigger conf ``{"feu": true}``): FEU candidates even without drift.

    Examples
    --------
    >>> feu_requested({"params": {"feu": True}}), feu_requested({})
    (True, False)
    """
    return bool(_params(context).get("feu", False))


def try_number(context: Mapping[str, Any]) -> int:
    """The task instance's try number (1 for the first try, also when the context has no ``ti``).

    Examples
    --------
    >>> from types import SimpleNamespace as TI
    >>> try_number({"ti": TI(try_number=3)}), try_number({})
    (3, 1)
    """
    return int(getattr(context.get("ti"), "try_number", 1) or 1)
