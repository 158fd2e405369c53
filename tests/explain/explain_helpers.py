"""Small deterministic data and models shared by the explain tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def mixed_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Numeric and categorical columns (3-level and 2-level) for encoded-space tests."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.exponential(size=n),
            "c": rng.normal(size=n),
            "g": rng.choice(list("xyz"), size=n),
            "h": rng.choice(["u", "v"], size=n),
        }
    )


def torch_model(df: pd.DataFrame, hidden: tuple[int, ...] = (16, 8), seed: int = 0, scale: float = 3.0):  # type: ignore[no-untyped-def]
    """A fixed random MLP (weights scaled so predictions spread over both classes)."""
    import torch

    from fairmon.registry import Model, build_mlp
    from fairmon.schema import FeatureSchema

    schema = FeatureSchema.fit(df)
    torch.manual_seed(seed)
    net = build_mlp(schema.n_encoded, hidden)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
        # centre the output logit so both classes are predicted
        z = net(torch.as_tensor(schema.transform(df), dtype=torch.float32))
        net.net[-1].bias.sub_(z.median())
    return Model(net, schema, framework="torch", device="cpu")


def lr_model(X: np.ndarray, y: np.ndarray, df: pd.DataFrame):  # type: ignore[no-untyped-def]
    """Logistic regression fitted with scikit-learn, wrapped as a torch single-layer model."""
    import torch
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model, build_mlp
    from fairmon.schema import FeatureSchema

    schema = FeatureSchema.fit(df)
    Z = schema.transform(df)
    clf = LogisticRegression(max_iter=1000).fit(Z, y)
    net = build_mlp(schema.n_encoded, ())
    with torch.no_grad():
        net.net[0].weight.copy_(torch.as_tensor(clf.coef_, dtype=torch.float32))
        net.net[0].bias.copy_(torch.as_tensor(clf.intercept_, dtype=torch.float32))
    return Model(net, schema, framework="torch", device="cpu"), clf.coef_[0].copy(), Z
