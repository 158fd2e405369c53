"""GESD: Group-level Explanation Stability Disparity (procedural fairness of explanations).

GESD asks whether protected groups receive equally *stable* explanations (paper:
``papers/gesd-feu.md``, Algorithm 1; reference code ``horlahsunbo/GESD``). For ``m`` sampled rows ``x``:

1. ``E(x)`` is the aggregated explanation, by default ``(SHAP(x) + LIME(x)) / 2`` (eq. 1), both
   attributions of the **positive class** (P(class 1)).
2. ``N`` perturbations ``x' = x + eps``, ``eps ~ N(0, sigma^2 I)``, then each encoded position is
   independently replaced by the baseline with probability ``mask_prob`` (Algorithm 1, lines 10-13).
3. ``S(x) = mean_i 1 / (1 + ||E(x) - E(x'_i)||_1)`` (eq. 2, lines 15-18).
4. ``S_g`` is the mean of ``S`` over the sampled members of group ``g``; GESD = ``|S_0 - S_1|`` for two
   groups and the (population) variance of the group means for ``K > 2`` (lines 20-22).

Documented choices of fairmon (beyond the paper):

* **Space.** Perturbations and attributions live in the model's encoded, standardised input space
  (``model.schema``), as in the reference code, where ``baseline=0.0`` is the training mean of a
  standardised column. One-hot positions are perturbed like every other position (the reference
  label-encodes and standardises categoricals; we one-hot them), so a masked one-hot position is 0.
* **Positive class for both explainers.** The reference code takes LIME for the *predicted* label
  (``top_labels=1``), whose weights are those of class 0 on negative predictions, i.e. the sign flips
  between positive and negative predictions and a perturbation that crosses the decision boundary
  looks hugely unstable. That is a bug and is **not** copied: SHAP and LIME both explain P(class 1).
* **Batching.** All ``m * (N + 1)`` rows are explained in one batched call per explainer (the
  reference explains one row at a time), with fresh explainer randomness per row as in the reference.
* **Explainers.** ``explainer`` is a ``"+"``-joined list of component explainers whose attributions
  are averaged: ``"shap"`` = batched KernelSHAP, ``"lime"`` = batched LIME (both from
  :func:`fairmon.explain.explain`), ``"deepshap"`` = shap's ``DeepExplainer`` on a torch model's
  probability output (the reference code's SHAP), any other method name of
  :func:`fairmon.explain.explain` (e.g. ``"kernelshap-lib"``, ``"lime-lib"``, ``"gradient"``), or a
  callable ``(Z) -> attributions``. Per-component stabilities are reported too (the paper's Table II
  compares SHAP, LIME and combined).
* **Sampling.** ``sample_size`` rows are drawn without replacement (all rows when fewer). The paper
  draws a plain random sample (Algorithm 1, line 3; ``stratify=False``), which leaves a small group
  with few or no rows: with a 1 % group, 100 random rows hold none of it about a third of the time.
  ``stratify=True`` allocates the ``m`` rows equally to the groups, a group smaller than its share
  giving all its rows and the rest going to the other groups, so every group present in ``X`` is
  sampled. ``S_g`` is a mean over a random sample *within* group ``g`` either way, so stratifying does
  not change what GESD estimates, only how precisely (equal allocation minimises the variance of
  ``S_0 - S_1``).
* **Insufficient groups.** A group with fewer than ``min_group_size`` sampled rows is reported (its
  stability, size and ``sufficient=False``) but left out of the GESD value and of the tests; with
  fewer than two sufficient groups the value and p-value are ``nan`` and ``status`` says why.
* **Significance.** Two-sided Mann-Whitney U between the per-instance stabilities of each pair of
  sufficient groups (as in the paper's Table II); with ``K > 2`` the pairs are Holm-adjusted and
  ``p_value`` is the smallest adjusted p-value.

Example
-------
>>> import numpy as np, pandas as pd
>>> from sklearn.linear_model import LogisticRegression
>>> from fairmon.registry.model import Model
>>> from fairmon.schema import FeatureSchema
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
>>> schema = FeatureSchema.fit(df)
>>> model = Model(LogisticRegression().fit(schema.transform(df), df.a > 0), schema, framework="sklearn")
>>> explain = lambda Z: Z * model.estimator.coef_[0]   # any (Z) -> attributions callable
>>> res = gesd(model, df, rng.integers(0, 2, 200), X_train=df, explainer=explain, sample_size=60)
>>> round(res.value, 3) < 0.05
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairmon.errors import InsufficientDataError, MethodError, SchemaError

if TYPE_CHECKING:
    from fairmon.registry.model import Model

__all__ = [
    "gesd",
    "GESDResult",
    "GroupStability",
    "PairwiseTest",
    "perturb",
    "stability_scores",
    "group_disparity",
    "resolve_explainer",
    "ExplainerFn",
    "DEFAULT_EXPLAINER_PARAMS",
    "ERR_GROUPS_LENGTH",
    "ERR_NO_ROWS",
    "ERR_ONE_GROUP",
    "ERR_PARAM",
    "ERR_UNKNOWN_EXPLAINER",
    "ERR_ATTRIBUTION_SHAPE",
    "ERR_GROUP_COLUMN",
]

#: ``(Z) -> attributions``: encoded rows ``(n, d)`` in, positive-class attributions ``(n, d)`` out.
ExplainerFn = Callable[[np.ndarray], np.ndarray]

ERR_GROUPS_LENGTH = "groups has {got} entries but X has {expected} rows"
ERR_NO_ROWS = "GESD needs at least one row in X (and X_train); got {n}"
ERR_ONE_GROUP = "GESD compares protected groups but the sampled rows hold only {k} group(s): {groups}"
ERR_PARAM = "GESD parameter {name}={value!r} is invalid: {why}"
ERR_UNKNOWN_EXPLAINER = "unknown GESD explainer component {name!r}; use 'shap', 'lime', 'deepshap', a method of fairmon.explain.explain, or a callable"
ERR_ATTRIBUTION_SHAPE = "explainer {name!r} returned attributions of shape {got}; expected {expected}"
ERR_GROUP_COLUMN = "groups={column!r} names no column of X; columns are {columns}"

#: Default options per component (override with ``explainer_params``). The libraries' defaults
#: (LIME 5000 samples; KernelSHAP ``2M + 2048`` coalitions over 100 background rows) cost minutes
#: for the ``m * (N + 1) = 1100`` rows of one GESD evaluation on a CPU, so GESD uses lighter
#: estimators: LIME with 1000 samples, KernelSHAP with 128 coalitions over 20 background rows
#: (``background_size`` of a component takes the first rows of the sampled background). DeepSHAP
#: keeps the reference's 100 background rows.
DEFAULT_EXPLAINER_PARAMS: dict[str, dict[str, Any]] = {
    "kernelshap": {"n_samples": 128, "background_size": 20},
    "lime": {"n_samples": 1000},
}

#: Aliases of component names (the paper's "SHAP" is fairmon's batched KernelSHAP).
_ALIASES = {"shap": "kernelshap", "deep": "deepshap", "deepexplainer": "deepshap"}


# ---------------------------------------------------------------------- result objects
@dataclass(frozen=True)
class GroupStability:
    """Stability of one protected group among the sampled rows."""

    group: Any
    size: int  #: sampled rows of the group (the ``S_g`` average is over these)
    population: int  #: rows of the group in the evaluated data
    stability: float  #: ``S_g``: mean per-instance stability
    std: float
    sufficient: bool  #: ``size >= min_group_size``; insufficient groups are not in the GESD value

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": _jsonable(self.group),
            "size": self.size,
            "population": self.population,
            "stability": _nan_to_none(self.stability),
            "std": _nan_to_none(self.std),
            "sufficient": self.sufficient,
        }


@dataclass(frozen=True)
class PairwiseTest:
    """Two-sided Mann-Whitney U test between two groups' per-instance stabilities."""

    group_a: Any
    group_b: Any
    u_statistic: float
    p_value: float
    p_adjusted: float  #: Holm-adjusted over all pairs (equal to ``p_value`` for two groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_a": _jsonable(self.group_a),
            "group_b": _jsonable(self.group_b),
            "u_statistic": _nan_to_none(self.u_statistic),
            "p_value": _nan_to_none(self.p_value),
            "p_adjusted": _nan_to_none(self.p_adjusted),
        }


@dataclass(frozen=True)
class GESDResult:
    """Value, per-group stability and per-instance evidence of one GESD evaluation.

    ``value`` is ``nan`` (and ``status`` explains) when fewer than two groups are sufficient.
    ``components`` maps each component explainer to its own per-group stabilities and GESD value
    (``explainer="shap+lime"`` gives the SHAP-only and LIME-only numbers beside the combined one).
    """

    value: float
    p_value: float
    groups: tuple[GroupStability, ...]
    pairwise: tuple[PairwiseTest, ...]
    instance_index: np.ndarray  #: row positions in X of the sampled rows
    instance_group: np.ndarray  #: group of each sampled row
    instance_stability: np.ndarray  #: ``S(x)`` of each sampled row
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    elapsed_s: float = 0.0

    @property
    def insufficient_groups(self) -> list[Any]:
        return [g.group for g in self.groups if not g.sufficient]

    @property
    def group_stability(self) -> dict[Any, float]:
        return {g.group: g.stability for g in self.groups}

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the groups' stabilities differ at level ``alpha`` (False when untestable)."""
        return bool(np.isfinite(self.p_value) and self.p_value < alpha)

    def to_dict(self, *, instances: bool = True) -> dict[str, Any]:
        """JSON-ready form (``nan`` becomes ``None``); ``instances=False`` drops per-row arrays."""
        out: dict[str, Any] = {
            "metric": "gesd",
            "value": _nan_to_none(self.value),
            "p_value": _nan_to_none(self.p_value),
            "status": self.status,
            "groups": [g.to_dict() for g in self.groups],
            "insufficient_groups": [_jsonable(g) for g in self.insufficient_groups],
            "pairwise": [p.to_dict() for p in self.pairwise],
            "components": {
                name: {
                    "value": _nan_to_none(c["value"]),
                    "p_value": _nan_to_none(c["p_value"]),
                    "groups": {str(_jsonable(g)): _nan_to_none(v) for g, v in c["groups"].items()},
                }
                for name, c in self.components.items()
            },
            "settings": self.settings,
            "elapsed_s": self.elapsed_s,
        }
        if instances:
            out["instances"] = [
                {"index": int(i), "group": _jsonable(g), "stability": float(s)}
                for i, g, s in zip(self.instance_index, self.instance_group, self.instance_stability)
            ]
        return out


# ---------------------------------------------------------------------- building blocks
def perturb(
    Z: np.ndarray,
    *,
    n_perturbations: int,
    sigma: float,
    mask_prob: float,
    baseline: float | np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """GESD perturbations of every row: Gaussian noise, then masking to the baseline.

    Returns ``(m, N, d)``: ``x + eps`` with ``eps ~ N(0, sigma^2 I)``, each position then replaced by
    ``baseline`` with probability ``mask_prob`` (Algorithm 1, lines 10-13; the reference code's
    order).

    Example
    -------
    >>> P = perturb(np.ones((2, 3)), n_perturbations=4, sigma=0.0, mask_prob=0.0, baseline=0.0,
    ...             rng=np.random.default_rng(0))
    >>> P.shape, float(P.min())
    ((2, 4, 3), 1.0)
    """
    Z = np.asarray(Z, dtype=float)
    m, d = Z.shape
    noisy = Z[:, None, :] + rng.normal(0.0, sigma, size=(m, n_perturbations, d))
    mask = rng.random((m, n_perturbations, d)) < mask_prob
    base = np.broadcast_to(np.asarray(baseline, dtype=float), (d,))
    return np.where(mask, base[None, None, :], noisy)


def stability_scores(E: np.ndarray, E_perturbed: np.ndarray) -> np.ndarray:
    """Per-instance stability ``mean_i 1 / (1 + ||E(x) - E(x'_i)||_1)``: ``(m, d), (m, N, d) -> (m,)``.

    Example
    -------
    >>> stability_scores(np.zeros((1, 2)), np.ones((1, 3, 2))).tolist()
    [0.3333333333333333]
    """
    dist = np.abs(E[:, None, :] - E_perturbed).sum(axis=-1)
    return (1.0 / (1.0 + dist)).mean(axis=1)


def group_disparity(group_means: Sequence[float]) -> float:
    """GESD of group means: ``|S_0 - S_1|`` for two groups, population variance for ``K > 2``.

    Example
    -------
    >>> round(group_disparity([0.9, 0.7]), 6), round(group_disparity([0.9, 0.7, 0.8]), 6)
    (0.2, 0.006667)
    """
    s = np.asarray(list(group_means), dtype=float)
    if len(s) < 2:
        return float("nan")
    if len(s) == 2:
        return float(abs(s[0] - s[1]))
    return float(np.mean((s - s.mean()) ** 2))


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    k = len(p)
    adj = np.empty(k)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p[idx]))
        adj[idx] = running
    return adj


def _pairwise_tests(
    stab: np.ndarray, grp: np.ndarray, groups: Sequence[Any]
) -> tuple[tuple[PairwiseTest, ...], float]:
    from scipy.stats import mannwhitneyu

    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    if not pairs:
        return (), float("nan")
    stats, ps = [], []
    for a, b in pairs:
        xa, xb = stab[grp == a], stab[grp == b]
        if np.ptp(np.concatenate([xa, xb])) == 0.0:
            stats.append(len(xa) * len(xb) / 2.0)  # all values tied: no evidence of a difference
            ps.append(1.0)
            continue
        res = mannwhitneyu(xa, xb, alternative="two-sided")
        stats.append(float(res.statistic))
        ps.append(float(res.pvalue))
    p_arr = np.asarray(ps)
    adj = _holm(p_arr)
    tests = tuple(
        PairwiseTest(a, b, u, p, pa) for (a, b), u, p, pa in zip(pairs, stats, p_arr.tolist(), adj.tolist())
    )
    return tests, float(adj.min())


# ---------------------------------------------------------------------- explainers
def resolve_explainer(
    explainer: str | ExplainerFn,
    model: Model,
    *,
    background: np.ndarray,
    train: np.ndarray,
    random_state: int,
    device: str | None,
    params: dict[str, dict[str, Any]] | None = None,
) -> list[tuple[str, ExplainerFn]]:
    """Component explainers of an ``explainer`` spec, each a ``(Z) -> attributions`` callable.

    ``"shap+lime"`` -> batched KernelSHAP and LIME (positive class) of :func:`fairmon.explain.explain`;
    ``"deepshap"`` -> shap's DeepExplainer on the torch model's P(class 1); other names are passed to
    :func:`fairmon.explain.explain` as ``method``. ``params`` maps a component name to extra keyword
    arguments for it (e.g. ``{"lime": {"n_samples": 1000}}``).
    """
    params = {k: dict(v) for k, v in (DEFAULT_EXPLAINER_PARAMS | (params or {})).items()}
    if callable(explainer):
        return [(getattr(explainer, "__name__", "custom"), explainer)]
    names = [n.strip().lower() for n in str(explainer).split("+") if n.strip()]
    if not names:
        raise MethodError(ERR_UNKNOWN_EXPLAINER.format(name=explainer))
    out: list[tuple[str, ExplainerFn]] = []
    for k, raw in enumerate(names):
        name = _ALIASES.get(raw, raw)
        extra = dict(params.get(raw, params.get(name, {})))
        bg_rows = extra.pop("background_size", None)
        bg = background if bg_rows is None else background[: int(bg_rows)]
        if name == "deepshap":
            out.append((raw, _deep_shap_fn(model, bg, device)))
        else:
            out.append((raw, _library_fn(model, name, bg, train, random_state + 7919 * k, device, extra)))
    return out


def _library_fn(
    model: Model,
    method: str,
    background: np.ndarray,
    train: np.ndarray,
    random_state: int,
    device: str | None,
    extra: dict[str, Any],
) -> ExplainerFn:
    try:
        from fairmon.explain import explain as _explain
    except ImportError as exc:  # the explainers module is a sibling deliverable
        raise MethodError(f"fairmon.explain.explain is not available: {exc}") from exc
    # LIME's feature statistics come from the whole training matrix (the reference passes X_train);
    # SHAP integrates over a sample of background rows (the reference uses 100).
    bg = train if "lime" in method else background

    def fn(Z: np.ndarray) -> np.ndarray:
        try:
            return np.asarray(
                _explain(
                    model, Z, method=method,  # type: ignore[arg-type]
                    target="positive", background=bg, random_state=random_state, device=device, **extra,
                ),
                dtype=float,
            )
        except (ValueError, TypeError) as exc:
            raise MethodError(ERR_UNKNOWN_EXPLAINER.format(name=method) + f" ({exc})") from exc

    fn.__name__ = method
    return fn


def _deep_shap_fn(model: Model, background: np.ndarray, device: str | None) -> ExplainerFn:
    """shap.DeepExplainer on P(class 1) of a torch model (the reference code's SHAP)."""
    import shap
    import torch

    from fairmon._device import resolve_device

    module = model.require_differentiable("deepshap")
    dev = resolve_device(device)

    class _PositiveProbability(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner
            self.sigmoid = torch.nn.Sigmoid()
            self.softmax = torch.nn.Softmax(dim=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = self.inner(x)
            if out.ndim == 2 and out.shape[1] == 2:
                return self.softmax(out)[:, 1:2]
            return self.sigmoid(out.reshape(-1, 1))

    wrapped = _PositiveProbability(module).to(dev).eval()
    bg = torch.as_tensor(background, dtype=torch.float32, device=dev)
    explainer = shap.DeepExplainer(wrapped, bg)

    def fn(Z: np.ndarray) -> np.ndarray:
        vals = explainer.shap_values(torch.as_tensor(Z, dtype=torch.float32, device=dev), check_additivity=False)
        if isinstance(vals, list):
            vals = vals[0]
        arr = np.asarray(vals, dtype=float)
        return arr.reshape(arr.shape[0], -1)

    fn.__name__ = "deepshap"
    return fn


# ---------------------------------------------------------------------- main entry
def gesd(
    model: Model,
    X: pd.DataFrame | np.ndarray,
    groups: Sequence[Any] | np.ndarray | pd.Series | str,
    *,
    X_train: pd.DataFrame | np.ndarray,
    explainer: str | ExplainerFn = "shap+lime",
    n_perturbations: int = 10,
    sigma: float = 0.1,
    mask_prob: float = 0.2,
    baseline: float | Sequence[float] | np.ndarray = 0.0,
    sample_size: int = 100,
    stratify: bool = False,
    min_group_size: int = 10,
    background_size: int = 100,
    explainer_params: dict[str, dict[str, Any]] | None = None,
    random_state: int = 0,
    device: str | None = None,
) -> GESDResult:
    """Group-level Explanation Stability Disparity of ``model`` on ``X`` across ``groups``.

    Parameters
    ----------
    model
        A :class:`fairmon.registry.Model` (scikit-learn or torch; ``"deepshap"`` needs torch).
    X
        Evaluation rows: a raw DataFrame with the model schema's columns (encoded through
        ``model.schema``) or the already encoded, standardised matrix ``(n, schema.n_encoded)``.
    groups
        Protected group of every row of ``X`` (array-like of length ``n``), or the name of a column of
        the raw DataFrame ``X`` that holds it.
    X_train
        Training rows in either form: SHAP's background (``background_size`` rows sampled) and LIME's
        feature statistics, as in the reference code.
    explainer
        ``"+"``-joined components averaged into ``E(x)`` (default ``"shap+lime"``, the paper's
        aggregate), or a callable ``(Z) -> attributions``. See the module docstring.
    n_perturbations, sigma, mask_prob, baseline
        ``N``, the Gaussian scale, the masking probability and the masking value (a scalar or one
        value per encoded position) of Algorithm 1; reference defaults 10, 0.1, 0.2, 0.0.
    sample_size
        ``m`` rows explained (reference 100).
    stratify
        Allocate the ``m`` rows equally to the groups (a smaller group gives all its rows, the others
        share the rest) instead of a plain random sample (the paper's).
    min_group_size
        Fewest sampled rows a group needs to enter the GESD value and the tests.
    background_size
        Background rows for SHAP sampled from ``X_train`` (reference 100).
    explainer_params
        Keyword arguments per component, e.g. ``{"lime": {"n_samples": 5000}}``; a component's entry
        replaces its :data:`DEFAULT_EXPLAINER_PARAMS` entry (KernelSHAP 128 coalitions over 20
        background rows, LIME 1000 samples). ``background_size`` inside an entry limits that
        component's background rows.
    random_state, device
        Seed of the sampling, the perturbations and the explainers; torch device (None = auto).

    Returns
    -------
    GESDResult

    Example
    -------
    See the module docstring.
    """
    t0 = time.perf_counter()
    _check_params(n_perturbations, sigma, mask_prob, sample_size, min_group_size, background_size)
    Z = _encode(model, X, "X")
    Z_train = _encode(model, X_train, "X_train")
    g = _groups_array(X, groups, len(Z))
    rng = np.random.default_rng(random_state)

    idx = _sample(g, sample_size, stratify, rng)
    Zs, gs = Z[idx], g[idx]
    labels = _unique_in_order(gs)
    if len(labels) < 2:
        raise InsufficientDataError(ERR_ONE_GROUP.format(k=len(labels), groups=[_jsonable(x) for x in labels]))
    base = np.asarray(baseline, dtype=float)
    if base.ndim not in (0, 1) or (base.ndim == 1 and base.shape[0] != Z.shape[1]):
        raise MethodError(ERR_PARAM.format(name="baseline", value=baseline, why=f"need a scalar or {Z.shape[1]} values"))
    P = perturb(Zs, n_perturbations=n_perturbations, sigma=sigma, mask_prob=mask_prob, baseline=base, rng=rng)
    m, d = Zs.shape
    rows = np.concatenate([Zs, P.reshape(m * n_perturbations, d)], axis=0)

    bg_idx = rng.choice(len(Z_train), size=min(background_size, len(Z_train)), replace=False)
    components = resolve_explainer(
        explainer, model, background=Z_train[np.sort(bg_idx)], train=Z_train,
        random_state=int(rng.integers(0, 2**31 - 1)), device=device, params=explainer_params,
    )
    attributions: list[tuple[str, np.ndarray]] = []
    for name, fn in components:
        A = np.asarray(fn(rows), dtype=float)
        if A.shape != rows.shape:
            raise MethodError(ERR_ATTRIBUTION_SHAPE.format(name=name, got=A.shape, expected=rows.shape))
        attributions.append((name, A))
    agg = np.mean([A for _, A in attributions], axis=0)

    stab = _split_stability(agg, m, n_perturbations, d)
    result_groups, value, pairwise, p_value, status = _summarise(stab, gs, g, labels, min_group_size)

    comp_summary: dict[str, dict[str, Any]] = {}
    if len(attributions) > 1:
        for name, A in attributions:
            s_c = _split_stability(A, m, n_perturbations, d)
            gr_c, v_c, _, p_c, _ = _summarise(s_c, gs, g, labels, min_group_size)
            comp_summary[name] = {"value": v_c, "p_value": p_c, "groups": {r.group: r.stability for r in gr_c}}

    settings = {
        "explainer": explainer if isinstance(explainer, str) else getattr(explainer, "__name__", "custom"),
        "n_perturbations": n_perturbations,
        "sigma": sigma,
        "mask_prob": mask_prob,
        "baseline": base.tolist(),
        "sample_size": sample_size,
        "sampled": int(m),
        "stratify": stratify,
        "min_group_size": min_group_size,
        "background_size": background_size,
        "random_state": random_state,
        "device": None if device is None else str(device),
    }
    return GESDResult(
        value=value,
        p_value=p_value,
        groups=tuple(result_groups),
        pairwise=pairwise,
        instance_index=idx,
        instance_group=gs,
        instance_stability=stab,
        components=comp_summary,
        settings=settings,
        status=status,
        elapsed_s=round(time.perf_counter() - t0, 4),
    )


def _split_stability(A: np.ndarray, m: int, n: int, d: int) -> np.ndarray:
    return stability_scores(A[:m], A[m:].reshape(m, n, d))


def _summarise(
    stab: np.ndarray, gs: np.ndarray, g_all: np.ndarray, labels: list[Any], min_group_size: int
) -> tuple[list[GroupStability], float, tuple[PairwiseTest, ...], float, str]:
    out: list[GroupStability] = []
    for lab in labels:
        s = stab[gs == lab]
        out.append(
            GroupStability(
                group=lab,
                size=int(len(s)),
                population=int(np.sum(g_all == lab)),
                stability=float(s.mean()),
                std=float(s.std(ddof=1)) if len(s) > 1 else float("nan"),
                sufficient=bool(len(s) >= min_group_size),
            )
        )
    ok = [r.group for r in out if r.sufficient]
    if len(ok) < 2:
        status = f"insufficient: {len(ok)} group(s) with at least {min_group_size} sampled rows"
        return out, float("nan"), (), float("nan"), status
    value = group_disparity([r.stability for r in out if r.sufficient])
    pairwise, p_value = _pairwise_tests(stab, gs, ok)
    status = "ok" if len(ok) == len(out) else "ok (insufficient groups left out)"
    return out, value, pairwise, p_value, status


def _check_params(n: int, sigma: float, p: float, m: int, min_group: int, bg: int) -> None:
    checks = [
        ("n_perturbations", n, isinstance(n, int | np.integer) and n >= 1, "need an integer >= 1"),
        ("sigma", sigma, math.isfinite(float(sigma)) and sigma >= 0, "need a finite value >= 0"),
        ("mask_prob", p, 0.0 <= float(p) <= 1.0, "need a probability in [0, 1]"),
        ("sample_size", m, isinstance(m, int | np.integer) and m >= 2, "need an integer >= 2"),
        ("min_group_size", min_group, isinstance(min_group, int | np.integer) and min_group >= 1, "need an integer >= 1"),
        ("background_size", bg, isinstance(bg, int | np.integer) and bg >= 1, "need an integer >= 1"),
    ]
    for name, value, ok, why in checks:
        if not ok:
            raise MethodError(ERR_PARAM.format(name=name, value=value, why=why))


def _encode(model: Model, X: Any, what: str) -> np.ndarray:
    if isinstance(X, pd.DataFrame):
        Z = model.schema.transform(X)
    else:
        Z = np.asarray(X, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != model.schema.n_encoded:
            raise SchemaError(
                f"{what} has shape {Z.shape}; pass a raw DataFrame with the schema's columns or the encoded "
                f"matrix (n, {model.schema.n_encoded})"
            )
    if len(Z) == 0:
        raise InsufficientDataError(ERR_NO_ROWS.format(n=0))
    return Z


def _groups_array(X: Any, groups: Any, n: int) -> np.ndarray:
    if isinstance(groups, str):
        if not isinstance(X, pd.DataFrame) or groups not in X.columns:
            cols = list(X.columns) if isinstance(X, pd.DataFrame) else []
            raise SchemaError(ERR_GROUP_COLUMN.format(column=groups, columns=cols))
        groups = X[groups]
    g = np.asarray(pd.Series(groups).to_numpy(), dtype=object) if not isinstance(groups, np.ndarray) else groups
    if g.ndim != 1 or len(g) != n:
        raise SchemaError(ERR_GROUPS_LENGTH.format(got=len(g) if g.ndim else 0, expected=n))
    return g


def _unique_in_order(g: np.ndarray) -> list[Any]:
    try:
        return sorted(pd.unique(pd.Series(g)).tolist())
    except TypeError:  # mixed, unorderable labels: keep first-seen order
        return pd.unique(pd.Series(g)).tolist()


def _sample(g: np.ndarray, m: int, stratify: bool, rng: np.random.Generator) -> np.ndarray:
    n = len(g)
    if not stratify:
        if m >= n:
            return np.arange(n)
        return np.sort(rng.choice(n, size=m, replace=False))
    labels = _unique_in_order(g)
    members = [np.flatnonzero(g == lab) for lab in labels]
    shares = _equal_allocation([len(mem) for mem in members], min(m, n))
    picks = [rng.choice(mem, size=k, replace=False) for mem, k in zip(members, shares, strict=True)]
    return np.sort(np.concatenate(picks))


def _equal_allocation(sizes: list[int], m: int) -> list[int]:
    """``m`` rows shared equally over groups of ``sizes``; a group smaller than its share gives all its
    rows and the remainder is shared by the larger groups (smallest groups served first).

    >>> _equal_allocation([20, 1980], 100), _equal_allocation([50, 450], 60), _equal_allocation([9, 9, 9], 10)
    ([20, 80], [30, 30], [4, 3, 3])
    """
    shares = [0] * len(sizes)
    left = m
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    for pos, i in enumerate(order):
        shares[i] = min(sizes[i], math.ceil(left / (len(order) - pos)))
        left -= shares[i]
    return shares


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _nan_to_none(v: Any) -> Any:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f
