"""How a window's steps map onto scheduler tasks: one task per step, or the heavy ones together (warm).

A leaf module (standard library and the step table only), read at DAG parse time. A *layout* turns
the step table :data:`~fairmon.pipeline.table.STEPS` into task rows: each row names the steps one
task runs in one process, in order, and the rows it waits for. ``steps`` is one task per step.
``warm`` merges each group of :data:`WARM_GROUPS` into one task placed where its first step was, so
the model, the window's encodings, torch and the explainers load once per window instead of once per
step; validation, persist, drift and the notify steps stay tasks of their own (their failure
semantics and retries are separate: a data alert, the stored results, the Slack outbox).

Why these groups (measured, ``benchmarks/fleet``): every task costs Airflow's runner and supervisor
about 0.2-0.3 CPU-s even when forked from a preloaded worker, and a fresh process pays for its
imports and for loading the model and the window again; predict, outcome, RUMIE and explain read the
same model and data, the diagnosis re-uses the explainers right before the report is written, and
the snapshot pull (0.08 CPU-s of work) goes with the data pull after the late-data sensor.

Examples
--------
>>> [r.name for r in task_rows("warm")]  # doctest: +NORMALIZE_WHITESPACE
['resolve_window', 'pull', 'validate', 'compute', 'persist', 'drift', 'diagnose_report', 'alert',
 'feu', 'followup']
>>> compute = task_row("warm", "compute")
>>> compute.steps, compute.upstream, compute.heavy
(('predict', 'outcome', 'rumie', 'explain'), ('validate',), True)
>>> task_row("warm", "persist").upstream
('compute',)
>>> len(task_rows("steps")) == len(STEPS)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from fairmon.pipeline.table import STEPS, Group, step

__all__ = ["Layout", "LAYOUTS", "TaskRow", "WARM_GROUPS", "task_rows", "task_row", "task_of_step",
           "ERR_UNKNOWN_LAYOUT"]

Layout = Literal["steps", "warm"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
ERR_UNKNOWN_LAYOUT = "unknown execution layout {layout!r}; layouts: {known}"
ERR_UNKNOWN_TASK = "layout {layout!r} has no task {name!r}; its tasks: {known}"

#: the warm layout's merged tasks: task name -> the steps it runs in one process, in table order
WARM_GROUPS: dict[str, tuple[str, ...]] = {
    "pull": ("pull_snapshot", "pull_data"),
    "compute": ("predict", "outcome", "rumie", "explain"),
    "diagnose_report": ("diagnose", "report"),
}


@dataclass(frozen=True)
class TaskRow:
    """One task of a layout: the ``steps`` it runs in order, the tasks whose data it reads.

    ``heavy``: any of its steps is heavy (the spec's queue and pool, the longer timeout);
    ``group``: the task group its steps share (None when they differ or have none).
    """

    name: str
    steps: tuple[str, ...]
    upstream: tuple[str, ...]
    heavy: bool
    group: Group


def _groups(layout: str) -> dict[str, tuple[str, ...]]:
    if layout not in LAYOUTS:
        raise ValueError(ERR_UNKNOWN_LAYOUT.format(layout=layout, known=", ".join(LAYOUTS)))
    return WARM_GROUPS if layout == "warm" else {}


def task_of_step(layout: str) -> dict[str, str]:
    """Step name -> the name of the task that runs it under ``layout``.

    Examples
    --------
    >>> task_of_step("warm")["rumie"], task_of_step("steps")["rumie"]
    ('compute', 'rumie')
    """
    owner = {s.name: s.name for s in STEPS}
    for name, members in _groups(layout).items():
        owner.update(dict.fromkeys(members, name))
    return owner


def task_rows(layout: str) -> tuple[TaskRow, ...]:
    """The tasks of ``layout`` in a topological order (the step table's order of their first steps).

    Raises
    ------
    ValueError
        For an unknown layout (the message lists the layouts).
    """
    owner = task_of_step(layout)
    members: dict[str, list[str]] = {}
    for s in STEPS:
        members.setdefault(owner[s.name], []).append(s.name)
    rows = []
    for name, steps in members.items():
        ups = dict.fromkeys(owner[u] for m in steps for u in step(m).upstream)
        ups.pop(name, None)  # an edge between two steps of one task is the order inside it
        groups = {step(m).group for m in steps}
        rows.append(TaskRow(name=name, steps=tuple(steps), upstream=tuple(ups),
                            heavy=any(step(m).heavy for m in steps),
                            group=groups.pop() if len(groups) == 1 else None))
    return tuple(rows)


def task_row(layout: str, name: str) -> TaskRow:
    """The task ``name`` of ``layout``.

    Raises
    ------
    KeyError
        For a name that is not a task of the layout (the message lists them).

    Examples
    --------
    >>> task_row("steps", "rumie").steps
    ('rumie',)
    """
    rows = {r.name: r for r in task_rows(layout)}
    try:
        return rows[name]
    except KeyError:
        raise KeyError(ERR_UNKNOWN_TASK.format(layout=layout, name=name, known=", ".join(rows))) from None
