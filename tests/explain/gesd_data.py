"""Known-answer data for GESD tests: a gentle logistic model and two groups.

``same``: both groups draw every feature from N(0, 1). ``wide``: group 1's *used* features (the first
two, the only ones with non-zero weight) are spread three times wider, N(0, 3^2). The model treats the
groups alike (the group is not an input), so any GESD difference comes from where the groups' rows lie.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairmon.registry.model import Model
from fairmon.schema import FeatureSchema

WEIGHTS = (0.6, -0.4, 0.0, 0.0)
FEATURES = ["x1", "x2", "x3", "x4"]


def frame(n: int, *, wide: bool, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, 4))
    if wide:
        X[g == 1, :2] *= 3.0
    return pd.DataFrame(X, columns=FEATURES), g


def logistic_model(train: pd.DataFrame) -> Model:
    """A fixed, gentle logistic model on the encoded (standardised) inputs, as a torch module."""
    import torch

    schema = FeatureSchema.fit(train)
    lin = torch.nn.Linear(4, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([WEIGHTS], dtype=torch.float32))
        lin.bias.zero_()
    return Model(lin, schema, framework="torch", device="cpu")
