"""Synthetic credit-like applications and the kind of scikit-learn model a team trains elsewhere.

Why: issue 22's onboarding tests need a model fairmon never saw being built: a raw-column Pipeline
with its own scaler and one-hot encoder, and windows of fresh applications in daily CSV files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

NUMERIC = ["age", "income", "debt_ratio", "bureau_score"]
CATEGORICAL = ["region", "employment"]
FEATURES = NUMERIC + CATEGORICAL
LABEL = "approved"
SENSITIVE = "sex"

#: a spec with only the required sections over the 25-input model (``.format(features=WIDE_FEATURES)``):
#: the newcomer's first spec of the first-window test and ``benchmarks/explain_cost``
MINIMAL_SPEC = """\
spec_version: 1
identity: {{name: credit}}
model: {{registry_uri: registry}}
data:
  files: {{pattern: "data/{{start:%Y-%m-%d}}.csv"}}
columns:
  features: {features}
  extra: [sex]
  sensitive: [sex]
  label: approved
schedule:
  start_date: 2026-01-01
"""


def applications(n: int, seed: int) -> pd.DataFrame:
    """``n`` applications with a label driven by income, debt and bureau score (sex is not an input)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(19, 75, n).astype(float),
        "income": rng.lognormal(10.5, 0.4, n).round(0),
        "debt_ratio": rng.uniform(0.0, 0.9, n).round(3),
        "bureau_score": rng.normal(680, 60, n).round(0),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "employment": rng.choice(["salaried", "self", "none"], n, p=[0.6, 0.3, 0.1]),
        SENSITIVE: rng.choice(["F", "M"], n),
    })
    z = (
        0.9 * (np.log(df["income"]) - 10.5) / 0.4
        - 2.0 * (df["debt_ratio"] - 0.45)
        + 0.02 * (df["bureau_score"] - 680)
        - 0.8 * (df["employment"] == "none")
    )
    df[LABEL] = (z + rng.logistic(0, 1, n) > 0).astype(int)
    return df


def raw_pipeline(reference: pd.DataFrame) -> Any:
    """StandardScaler + OneHotEncoder (ColumnTransformer) + LogisticRegression on the raw columns."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    pre = ColumnTransformer([
        ("num", StandardScaler(), NUMERIC),
        ("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
    ])
    return Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=1000))]).fit(
        reference[FEATURES], reference[LABEL]
    )


def numeric_pipeline(reference: pd.DataFrame) -> Any:
    """Pipeline(StandardScaler, LogisticRegression) on the numeric columns (issue 22's shape): it also
    scores an encoded matrix without complaint, just wrongly."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(
        reference[NUMERIC], reference[LABEL]
    )


def write_windows(folder: Path, days: list[str], rows: int) -> None:
    """One CSV of fresh applications per day, ``folder/<day>.csv``."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, day in enumerate(days):
        applications(rows, seed=100 + i).to_csv(folder / f"{day}.csv", index=False)


def build_net(n_inputs: int, hidden: int = 8, normalize: bool = False) -> Any:
    """A team's own torch network (not fairmon's MLP): the builder ``own_model_setup:build_net``.
    ``normalize``: the network standardises its raw inputs itself (BatchNorm's running statistics)."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            first: list[torch.nn.Module] = [torch.nn.BatchNorm1d(n_inputs, affine=False)] if normalize else []
            self.body = torch.nn.Sequential(*first, torch.nn.Linear(n_inputs, hidden), torch.nn.Tanh())
            self.head = torch.nn.Linear(hidden, 2)  # two class logits

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.body(x))

        def first_hidden(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)

    return Net()


def train_net(
    X: np.ndarray, y: np.ndarray, *, hidden: int = 8, normalize: bool = False, steps: int = 300, seed: int = 0
) -> Any:
    """``build_net`` fitted with Adam on ``X`` (any float matrix: the team's own preprocessing)."""
    import torch

    torch.manual_seed(seed)
    net = build_net(X.shape[1], hidden, normalize)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    Xt, yt = torch.tensor(np.array(X, dtype=np.float32)), torch.tensor(np.array(y, dtype=np.int64))
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(Xt), yt).backward()
        opt.step()
    return net.eval()


#: a wider credit file (issue 21's first-run budget: ~25 model inputs): 19 numeric, 6 categorical
WIDE_NUMERIC = NUMERIC + [f"x{i:02d}" for i in range(15)]
WIDE_CATEGORICAL = CATEGORICAL + ["purpose", "housing", "channel", "product"]
WIDE_FEATURES = WIDE_NUMERIC + WIDE_CATEGORICAL


def wide_applications(n: int, seed: int) -> pd.DataFrame:
    """:func:`applications` with 15 more numeric and 4 more categorical columns (25 model inputs); the
    label also depends weakly on a few of the new columns."""
    rng = np.random.default_rng(seed + 7)
    df = applications(n, seed)
    for i in range(15):
        df[f"x{i:02d}"] = rng.normal(0.0, 1.0, n).round(3)
    df["purpose"] = rng.choice(["car", "home", "education", "business", "other"], n)
    df["housing"] = rng.choice(["own", "rent", "free"], n)
    df["channel"] = rng.choice(["web", "branch", "broker"], n)
    df["product"] = rng.choice(["card", "loan", "mortgage", "overdraft"], n)
    flip = rng.random(n) < 0.1 * (df["x00"] > 1.0) + 0.1 * (df["purpose"] == "business")
    df[LABEL] = np.where(flip, 1 - df[LABEL], df[LABEL])
    return df


def hgb_pipeline(reference: pd.DataFrame, features: list[str] | None = None) -> Any:
    """StandardScaler + OneHotEncoder + HistGradientBoostingClassifier on the raw wide columns (the
    model of issue 21's newcomer report)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    feats = features or WIDE_FEATURES
    pre = ColumnTransformer([
        ("num", StandardScaler(), [c for c in WIDE_NUMERIC if c in feats]),
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [c for c in WIDE_CATEGORICAL if c in feats]),
    ])
    return Pipeline([("pre", pre), ("clf", HistGradientBoostingClassifier(max_iter=100, random_state=0))]).fit(
        reference[feats], reference[LABEL]
    )
