"""The monitoring pipeline: task-sized steps shared by the Airflow DAGs and the CLI.

Light on import (the DAG processor imports :mod:`fairmon.pipeline.dagspec` at parse time): the steps and
the runner load on first attribute access.

>>> from fairmon.pipeline import STEP_ORDER
>>> STEP_ORDER[0], STEP_ORDER[-1]
('resolve_window', 'followup')
"""

from __future__ import annotations

from typing import Any

from fairmon._lazy import lazy_attribute

__all__ = [
    "run_step",
    "run_steps",
    "run_window",
    "backfill",
    "window_for",
    "windows_between",
    "feu_on_demand",
    "WindowOutcome",
    "Window",
    "RunContext",
    "ArtifactStore",
    "STEP_ORDER",
    "HEAVY_STEPS",
]

_LAZY = {
    "run_step": "fairmon.pipeline.runner",
    "run_steps": "fairmon.pipeline.warm",
    "run_window": "fairmon.pipeline.runner",
    "backfill": "fairmon.pipeline.runner",
    "window_for": "fairmon.window",
    "windows_between": "fairmon.window",
    "feu_on_demand": "fairmon.pipeline.runner",
    "WindowOutcome": "fairmon.pipeline.runner",
    "Window": "fairmon.window",
    "RunContext": "fairmon.pipeline.context",
    "ArtifactStore": "fairmon.pipeline.artifacts",
    "STEP_ORDER": "fairmon.pipeline.table",
    "HEAVY_STEPS": "fairmon.pipeline.table",
}


def __getattr__(name: str) -> Any:
    """Load the module of a public name on first access (keeps ``import fairmon.pipeline`` light)."""
    return lazy_attribute(__name__, _LAZY, name)
