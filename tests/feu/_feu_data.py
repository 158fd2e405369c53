"""Small synthetic data with a group effect for the FEU tests (shared by the deployable and group-threshold tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def group_effect_frame(n: int, seed: int, effect: float) -> pd.DataFrame:
    """``n`` rows of two features, a sex column and a label whose rate depends on sex by ``effect``."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    x1, x2 = rng.normal(size=(2, n))
    y = (x1 + 0.5 * x2 + effect * (sex == "M") + rng.logistic(size=n) * 0.7 > 0.5 * effect).astype(int)
    return pd.DataFrame({"x1": x1, "x2": x2, "sex": sex, "y": y})
