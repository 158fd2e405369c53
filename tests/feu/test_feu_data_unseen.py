"""FEU's split: a category that occurs only outside the training rows (a rare Adult country after a
subsample) encodes as an all-zero block instead of failing the search (issue 16's Adult benchmark)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairmon.feu._data import _prepare


def test_category_seen_only_outside_training_encodes_as_zeros() -> None:
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"x": rng.normal(size=n), "country": ["A"] * (n - 1) + ["rare"],
                       "sex": rng.choice(["F", "M"], n), "y": rng.integers(0, 2, n)})
    checked = 0
    for seed in range(10):
        prep = _prepare(df, ["x", "country", "sex"], "sex", "y", None, (0.5, 0.2, 0.3), seed)
        part = next(k for k in ("train", "validation", "test") if (prep.X[k]["country"] == "rare").any())
        if part == "train":  # a known category then
            assert "rare" in prep.schema.column("country").categories
            continue
        assert prep.schema.column("country").categories == ("A",)
        row = int(np.flatnonzero(prep.X[part]["country"] == "rare")[0])
        assert prep.Z[part][row, prep.schema.slice_of("country")].tolist() == [0.0]
        checked += 1
    assert checked  # half the rows are outside training: some seed puts the rare row there
