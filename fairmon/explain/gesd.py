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
* **Noise floor.** GESD is positive even with exchangeable groups (random labels on Bail at m=100,
  N=10 gave 0.0002-0.040, above the paper's reported values). ``noise_floor`` is the 95th percentile
  (``noise_floor_quantile``) of GESD over ``noise_floor_permutations`` random relabellings of the
  sampled rows of the sufficient groups, computed from the same per-instance stabilities (no
  re-explanation), seeded by ``random_state``. A value at or below it (``within_noise``) is noise.

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
>>> res.within_noise == (res.value <= res.noise_floor)
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairmon.errors import InsufficientDataError, MethodError, SchemaError
from fairmon.explain._gesd_explainers import (
    DEFAULT_EXPLAINER_PARAMS,
    ERR_UNKNOWN_EXPLAINER,
    ExplainerFn,
    resolve_explainer,
)
from fairmon.explain._gesd_result import GESDResult, GroupStability, PairwiseTest, _jsonable
from fairmon.explain._gesd_stats import (
    _split_stability,
    _summarise,
    group_disparity,
    noise_floor,
    perturb,
    stability_scores,
)

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

ERR_GROUPS_LENGTH = "groups has {got} entries but X has {expected} rows"
ERR_NO_ROWS = "GESD needs at least one row in X (and X_train); got {n}"
ERR_ONE_GROUP = "GESD compares protected groups but the sampled rows hold only {k} group(s): {groups}"
ERR_PARAM = "GESD parameter {name}={value!r} is invalid: {why}"
ERR_ATTRIBUTION_SHAPE = "explainer {name!r} returned attributions of shape {got}; expected {expected}"
ERR_GROUP_COLUMN = "groups={column!r} names no column of X; columns are {columns}"


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
    noise_floor_permutations: int = 1000,
    noise_floor_quantile: float = 0.95,
) -> GESDResult:
    """Group-level Explanation Stability Disparity of ``model`` on ``X`` across ``groups``.

    Parameters
    ----------
    model
        A :class:`fairmon.registry.Model` (scikit-learn or torch; ``"deepshap"`` needs torch).
    X
        Evaluation rows: a raw DataFrame with the model schema's columns (encoded through
        ``model.schema``; only the sampled rows are encoded, so a row the schema cannot encode
        raises only when it is sampled) or the already encoded, standardised matrix
        ``(n, schema.n_encoded)``.
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
        Seed of the sampling, the perturbations, the explainers and the noise floor's permutations;
        torch device (None = auto).
    noise_floor_permutations, noise_floor_quantile
        Relabellings of the sampled rows' groups for the noise floor (0 = not computed) and the
        quantile of their GESD values reported as ``noise_floor`` (see :class:`GESDResult`). The
        per-instance stabilities are reused, so the floor costs no explainer call.

    Returns
    -------
    GESDResult

    Example
    -------
    See the module docstring.
    """
    t0 = time.perf_counter()
    _check_params(n_perturbations, sigma, mask_prob, sample_size, min_group_size, background_size)
    _check_floor_params(noise_floor_permutations, noise_floor_quantile)
    # a raw frame is encoded for the sampled rows only (the rows' encodings do not depend on each
    # other): a 1M-row window is not encoded whole to explain a few dozen of its rows
    raw = isinstance(X, pd.DataFrame) and len(X) > 0
    if raw:
        model.schema.check_frame(X)
        n_rows, d_enc = len(X), model.schema.n_encoded
    else:
        Z = _encode(model, X, "X")
        n_rows, d_enc = Z.shape
    Z_train = _encode(model, X_train, "X_train")
    g = _groups_array(X, groups, n_rows)
    rng = np.random.default_rng(random_state)

    idx = _sample(g, sample_size, stratify, rng)
    Zs = _encode(model, X.iloc[idx], "X") if isinstance(X, pd.DataFrame) and raw else Z[idx]
    gs = g[idx]
    labels = _unique_in_order(gs)
    if len(labels) < 2:
        raise InsufficientDataError(ERR_ONE_GROUP.format(k=len(labels), groups=[_jsonable(x) for x in labels]))
    base = np.asarray(baseline, dtype=float)
    if base.ndim not in (0, 1) or (base.ndim == 1 and base.shape[0] != d_enc):
        raise MethodError(ERR_PARAM.format(name="baseline", value=baseline, why=f"need a scalar or {d_enc} values"))
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
    # its own stream, so the sampling, perturbations and explainer seeds are those of before the floor
    floor_rng = np.random.default_rng([random_state, 0x6E6F6973])
    sufficient = [r.group for r in result_groups if r.sufficient]

    def floor_of(s: np.ndarray) -> float:
        return noise_floor(s, gs, sufficient, n_permutations=noise_floor_permutations,
                           quantile=noise_floor_quantile, rng=floor_rng)

    floor = floor_of(stab)

    comp_summary: dict[str, dict[str, Any]] = {}
    if len(attributions) > 1:
        for name, A in attributions:
            s_c = _split_stability(A, m, n_perturbations, d)
            gr_c, v_c, _, p_c, _ = _summarise(s_c, gs, g, labels, min_group_size)
            comp_summary[name] = {"value": v_c, "p_value": p_c, "groups": {r.group: r.stability for r in gr_c},
                                  "noise_floor": floor_of(s_c)}

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
        "noise_floor_permutations": noise_floor_permutations,
        "noise_floor_quantile": noise_floor_quantile,
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
        noise_floor=floor,
        noise_floor_quantile=noise_floor_quantile,
        noise_floor_permutations=noise_floor_permutations,
    )


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


def _check_floor_params(n: int, q: float) -> None:
    if not (isinstance(n, int | np.integer) and n >= 0):
        raise MethodError(ERR_PARAM.format(name="noise_floor_permutations", value=n, why="need an integer >= 0"))
    if not 0.0 < float(q) < 1.0:
        raise MethodError(ERR_PARAM.format(name="noise_floor_quantile", value=q, why="need a quantile in (0, 1)"))


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
    labels: list[Any] = pd.unique(pd.Series(g)).tolist()
    try:
        return sorted(labels)
    except TypeError:  # mixed, unorderable labels: keep first-seen order
        return labels


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
