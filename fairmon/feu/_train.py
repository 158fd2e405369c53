"""Training of FEU's network: the paper's MLP 64-32 (ReLU), sigmoid output, Adam, BCE, batch 32.

``BCEWithLogitsLoss`` on the single logit is binary cross-entropy on ``sigmoid(logit)`` computed in a
numerically stable form; the module emits the logit (``fairmon.registry.build_mlp``) so that
:class:`fairmon.registry.Model` can serve it like every other torch model. Initialisation and the
mini-batch order come from a seeded generator, so a configuration trains to the same weights for the
same seed (on the same device and thread count).

Example
-------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> Z = rng.normal(size=(200, 3)); y = (Z[:, 0] > 0).astype(int)
>>> net = train_mlp(Z, y, lr=1e-2, epochs=5, seed=0)
>>> float(((predict_proba(net, Z) > 0.5) == y).mean()) > 0.9
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import MethodError
from fairmon.registry.model import build_mlp

if TYPE_CHECKING:
    import torch

__all__ = ["train_mlp", "train_mlps", "predict_proba"]


def train_mlp(
    Z: np.ndarray,
    y: np.ndarray,
    *,
    lr: float,
    epochs: int,
    batch_size: int = 32,
    hidden: tuple[int, ...] = (64, 32),
    seed: int = 0,
    device: str | None = None,
) -> torch.nn.Module:
    """Train a fresh ``build_mlp(d, hidden)`` with Adam(lr) on BCE for ``epochs`` epochs.

    Mini-batches of ``batch_size`` rows are reshuffled every epoch (Keras' ``fit`` default, as in the
    reference code); the last batch may be smaller.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(64, 3))
    >>> net = train_mlp(Z, (Z[:, 0] > 0).astype(int), lr=1e-2, epochs=3, device="cpu")
    >>> p = predict_proba(net, Z)
    >>> p.shape, bool(((p >= 0) & (p <= 1)).all())
    ((64,), True)
    """
    import torch

    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        net = build_mlp(Z.shape[1], hidden)
    net = net.to(dev)
    Xt = torch.as_tensor(np.asarray(Z, dtype=np.float32), device=dev)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float32), device=dev)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(seed) + 1)
    opt = torch.optim.Adam(net.parameters(), lr=float(lr))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    n = len(Xt)
    net.train()
    for _ in range(int(epochs)):
        order = torch.randperm(n, generator=gen).to(dev)
        for start in range(0, n, batch_size):
            b = order[start : start + batch_size]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(Xt[b]), yt[b])
            loss.backward()
            opt.step()
    net.eval()
    return net


def predict_proba(net: torch.nn.Module, Z: np.ndarray) -> np.ndarray:
    """P(class 1) of a trained network for encoded rows (float64 numpy).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(8, 3))
    >>> predict_proba(train_mlp(Z, (Z[:, 0] > 0).astype(int), lr=1e-2, epochs=1, device="cpu"), Z).shape
    (8,)
    """
    import torch

    dev = next(net.parameters()).device
    with torch.no_grad():
        out = net(torch.as_tensor(np.asarray(Z, dtype=np.float32), device=dev))
        return torch.sigmoid(out.reshape(-1)).double().cpu().numpy()


def train_mlps(
    Z: np.ndarray,
    y: np.ndarray,
    configs: list[tuple[float, int, int]],
    *,
    batch_size: int = 32,
    hidden: tuple[int, ...] = (64, 32),
    device: str | None = None,
    fairness_weights: Sequence[float] | None = None,
    groups: np.ndarray | None = None,
    rows: Sequence[np.ndarray] | None = None,
) -> list[torch.nn.Module]:
    """Train one network per ``(lr, epochs, seed)`` at once, as a stack of independent MLPs.

    ``fairness_weights`` (one per network, with integer group codes ``groups`` per row) add FEU's
    fair-training knob to each network's loss: ``BCE + w * DP_penalty``, where ``DP_penalty`` is the
    mean squared deviation of the mini-batch's group means of ``P(y=1)`` from their average (for two
    groups ``((mu_a - mu_b) / 2)^2``). This is the squared form of the mean-difference demographic-
    parity regulariser (the "discrimination" term of Kamishima et al., ECML PKDD 2012, prejudice
    remover, uses mutual information instead; Zemel et al., ICML 2013, the same statistical-parity
    difference): a weight of 0 is the paper's network, larger weights trade likelihood for parity
    during training rather than only by moving the threshold.

    Why: FEU trains a whole generation of tiny networks on the same data. Stepping them together
    (batched matrix products over the stack, one Adam update for all) replaces ``K`` Python training
    loops by one and is several times faster on a CPU, and much more so on a GPU. Each network sees
    exactly what :func:`train_mlp` gives it — the same initial weights, the same per-epoch shuffles
    from its own seed, Adam with its own learning rate (PyTorch's update rule) — and stops updating
    after its own number of epochs; results equal :func:`train_mlp` up to float rounding.

    ``rows`` (one index array into ``Z`` per network) trains each network on its own rows, as
    :mod:`fairmon.feu._nested` needs (every network of its stack leaves out two different folds):
    each epoch a network visits a fresh permutation of its rows, cut to the smallest network's row
    count so that the stack shares one mini-batch schedule (folds stratified by
    :func:`fairmon.feu._crossval.fold_ids` differ by a few rows; those drop out of a different random
    subset each epoch). With equally many rows each, network ``k`` is trained exactly as
    ``train_mlps(Z[rows[k]], y[rows[k]], [configs[k]], ...)`` would train it.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(100, 3)); y = (Z[:, 0] > 0).astype(int)
    >>> nets = train_mlps(Z, y, [(1e-2, 3, 0), (1e-3, 2, 1)], device="cpu")
    >>> len(nets), bool(np.allclose(predict_proba(nets[0], Z),
    ...                             predict_proba(train_mlp(Z, y, lr=1e-2, epochs=3, seed=0), Z), atol=1e-4))
    (2, True)
    """
    import torch

    dev = resolve_device(device)
    K, n = len(configs), len(Z)
    own = None  # each network's training rows (``rows``), else all rows for every network
    if rows is not None:
        if len(rows) != K or any(len(r) == 0 for r in rows):
            raise MethodError(f"rows needs one non-empty index array per network ({K}), got {[len(r) for r in rows]}")
        own = [torch.as_tensor(np.asarray(r, dtype=np.int64)) for r in rows]
        n = min(len(r) for r in own)
    inits = []
    for _, _, seed in configs:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            inits.append(build_mlp(Z.shape[1], hidden))
    linears = [[m for m in net.modules() if isinstance(m, torch.nn.Linear)] for net in inits]
    n_layers = len(linears[0])
    W = [torch.stack([ls[i].weight.detach() for ls in linears]).to(dev).requires_grad_(True) for i in range(n_layers)]
    B = [torch.stack([ls[i].bias.detach() for ls in linears]).to(dev).requires_grad_(True) for i in range(n_layers)]
    params = [*W, *B]
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    lr = torch.tensor([float(c[0]) for c in configs], dtype=torch.float32, device=dev)
    epochs = torch.tensor([int(c[1]) for c in configs], device=dev)
    gens = []
    for _, _, seed in configs:
        g = torch.Generator(device="cpu")
        g.manual_seed(int(seed) + 1)
        gens.append(g)
    Xt = torch.as_tensor(np.asarray(Z, dtype=np.float32), device=dev)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float32), device=dev)
    lam = None
    if fairness_weights is not None and groups is not None and any(float(w) > 0 for w in fairness_weights):
        lam = torch.tensor([float(w) for w in fairness_weights], dtype=torch.float32, device=dev)
        codes = torch.as_tensor(np.asarray(groups, dtype=np.int64), device=dev)
        onehot_all = torch.nn.functional.one_hot(codes, int(codes.max().item()) + 1).to(torch.float32)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    for epoch in range(int(epochs.max().item())):
        active = (epoch < epochs).to(torch.float32)
        if own is None:
            perms = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(dev)
        else:
            perms = torch.stack([r[torch.randperm(len(r), generator=g)][:n] for r, g in zip(own, gens)]).to(dev)
        for start in range(0, n, batch_size):
            idx = perms[:, start : start + batch_size]
            h = Xt[idx]  # (K, b, d)
            for i in range(n_layers):
                h = torch.baddbmm(B[i][:, None, :], h, W[i].transpose(1, 2))
                if i < n_layers - 1:
                    h = torch.relu(h)
            logits = h.squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, yt[idx], reduction="none")
            total = loss.mean(dim=1).sum()  # each network's own mean loss; gradients stay separate
            if lam is not None:
                total = total + (lam * _dp_penalty(torch.sigmoid(logits), onehot_all[idx])).sum()
            grads = torch.autograd.grad(total, params)
            step += 1
            bc1, bc2 = 1 - beta1**step, 1 - beta2**step
            with torch.no_grad():
                for p, g_, a, b_ in zip(params, grads, m1, m2):
                    a.lerp_(g_, 1 - beta1)
                    b_.mul_(beta2).addcmul_(g_, g_, value=1 - beta2)
                    denom = (b_.sqrt() / math.sqrt(bc2)).add_(eps)
                    scale = (lr * active / bc1).reshape((K,) + (1,) * (p.ndim - 1))
                    p.sub_(scale * a / denom)
    nets = []
    for k, net in enumerate(inits):
        with torch.no_grad():
            for i, lin in enumerate(linears[k]):
                lin.weight.copy_(W[i][k].detach().cpu())
                lin.bias.copy_(B[i][k].detach().cpu())
        nets.append(net.to(dev).eval())
    return nets


def _dp_penalty(p: torch.Tensor, onehot: torch.Tensor) -> torch.Tensor:
    """Per network: mean squared deviation of the batch's group means of ``p`` (K, b) from their mean.

    Groups absent from a mini-batch are left out (``onehot``: (K, b, groups)).
    """
    counts = onehot.sum(dim=1)
    present = (counts > 0).to(p.dtype)
    means = (p.unsqueeze(-1) * onehot).sum(dim=1) / counts.clamp(min=1.0)
    n_present = present.sum(dim=1).clamp(min=1.0)
    centre = (means * present).sum(dim=1) / n_present
    return (((means - centre.unsqueeze(-1)) ** 2) * present).sum(dim=1) / n_present
