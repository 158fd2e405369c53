"""Resolve the torch device once, so every heavy step follows the same rule.

``None`` / ``"auto"`` picks CUDA when available and CPU otherwise; asking for ``"cuda"`` on a machine
without a GPU is an error rather than a silent CPU fallback, so a mis-routed GPU task is visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairmon.errors import DeviceError

if TYPE_CHECKING:
    import torch


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    import torch

    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"device {str(device)!r} requested but CUDA is not available on this machine")
    return dev


def torch_generator(random_state: int | None, device: torch.device) -> torch.Generator:
    """A seeded generator on ``device`` (CPU generator when the device has none)."""
    import torch

    gen = torch.Generator(device=device.type if device.type == "cuda" else "cpu")
    gen.manual_seed(0 if random_state is None else int(random_state))
    return gen
