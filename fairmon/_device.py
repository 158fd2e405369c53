"""Resolve the torch device once, so every heavy step follows the same rule.

``None`` / ``"auto"`` picks CUDA when available and CPU otherwise; asking for ``"cuda"`` on a machine
without a GPU is an error rather than a silent CPU fallback, so a mis-routed GPU task is visible.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from threadpoolctl import ThreadpoolController

from fairmon.errors import DeviceError

if TYPE_CHECKING:
    import torch

__all__ = ["resolve_device", "torch_generator", "thread_settings", "blas_threads", "thread_pools", "THREAD_ENV", "ERR_NO_CUDA", "ERR_UNKNOWN_DEVICE"]

#: OpenMP settings the batched explainers need: without ``PASSIVE`` torch's OpenMP threads spin-wait
#: on shared CPUs (measured ~9x slower KernelSHAP at load 3, benchmarks/explainers/README.md)
THREAD_ENV: dict[str, str] = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}

ERR_NO_CUDA = "device {device!r} requested but CUDA is not available on this machine"
ERR_UNKNOWN_DEVICE = "unknown compute device {device!r} (use 'auto', 'cpu', 'cuda' or 'cuda:N'): {error}"


def thread_settings(env: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set :data:`THREAD_ENV` where the environment leaves it unset (an operator's value wins).

    Called before a heavy step loads torch (OpenMP reads these once, when its runtime starts), in the
    CLI, ``fairmon demo`` and Airflow tasks alike, so no deployment has to remember them. Returns what
    it set; when torch is already loaded it changes nothing and returns ``{}``.

    Examples
    --------
    >>> env = {"OMP_WAIT_POLICY": "ACTIVE"}
    >>> thread_settings(env) if "torch" not in sys.modules else {"KMP_BLOCKTIME": "0"}
    {'KMP_BLOCKTIME': '0'}
    """
    if "torch" in sys.modules:
        return {}
    applied = {k: v for k, v in THREAD_ENV.items() if not env.get(k)}
    env.update(applied)
    return applied


@contextmanager
def blas_threads(limit: int | None) -> Iterator[None]:
    """At most ``limit`` threads in the BLAS libraries numpy, scipy and scikit-learn call (OpenBLAS,
    MKL, BLIS; via threadpoolctl) inside the block, restored afterwards; ``None`` changes nothing.

    Why a window's steps run with one (``execution.blas_threads``, default 1): they make many small
    BLAS calls (a model's predictions on KernelSHAP's coalition rows, the explainers' weighted
    regressions), and OpenBLAS's worker threads busy-wait between calls, so a second thread costs
    CPU it does not save. Measured on the 2-core machine, one warm process, demo fleet spec at the
    spec defaults (benchmarks/fleet/README.md): 11.2 CPU-s per window with OpenBLAS's default (2
    threads) vs 9.0 with one. A fleet worker already runs one task per core, so more threads per
    task only oversubscribe the cores. torch's own threads are not BLAS threads here (RUMIE sets
    its own, :func:`fairmon.fairness._rumie_core.torch_threads`).

    >>> import numpy as np
    >>> with blas_threads(1):
    ...     float((np.ones((64, 64)) @ np.ones(64)).sum())
    4096.0
    """
    if limit is None:
        yield
        return
    with thread_pools().limit(limits=limit, user_api="blas"):
        yield


#: packages that bring BLAS libraries of their own: a controller is found again when one was imported
_BLAS_PACKAGES = ("numpy", "scipy", "sklearn", "torch")


def thread_pools() -> Any:
    """threadpoolctl's controller of this process's loaded thread-pool libraries, found once per set of
    imported BLAS-bearing packages. Why: finding them walks every loaded shared library (~400 in a
    worker, 0.07 CPU-s, most of a light heavy-queue task's own work); a Celery worker's preload finds
    them before it forks, so its tasks never do.

    >>> thread_pools() is thread_pools()
    True
    """
    return _controller(tuple(name in sys.modules for name in _BLAS_PACKAGES))


@functools.cache
def _controller(imported: tuple[bool, ...]) -> Any:
    """One controller per set of imported BLAS-bearing packages (``imported`` is only the cache key)."""
    return ThreadpoolController()


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The torch device for ``device`` (``None``/``"auto"``: CUDA when available, else CPU).

    >>> resolve_device("cpu").type
    'cpu'
    >>> resolve_device("gpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairmon.errors.DeviceError: unknown compute device 'gpu' (use 'auto', 'cpu', 'cuda' or 'cuda:N'): ...
    """
    import torch  # heavy: loaded when a device is needed

    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:  # "gpu", "cuda:x", a number: not a device string torch knows
        raise DeviceError(ERR_UNKNOWN_DEVICE.format(device=device, error=exc)) from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(ERR_NO_CUDA.format(device=str(device)))
    return dev


def torch_generator(random_state: int | None, device: torch.device) -> torch.Generator:
    """A seeded generator on ``device`` (CPU generator when the device has none).

    >>> import torch
    >>> torch_generator(3, torch.device("cpu")).initial_seed()
    3
    """
    import torch  # heavy: loaded when a device is needed

    gen = torch.Generator(device=device.type if device.type == "cuda" else "cpu")
    gen.manual_seed(0 if random_state is None else int(random_state))
    return gen
