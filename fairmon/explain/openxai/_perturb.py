"""OpenXAI's tabular perturbation, batched: Gaussian noise on continuous features, flips on binary.

Reference: ``NormalPerturbation`` / ``NewDiscrete_NormalPerturbation`` in
``openxai/explainers/perturbation_methods.py``. Continuous (standardised) columns get
``N(0, std²)`` noise; a categorical column changes with probability ``flip = sqrt(2/π)·std`` —
a one-hot group moves *together* to another category drawn uniformly (so a perturbed row is
still a valid one-hot encoding), a single 0/1 column flips. Columns in ``keep`` stay at the row's
value (OpenXAI's ``feature_mask``: the top-k for PGU, the others for PGI), column by column as
the reference does.

Draws come from a seeded torch generator for all rows at once (the reference reseeds per row with
the row index); results are the same in distribution, not number for number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

    from fairmon.schema import FeatureSchema

__all__ = ["Layout", "perturb", "flip_probability"]


def flip_probability(std: float) -> float:
    """OpenXAI's flip probability for binary features: ``sqrt(2/π)·std``."""
    return math.sqrt(2.0 / math.pi) * std


@dataclass(frozen=True)
class Layout:
    """Which encoded columns are continuous and which one-hot groups move together."""

    continuous: np.ndarray
    groups: tuple[tuple[int, int], ...]  # (start, stop) of each categorical block

    @classmethod
    def from_schema(cls, schema: FeatureSchema) -> Layout:
        cont = schema.continuous_mask
        groups = tuple(
            (int(s.start), int(s.stop)) for _, s in schema.groups if not bool(cont[s.start])
        )
        return cls(cont, groups)

    @classmethod
    def all_continuous(cls, d: int) -> Layout:
        return cls(np.ones(d, dtype=bool), ())


def perturb(
    x: torch.Tensor,
    n_samples: int,
    *,
    std: float,
    layout: Layout,
    keep: torch.Tensor | None,
    generator: torch.Generator,
) -> torch.Tensor:
    """Perturbations ``(n, n_samples, d)`` of rows ``x`` (n, d); ``keep`` (n, d) columns stay fixed."""
    import torch

    n, d = x.shape
    dev = x.device
    gdev = generator.device
    out = x.unsqueeze(1).expand(n, n_samples, d).clone()
    cont = torch.as_tensor(layout.continuous, device=dev)
    noise = torch.randn((n, n_samples, d), generator=generator, device=gdev, dtype=torch.float64).to(dev)
    out = out + std * noise * cont.to(out.dtype)
    p = flip_probability(std)
    for start, stop in layout.groups:
        w = stop - start
        flip = torch.rand((n, n_samples), generator=generator, device=gdev, dtype=torch.float64).to(dev) < p
        block = out[:, :, start:stop]
        if w == 1:
            out[:, :, start] = torch.where(flip, (block[:, :, 0] - 1.0).abs(), block[:, :, 0])
            continue
        cur = block.argmax(dim=2)
        shift = torch.randint(1, w, (n, n_samples), generator=generator, device=gdev).to(dev)
        new = (cur + shift) % w  # uniform over the other w - 1 categories
        onehot = torch.nn.functional.one_hot(new, w).to(out.dtype)
        out[:, :, start:stop] = torch.where(flip.unsqueeze(2), onehot, block)
    if keep is not None:
        out = torch.where(keep.unsqueeze(1), x.unsqueeze(1), out)
    return out
