"""The one step table of a monitoring window: names, order, data dependencies, artifacts, queues.

A leaf module (standard library only): the step functions, the runner, the CLI and the Airflow DAG
factory all read the window's shape from here, so a new step is one row in :data:`STEPS`.

``upstream`` lists the steps whose *data* a step reads (every step also reads the resolved window,
so ``resolve_window`` is implied and not listed); the DAG factory draws exactly these edges, and
:data:`STEP_ORDER` is a topological order of them that the CLI runs in.

Examples
--------
>>> STEP_ORDER[0], STEP_ORDER[-1]
('resolve_window', 'followup')
>>> step("rumie").upstream, step("rumie").heavy, step("rumie").group
(('predict',), True, 'compute')
>>> sorted(HEAVY_STEPS)
['diagnose', 'explain', 'feu', 'predict', 'rumie']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Step",
    "STEPS",
    "STEP_ORDER",
    "HEAVY_STEPS",
    "AFTER_PERSIST",
    "step",
    "step_after",
    "A_SNAPSHOT",
    "A_DATA",
    "A_VALIDATION",
    "A_PREDICTIONS",
    "A_OUTCOME",
    "A_RUMIE",
    "A_EXPLAIN",
    "A_PERSIST",
    "A_DRIFT",
    "A_DIAGNOSE",
    "A_ALERT",
    "A_FEU",
    "A_FOLLOWUP",
    "A_REPORT",
    "ERR_UNKNOWN_STEP",
]

ERR_UNKNOWN_STEP = "unknown pipeline step {name!r}; the steps are: {known}"

# artifact names (one per step output; the step of the same name writes it)
A_SNAPSHOT = "snapshot"
A_DATA = "data"
A_VALIDATION = "validation"
A_PREDICTIONS = "predictions"
A_OUTCOME = "outcome"
A_RUMIE = "rumie"
A_EXPLAIN = "explain"
A_PERSIST = "persist"
A_DRIFT = "drift"
A_DIAGNOSE = "diagnose"
A_ALERT = "alert"
A_FEU = "feu"
A_FOLLOWUP = "followup"
A_REPORT = "report"

#: where a step sits in the DAG's task groups (None: top level)
Group = Literal["ingest", "compute", "notify"] | None


@dataclass(frozen=True)
class Step:
    """One row of the step table.

    ``heavy`` steps go to the spec's (GPU) queue and get the longer timeout; ``after_persist`` steps
    run once the window's results are stored, so their failure keeps those results.
    """

    name: str
    upstream: tuple[str, ...]
    heavy: bool = False
    after_persist: bool = False
    group: Group = None


#: the window's steps in execution order (a topological order of ``upstream``)
STEPS: tuple[Step, ...] = (
    Step("resolve_window", ()),
    Step("pull_snapshot", (), group="ingest"),
    Step("pull_data", ("pull_snapshot",), group="ingest"),
    Step("validate", ("pull_data",), group="ingest"),
    Step("predict", ("validate",), heavy=True),
    Step("outcome", ("predict",), group="compute"),
    Step("rumie", ("predict",), heavy=True, group="compute"),
    Step("explain", ("predict",), heavy=True, group="compute"),
    Step("persist", ("outcome", "rumie", "explain")),
    Step("drift", ("persist",), after_persist=True),
    # why disfavored (attribution gaps) and model or data (the fired metrics under the earlier version)
    Step("diagnose", ("drift",), heavy=True, after_persist=True),
    Step("report", ("diagnose",), after_persist=True),  # before the alert that links to it
    Step("alert", ("report",), after_persist=True, group="notify"),
    Step("feu", ("alert",), heavy=True, after_persist=True, group="notify"),
    Step("followup", ("feu",), after_persist=True, group="notify"),
)

STEP_ORDER: tuple[str, ...] = tuple(s.name for s in STEPS)
HEAVY_STEPS: frozenset[str] = frozenset(s.name for s in STEPS if s.heavy)
AFTER_PERSIST: frozenset[str] = frozenset(s.name for s in STEPS if s.after_persist)
_BY_NAME = {s.name: s for s in STEPS}


def step(name: str) -> Step:
    """The table row of step ``name``.

    Raises
    ------
    KeyError
        For a name that is not a step (the message lists the steps).

    Examples
    --------
    >>> step("persist").upstream
    ('outcome', 'rumie', 'explain')
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(ERR_UNKNOWN_STEP.format(name=name, known=", ".join(STEP_ORDER))) from None


def step_after(name: str) -> str | None:
    """The step that follows ``name`` in :data:`STEP_ORDER` (None after the last one).

    Examples
    --------
    >>> step_after("persist"), step_after("followup")
    ('drift', None)
    """
    i = STEP_ORDER.index(step(name).name)
    return STEP_ORDER[i + 1] if i + 1 < len(STEP_ORDER) else None
