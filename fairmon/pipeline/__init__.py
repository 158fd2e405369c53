"""The monitoring pipeline: task-sized steps shared by the Airflow DAGs and the CLI.

Light on import (the DAG processor imports :mod:`fairmon.pipeline.dagspec` at parse time): the steps and
the runner load on first attribute access.

>>> from fairmon.pipeline import STEP_ORDER  # doctest: +SKIP
>>> STEP_ORDER[0], STEP_ORDER[-1]  # doctest: +SKIP
('resolve_window', 'followup')
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "run_step",
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
    "run_window": "fairmon.pipeline.runner",
    "backfill": "fairmon.pipeline.runner",
    "window_for": "fairmon.pipeline.runner",
    "windows_between": "fairmon.pipeline.runner",
    "feu_on_demand": "fairmon.pipeline.runner",
    "WindowOutcome": "fairmon.pipeline.runner",
    "Window": "fairmon.window",
    "RunContext": "fairmon.pipeline.context",
    "ArtifactStore": "fairmon.pipeline.artifacts",
    "STEP_ORDER": "fairmon.pipeline.steps",
    "HEAVY_STEPS": "fairmon.pipeline.steps",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fairmon.pipeline' has no attribute {name!r}")
