"""The ``execution`` section: where heavy steps run, where artifacts go, retries and timeouts.

Examples
--------
>>> ExecutionSpec().queue, ExecutionSpec().task_timeout_s, ExecutionSpec().layout
('default', 3600, 'warm')
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from fairmon.config._limits import MAX_BLAS_THREADS, MAX_RETRIES, MAX_RETRY_DELAY_S, MAX_TASK_TIMEOUT_S
from fairmon.config._parsers import SpecSection
from fairmon.config._paths import SpecPath

__all__ = ["ExecutionSpec", "FEU_BUDGET_SHARE", "HEAVY_TIMEOUT_FACTOR"]

#: heavy steps (predict, RUMIE, explanations, diagnosis, FEU) get this multiple of ``task_timeout_s``
HEAVY_TIMEOUT_FACTOR: Final = 4
#: ``retraining.time_budget_s`` may take at most this share of the FEU step's limit (the lower of its
#: task timeout and the run's). The budget covers the whole step (``fairmon.feu._budget``), but the
#: search stops on estimates (the next generation's duration, the refits' and the tail's), so the rest
#: is for their error, registration and, for the run's limit, the steps before FEU
FEU_BUDGET_SHARE: Final = 0.8

class ExecutionSpec(SpecSection):
    """Where heavy steps run and where intermediate artifacts go.

    ``queue`` is the Airflow/Celery queue of the heavy tasks (``gpu`` for GPU workers) and ``pool``
    their Airflow pool (``FAIRMON_HEAVY_POOL`` wins; unset: Airflow's ``default_pool``);
    ``artifact_location`` a local directory or fsspec URI, keyed below by monitor and window.
    ``deadline_s``: an Airflow ``DeadlineAlert`` fires when a window's run has not succeeded this many
    seconds after it was queued — also for a run that failed earlier (Airflow 3.3.2 keeps its deadline;
    unset: no deadline alert).
    ``layout``: how the Airflow DAG maps steps to tasks. ``warm`` (default) runs the window's heavy
    computation (predict, outcome, RUMIE, explanations) in one task, the diagnosis with the report
    in another and the snapshot with the data pull in a third, so the model, the encodings and torch
    load once per window; validation,
    persist, drift and the notify steps stay tasks of their own. ``steps``: one task per step (the
    layout before issue 21). Both store the same results.
    ``blas_threads``: at most this many BLAS threads (OpenBLAS/MKL, through threadpoolctl) while a
    heavy step runs (default 1: a window's many small BLAS calls cost less CPU on one thread, as idle
    OpenBLAS threads busy-wait, and a worker runs one task per core; ``null``: the library's own
    default, every core). How a window runs, not what it stores: left out of the spec fingerprint.
    """

    device: Literal["auto", "cpu", "cuda"] = "auto"
    queue: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] = "default"
    artifact_location: SpecPath = "~/.fairmon/artifacts"
    retries: Annotated[int, Field(ge=0, le=MAX_RETRIES)] = 2
    retry_delay_s: Annotated[int, Field(ge=0, le=MAX_RETRY_DELAY_S)] = 300
    task_timeout_s: Annotated[int, Field(ge=1, le=MAX_TASK_TIMEOUT_S)] = 3600
    pool: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] | None = None
    deadline_s: Annotated[int, Field(ge=1, le=MAX_TASK_TIMEOUT_S)] | None = None
    layout: Literal["steps", "warm"] = "warm"
    blas_threads: Annotated[int, Field(ge=1, le=MAX_BLAS_THREADS)] | None = 1

    @property
    def heavy_timeout_s(self) -> int:
        """A heavy step's timeout: ``HEAVY_TIMEOUT_FACTOR`` x ``task_timeout_s`` (Airflow's ``execution_timeout``).

        >>> ExecutionSpec(task_timeout_s=600).heavy_timeout_s
        2400
        """
        return int(self.task_timeout_s) * HEAVY_TIMEOUT_FACTOR
