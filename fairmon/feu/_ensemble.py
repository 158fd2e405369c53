"""The fold ensemble: what the cross-validated gate deploys (``FEUSettings.cv_deploy="ensemble"``, session 9).

The cross-validated gate (:mod:`fairmon.feu._crossval`) judges a candidate's *recipe* by the
out-of-fold decisions of its ``k`` fold models. Deploying the searched model instead — one more fit
of that recipe, on the training split — deploys a model the gate did not check: on German's 500
training rows one fit's test positive rate and balanced accuracy differ from the recipe's
out-of-fold ones by 0.05-0.08 (fit-to-fit variance of small networks; session 8). So by default the
recommended and registered model is the **fold ensemble**: the ``k`` fold models the gate judged,
predicting the mean of their probabilities.

Documented choices:

* **Mean of probabilities**, emitted as one logit ``log(p̄) - log(1 - p̄)`` computed stably as
  ``logsumexp_k log σ(z_k) - logsumexp_k log σ(-z_k)`` (the ``log k`` terms cancel), so the module is
  an ordinary one-logit torch model: :class:`fairmon.registry.Model` serves it (softmax of ``[0, z]``
  is ``p̄``), gradients flow (GESD's and the stability metrics' explainers), and ``first_hidden`` is
  the members' first hidden layers side by side.
* **Decisions**: ``p̄ >= tau`` with the recipe's threshold. With group thresholds (parity shift
  ``s``) the group quantiles ``q_g`` are fit on the **ensemble's** scores of the rows its members were
  trained on (train ∪ validation), as the search fits a candidate's on the scores of its training
  rows and each fold model's on its fold's training rows (``_crossval``): the quantiles belong to the
  model that decides with them. Then ``tau_g = (1 - s) tau + s q_g`` (:mod:`fairmon.feu._group_thresholds`).
  Tried in session 19 and measured, not kept: first matching ``tau`` to the members' rate, as without
  a shift. On the 15 group-threshold runs of ``benchmarks/feu_paper`` it did not shrink the nested
  ensemble's rate shift from its members' (German +0.029 to +0.089 against +0.016 to +0.090; Adult
  -0.026 to +0.020 against -0.025 to +0.013) and withheld one more pick (Adult seed 46, inside the
  band on test): the shift is the averaged score's behaviour on unseen rows, which an in-sample match
  cannot see (README there, "Session 19").
* **Registry**: stored through the registry's importable-builder path (``builder: import``,
  :mod:`fairmon.registry._torch_module`) with :func:`build_fold_ensemble` as the builder, so a load
  rebuilds the members from the config and reads the tensors with ``weights_only=True``.
* **What its figures mean.** Every member saw ``(k−1)/k`` of train ∪ validation, so the ensemble's
  **validation** figures are *not* held out (each validation row trained ``k−1`` of the ``k``
  members); they are recorded with ``deployment.validation_held_out = False``. Its held-out evidence
  is the gate's out-of-fold figures (``recommendation_gate``: each row decided by the member that did
  not see it); the **test** split is untouched by the search, the folds and the ensemble.
* **An ensemble is not its members.** The out-of-fold decisions are single members'; averaging
  probabilities smooths the score, so the ensemble's rate at ``tau`` can differ from its members'
  mean rate. The record keeps the members' mean test rate beside the ensemble's
  (``deployment.members_test_selection_rate``) so the difference is measured, not assumed; and since
  session 18 the ensemble's whole procedure (members, mean, matched threshold) is checked out of fold
  before it is recommended (:mod:`fairmon.feu._nested`: nested folds; its positive rate must stay
  inside the band).

Example
-------
>>> import torch
>>> ens = build_fold_ensemble(n_inputs=3, hidden=[4], members=2)
>>> x = torch.zeros(5, 3)
>>> p = torch.sigmoid(ens(x)); q = torch.stack([torch.sigmoid(m(x)) for m in ens.members]).mean(0)
>>> bool(torch.allclose(p, q, atol=1e-6)), tuple(ens.first_hidden(x).shape)
(True, (5, 8))
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon.feu._group_thresholds import fitted_row_thresholds, group_thresholds, parity_quantiles
from fairmon.registry._torch_module import imported_module
from fairmon.registry.model import build_mlp

if TYPE_CHECKING:
    import torch

__all__ = ["ENSEMBLE_BUILDER", "build_fold_ensemble", "ensemble_cut", "ensemble_threshold", "fold_ensemble",
           "member_proba", "member_rates"]

#: the importable builder the registry rebuilds a fold ensemble with (``builder: import``)
ENSEMBLE_BUILDER = "fairmon.feu._ensemble:build_fold_ensemble"


def build_fold_ensemble(n_inputs: int, hidden: Sequence[int], members: int) -> torch.nn.Module:
    """An untrained fold ensemble of ``members`` MLPs ``build_mlp(n_inputs, hidden)`` (the registry's builder)."""
    module: torch.nn.Module = _ensemble_class()(int(n_inputs), tuple(int(h) for h in hidden), int(members))
    return module


def fold_ensemble(nets: Sequence[Any], *, n_inputs: int, hidden: Sequence[int]) -> torch.nn.Module:
    """The registrable fold ensemble of trained ``nets`` (copies of them, on the CPU, behind the builder wrapper).

    Example
    -------
    >>> nets = [build_mlp(3, (4,)) for _ in range(3)]
    >>> m = fold_ensemble(nets, n_inputs=3, hidden=(4,))
    >>> m.config()["target"], m.config()["kwargs"]
    ('fairmon.feu._ensemble:build_fold_ensemble', {'n_inputs': 3, 'hidden': [4], 'members': 3})
    """
    kwargs = {"n_inputs": int(n_inputs), "hidden": [int(h) for h in hidden], "members": len(nets)}
    ens = build_fold_ensemble(**kwargs)  # type: ignore[arg-type]
    for member, net in zip(ens.members, nets):  # type: ignore[arg-type]
        member.load_state_dict({k: v.detach().cpu() for k, v in net.state_dict().items()})
    ens.eval()
    return imported_module(ENSEMBLE_BUILDER, kwargs, input="encoded", n_inputs=int(n_inputs), inner=ens)


def member_proba(module: Any, Z: np.ndarray) -> np.ndarray:
    """``(members, n)`` P(favourable) of each member of a fold ensemble (or of its registry wrapper)."""
    import torch

    ens = getattr(module, "inner", module)
    dev = next(ens.parameters()).device
    with torch.no_grad():
        x = torch.as_tensor(np.asarray(Z, dtype=np.float32), device=dev)
        return torch.stack([torch.sigmoid(m(x).reshape(-1)) for m in ens.members]).double().cpu().numpy()


def ensemble_threshold(ensemble_p: np.ndarray, members_p: np.ndarray, tau: float) -> float:
    """The threshold at which the ensemble approves the share of rows its members approve at ``tau``.

    ``ensemble_p``: ``(n,)`` the ensemble's P(favourable) on rows; ``members_p``: ``(members, n)`` each
    member's on the same rows. Why: the gate judged the members' decisions ``p_k >= tau`` (each row
    by the member that did not see it), but averaging probabilities smooths the score, so ``p̄ >= tau``
    approves a different share (on German up to +0.063 of the members' mean test rate, session 9,
    which moved a recommendation 0.10 off its recipe's rate and cost it 0.077 balanced accuracy).
    The ensemble's threshold is set to the quantile of its own scores that approves the members'
    mean rate on the rows its members were trained on (train ∪ validation); no label is read, and
    both rates are taken on the same rows by the same models, so their in-sample optimism cancels.
    The threshold is the midpoint between the last approved and the first refused score (rows tied
    at the cut are all approved).

    Example
    -------
    >>> members = np.array([[0.9, 0.8, 0.7, 0.1], [0.9, 0.1, 0.1, 0.1]])  # rates at 0.5: 3/4 and 1/4
    >>> mean = members.mean(axis=0)  # [0.9, 0.45, 0.4, 0.1]: at 0.5 the ensemble would approve 1/4
    >>> t = ensemble_threshold(mean, members, 0.5)
    >>> round(t, 3), float((mean >= t).mean())
    (0.425, 0.5)
    """
    p = np.sort(np.asarray(ensemble_p, dtype=float))[::-1]  # descending
    n = p.size
    if n == 0:
        return float(tau)
    rate = float((np.asarray(members_p) >= tau).mean())
    k = int(round(rate * n))  # approve the k highest scores
    if k <= 0:
        return float(np.nextafter(p[0], np.inf))
    if k >= n:
        return float(p[-1])
    return float((p[k - 1] + p[k]) / 2.0) if p[k - 1] > p[k] else float(p[k - 1])


def ensemble_cut(ensemble_p: np.ndarray, members_p: np.ndarray, s: np.ndarray, tau: float,
                 shift: float | None) -> tuple[float, dict[str, float] | None]:
    """A fold ensemble's decision rule, fit on the rows its members were trained on: ``(threshold, group
    thresholds or None)``.

    Without a parity shift the threshold that approves the members' rate at ``tau``
    (:func:`ensemble_threshold`); with one, ``tau`` and the group thresholds from the ensemble's own
    quantiles (:mod:`fairmon.feu._group_thresholds`). One definition for the deployed ensemble
    (:func:`fairmon.feu._choose._deployed`) and its nested check (:mod:`fairmon.feu._nested`).

    Example
    -------
    >>> members = np.array([[0.9, 0.8, 0.7, 0.1], [0.9, 0.1, 0.1, 0.1]])
    >>> thr, groups = ensemble_cut(members.mean(axis=0), members, np.array(list("abab")), 0.5, None)
    >>> round(thr, 3), groups
    (0.425, None)
    """
    if shift is None:
        return ensemble_threshold(ensemble_p, members_p, tau), None
    return float(tau), group_thresholds(tau, parity_quantiles(ensemble_p, s, tau), float(shift))


def member_rates(members_fit: np.ndarray, s_fit: np.ndarray, members_p: np.ndarray, s: np.ndarray, tau: float,
                 shift: float | None, fold: np.ndarray | None = None) -> np.ndarray:
    """``(members,)`` each member's positive rate on rows (``members_p``, groups ``s``) by its own rule.

    A member decides ``p_k >= tau``, or with a parity shift by group thresholds from its own quantiles
    on the rows it was trained on, as each fold model decided out of fold (:mod:`fairmon.feu._crossval`):
    ``members_fit`` are the members' scores of train ∪ validation (groups ``s_fit``), ``fold`` their
    fold ids, member ``k`` trained on the rows outside fold ``k`` (None: on all of them). Recorded beside
    the ensemble's rate (``deployment.members_test_selection_rate``).

    Example
    -------
    >>> p = np.array([[0.9, 0.8, 0.2, 0.1], [0.9, 0.2, 0.7, 0.1]]); s = np.array(list("aabb"))
    >>> member_rates(p, s, p, s, 0.5, None).tolist()
    [0.5, 0.5]
    """
    s_fit = np.asarray(s_fit)
    out = np.empty(len(members_p))
    for k, (fit, p) in enumerate(zip(members_fit, members_p, strict=True)):
        own = slice(None) if fold is None else np.asarray(fold) != k
        cut = tau if shift is None else fitted_row_thresholds(fit[own], s_fit[own], s, tau, shift)
        out[k] = float((p >= cut).mean())
    return out


@functools.cache  # one class per process: torch is imported on first use
def _ensemble_class() -> type:
    import torch

    class FoldEnsemble(torch.nn.Module):
        """``k`` MLPs; one logit of the mean of their probabilities (module docstring)."""

        def __init__(self, n_inputs: int, hidden: tuple[int, ...], members: int) -> None:
            super().__init__()
            self.n_inputs = n_inputs
            self.members = torch.nn.ModuleList([build_mlp(n_inputs, hidden) for _ in range(members)])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            z = torch.stack([m(x).reshape(-1) for m in self.members])  # (members, n) logits
            F = torch.nn.functional
            out: torch.Tensor = torch.logsumexp(F.logsigmoid(z), 0) - torch.logsumexp(F.logsigmoid(-z), 0)
            return out

        def first_hidden(self, x: torch.Tensor) -> torch.Tensor | None:
            parts = [getattr(m, "first_hidden")(x) for m in self.members]  # noqa: B009 - an MLP method
            return None if any(p is None for p in parts) else torch.cat(parts, dim=1)

    FoldEnsemble.__module__ = __name__
    return FoldEnsemble
