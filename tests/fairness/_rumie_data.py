"""Small deterministic datasets for the RUMIE tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def planted_frame(n: int = 1000, *, gap: float = 0.4, random_state: int = 0) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Rows with a planted group ``age <= 30 OR colour = red`` (favorable rate lower by ``gap``).

    ``noise`` and ``priors_count`` are attributes unrelated to the decision.
    """
    rng = np.random.default_rng(random_state)
    age = rng.integers(18, 70, n)
    priors = rng.integers(0, 10, n)
    colour = rng.choice(["red", "green", "blue"], n)
    noise = rng.normal(size=n).round(3)
    member = (age <= 30) | (colour == "red")
    fav = rng.random(n) < np.where(member, 0.7 - gap, 0.7)
    X = pd.DataFrame({"age": age, "priors_count": priors, "colour": colour, "noise": noise})
    return X, fav, member


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    return float((a & b).sum() / max(1, (a | b).sum()))


def _load_planted():  # type: ignore[no-untyped-def]
    """``benchmarks/rumie_paper/planted.py`` by file path (``benchmarks`` is not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "rumie_paper" / "planted.py"
    spec = importlib.util.spec_from_file_location("rumie_planted", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


planted = _load_planted()
