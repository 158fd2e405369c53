"""Acceptance: batched LIME / KernelSHAP agree with the lime / shap libraries on 200 rows.

Same fixed model, same rows, same background and equal sample counts. Both sides are Monte-Carlo
estimators with independent random streams, so agreement is statistical: mean Spearman rank
correlation per row >= 0.9 and mean |difference| <= 10% of the library's mean |attribution|.
(KernelSHAP runs in its sampling regime here: 150 coalitions of the 2^8 - 2 possible.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from explain_helpers import torch_model
from scipy.stats import spearmanr

from fairmon.explain import explain


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({f"x{i}": rng.normal(size=n) for i in range(5)})
    df["g"] = rng.choice(list("abc"), size=n)
    model = torch_model(df, hidden=(8,), scale=1.5)
    Z = model.schema.transform(df)
    return model, Z


def _agreement(ours: np.ndarray, lib: np.ndarray) -> tuple[float, float]:
    rho = float(np.mean([spearmanr(a, b).statistic for a, b in zip(ours, lib)]))
    rel = float(np.abs(ours - lib).mean() / np.abs(lib).mean())
    return rho, rel


@pytest.mark.slow
@pytest.mark.parametrize("method, n_samples, bg_rows", [("lime", 8000, 400), ("kernelshap", 150, 10)])
def test_batched_matches_library_on_200_rows(setup, method, n_samples, bg_rows):  # type: ignore[no-untyped-def]
    model, Z = setup
    rows, bg = Z[:200], Z[:bg_rows]
    assert len(set(model.predict_encoded(rows))) == 2
    ours = explain(model, rows, method=method, background=bg, n_samples=n_samples, device="cpu")
    lib = explain(model, rows, method=f"{method}-lib", background=bg, n_samples=n_samples, device="cpu")
    rho, rel = _agreement(ours, lib)
    assert rho >= 0.9, f"{method}: mean Spearman {rho:.3f}"
    assert rel <= 0.10, f"{method}: mean |diff| is {rel:.1%} of mean |attribution|"
