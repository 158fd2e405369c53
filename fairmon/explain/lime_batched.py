"""Batched LIME: the estimator of ``lime.lime_tabular.LimeTabularExplainer``, many rows at once in torch.

Why: the library explains one row at a time with Python loops (per-column sampling, a scipy
truncated-normal call per feature, two scikit-learn ridge fits). Monitoring explains hundreds of rows
per window, and GESD explains every row again under perturbation, so fairmon runs the *same
estimator* as tensor operations on CPU or CUDA.

The estimator (lime 0.2.0.1 defaults, checked against its source):

* ``discretize_continuous=True`` with the quartile discretiser: per continuous feature the bin edges
  are ``unique(percentile(background, [25, 50, 75]))``; a value's bin is ``searchsorted(edges, x)``
  (left side);
* a perturbation sample draws, independently per feature, a bin (continuous) or a value (categorical
  features, i.e. one-hot columns) with the background frequencies; a continuous value is drawn from
  the normal truncated to the bin ``[min, max]`` with the bin's mean and std (+1e-11) (inverse
  CDF in float64, mirrored into the lower tail; lime calls ``scipy.stats.truncnorm``). lime returns
  the truncated-normal *z bound* instead of a value when a bin's bounds coincide (a degenerate bin);
  this is reproduced so both implementations sample the same distribution;
* the interpretable representation is binary: 1 where the sample falls in the instance's bin (equals
  the instance's value for categorical columns); sample 0 is the instance itself;
* distance = Euclidean distance of the binary rows to the all-ones row; kernel
  ``sqrt(exp(-d² / w²))`` with ``w = 0.75·sqrt(d)``;
* the explanation is the coefficient vector of ``Ridge(alpha=1, fit_intercept=True)`` fitted with
  those sample weights on the probability of the explained class — lime's default
  ``model_regressor``. lime's ``feature_selection='auto'`` only chooses *which* features enter the
  final ridge; explaining all ``d`` features (``num_features=d``) selects every feature, so no
  selection step is needed here (the ``lime-lib`` path passes ``num_features=d``).

Random draws come from torch's generator, not lime's numpy stream: the two implementations sample
the same distribution but not the same numbers (compare them statistically).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon.errors import MethodError
from fairmon.explain._common import Target, check_matrix, resolve_target
from fairmon.explain._prob import FnInput, as_prob_fn

if TYPE_CHECKING:
    import torch

__all__ = ["lime_batched", "LimeStats", "default_categorical", "ERR_SAMPLES"]

ERR_SAMPLES = "n_samples must be an integer >= 2, got {value!r}"
_MAX_ELEMENTS = 1 << 23  # rows x samples x features held at once (float64: 64 MiB)
_BLOCK = 1 << 16  # continuous values drawn per block on the CPU (temporaries of 512 KiB)


def default_categorical(background: np.ndarray) -> np.ndarray:
    """Columns whose background values are all 0/1: treated as categorical (one-hot) by LIME."""
    return np.all((background == 0.0) | (background == 1.0), axis=0)


@dataclass(frozen=True)
class LimeStats:
    """Per-feature sampling tables learnt from the background (lime's training data).

    ``values[j, b]`` is the categorical value (or the continuous bin index) of option ``b`` of
    feature ``j``; ``cum[j]`` the cumulative frequencies; ``edges[j]`` the quartile edges padded with
    ``+inf``; ``means/stds/mins/maxs[j, b]`` the per-bin statistics of continuous features.
    """

    categorical: np.ndarray
    values: np.ndarray
    cum: np.ndarray
    edges: np.ndarray
    means: np.ndarray
    stds: np.ndarray
    mins: np.ndarray
    maxs: np.ndarray

    @classmethod
    def fit(cls, background: np.ndarray, categorical: np.ndarray) -> LimeStats:
        B, d = background.shape
        n_opts = 4
        for jc in np.flatnonzero(categorical):
            n_opts = max(n_opts, len(np.unique(background[:, jc])))
        values = np.zeros((d, n_opts))
        freqs = np.zeros((d, n_opts))
        edges = np.full((d, 3), np.inf)
        means = np.zeros((d, 4))
        stds = np.ones((d, 4))
        mins = np.zeros((d, 4))
        maxs = np.zeros((d, 4))
        n_used = [1] * d
        for j in range(d):
            col = background[:, j]
            if categorical[j]:
                vals, counts = np.unique(col, return_counts=True)
                values[j, : len(vals)] = vals
                freqs[j, : len(vals)] = counts / counts.sum()
                n_used[j] = len(vals)
                continue
            qts = np.unique(np.array(np.percentile(col, [25, 50, 75])))
            edges[j, : len(qts)] = qts
            disc = np.searchsorted(qts, col)
            for b in range(len(qts) + 1):
                sel = col[disc == b]
                means[j, b] = 0.0 if len(sel) == 0 else float(np.mean(sel))
                stds[j, b] = (0.0 if len(sel) == 0 else float(np.std(sel))) + 1e-11
            mins[j, : len(qts) + 1] = [col.min(), *qts.tolist()]
            maxs[j, : len(qts) + 1] = [*qts.tolist(), col.max()]
            bins, counts = np.unique(disc, return_counts=True)
            values[j, : len(bins)] = bins
            freqs[j, : len(bins)] = counts / counts.sum()
            n_used[j] = len(bins)
        cum = np.cumsum(freqs, axis=1)
        for j in range(d):  # guard rounding: the last used option ends at exactly 1, padding has zero width
            cum[j, n_used[j] - 1 :] = 1.0
            values[j, n_used[j] :] = values[j, n_used[j] - 1]  # padding repeats the last value (zero step)
        return cls(np.asarray(categorical, bool), values, cum, edges, means, stds, mins, maxs)


def lime_batched(
    f: Any,
    Z: np.ndarray,
    *,
    background: np.ndarray,
    target: Target = "predicted",
    n_samples: int = 5000,
    kernel_width: float | None = None,
    alpha: float = 1.0,
    categorical: np.ndarray | None = None,
    random_state: int | None = 0,
    device: str | None = None,
    fn_input: FnInput = "numpy",
    max_elements: int = _MAX_ELEMENTS,
) -> np.ndarray:
    """LIME attributions ``(n, d)`` of many encoded rows at once (lime's tabular estimator).

    Parameters
    ----------
    f : Model or callable
        A :class:`fairmon.registry.Model` or a probability function of encoded rows (see
        :mod:`fairmon.explain._prob`).
    Z : ndarray (n, d)
        Encoded rows to explain.
    background : ndarray (m, d)
        lime's ``training_data``: quartiles, bin statistics and sampling frequencies come from it.
    target : {"positive", "predicted"}
        Explain P(class 1), or each row's predicted class.
    n_samples : int
        Perturbation samples per row (lime's ``num_samples``, default 5000), including the row.
    kernel_width : float, optional
        Defaults to lime's ``0.75 * sqrt(d)``.
    alpha : float
        Ridge penalty of the local surrogate; 1.0 is lime's default ``Ridge(alpha=1)``. Use 0 for
        an unregularised weighted least-squares fit.
    categorical : bool ndarray (d,), optional
        Categorical (one-hot) columns, sampled by value frequency instead of quartile bins.
        Defaults to the columns whose background values are all 0/1.
    random_state : int
        Seeds torch's generator; same inputs give the same attributions.
    device : str, optional
        ``None``/"auto" (CUDA when available), "cpu" or "cuda".

    Example
    -------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> f = lambda Z: 1 / (1 + np.exp(-(2 * Z[:, 0] - Z[:, 2])))
    >>> E = lime_batched(f, X[:4], background=X, target="positive", n_samples=500, device="cpu")
    >>> E.shape, bool((np.abs(E[:, 0]) > np.abs(E[:, 1])).all())
    ((4, 3), True)
    """
    import torch

    from fairmon._device import resolve_device, torch_generator

    if not isinstance(n_samples, (int, np.integer)) or isinstance(n_samples, bool) or n_samples < 2:
        raise MethodError(ERR_SAMPLES.format(value=n_samples))
    Z = check_matrix(Z)
    d = Z.shape[1]
    bg = check_matrix(background, name="background", width=d)
    if alpha < 0:
        raise MethodError(f"alpha must be >= 0, got {alpha}")
    cat = default_categorical(bg) if categorical is None else np.asarray(categorical, dtype=bool)
    if cat.shape != (d,):
        raise MethodError(f"categorical must be a boolean mask of length {d}, got shape {cat.shape}")
    dev = resolve_device(device)
    prob = as_prob_fn(f, device=dev, fn_input=fn_input)
    gen = torch_generator(random_state, dev)
    stats = LimeStats.fit(bg, cat)
    kw = float(kernel_width) if kernel_width is not None else math.sqrt(d) * 0.75

    T = _tensors(stats, dev)
    Zt = torch.as_tensor(Z, dtype=torch.float64, device=dev)
    labels = resolve_target(target, prob, Zt)
    S = int(n_samples)
    rows_per_chunk = max(1, int(max_elements // (S * d)))
    out = torch.empty((Z.shape[0], d), dtype=torch.float64, device=dev)
    for start in range(0, Z.shape[0], rows_per_chunk):
        x = Zt[start : start + rows_per_chunk]
        binary, inverse = _sample(x, S, T, gen, prob.work_dtype)
        R = x.shape[0]
        p1 = prob.p1_chunked(inverse.reshape(R * S, d)).reshape(R, S)
        lab = labels[start : start + R].to(torch.float64).unsqueeze(1)
        y = lab * p1 + (1.0 - lab) * (1.0 - p1)
        dist2 = d - binary.sum(dim=2).to(torch.float64)  # integer counts <= d: exact in float32
        w = torch.sqrt(torch.exp(-dist2 / kw**2))
        out[start : start + R] = weighted_ridge(binary, y, w, alpha)
    return out.cpu().numpy()


def weighted_ridge(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    """Batched ``Ridge(alpha, fit_intercept=True).fit(X, y, sample_weight=w).coef_``: (R,S,d) -> (R,d).

    Same objective as scikit-learn: ``sum_i w_i (y_i - x_i b - c)^2 + alpha |b|^2`` solved after
    weighted centring. The Gram products run in ``X``'s dtype (float32 for torch models: binary
    data, centred before the product so no cancellation; ~1e-6 relative error, far below the
    Monte-Carlo noise) and the solve in float64. A singular system (alpha=0 with collinear columns)
    falls back to the minimum-norm least-squares solution, as scikit-learn's solvers do.
    """
    import torch

    dt = X.dtype
    w = w.to(torch.float64)
    y = y.to(torch.float64)
    sw = w.sum(dim=1, keepdim=True)
    xm = torch.bmm(w.to(dt).unsqueeze(1), X).squeeze(1).to(torch.float64) / sw
    ym = (w * y).sum(dim=1, keepdim=True) / sw
    sq = torch.sqrt(w)
    Xs = (X - xm.to(dt).unsqueeze(1)) * sq.to(dt).unsqueeze(2)
    ys = ((y - ym) * sq).to(dt)
    A = torch.bmm(Xs.transpose(1, 2), Xs).to(torch.float64)
    b = torch.bmm(Xs.transpose(1, 2), ys.unsqueeze(2)).squeeze(2).to(torch.float64)
    d = X.shape[2]
    if alpha > 0:
        A = A + alpha * torch.eye(d, dtype=A.dtype, device=A.device)
        return torch.linalg.solve(A, b)
    return (torch.linalg.pinv(A, hermitian=True) @ b.unsqueeze(2)).squeeze(2)


def _tensors(stats: LimeStats, dev: torch.device) -> dict[str, torch.Tensor]:
    import torch

    def t(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, device=dev)

    return {
        "cat": t(stats.categorical),
        "values": t(stats.values).double(),
        "thresholds": t(_option_thresholds(stats.cum)),
        "edges": t(stats.edges).double().contiguous(),
        "cont_idx": t(np.flatnonzero(~stats.categorical)).to(torch.int64),
        "multi_idx": t(np.flatnonzero(stats.cum[:, 1] < 1.0)).to(torch.int64),  # > 2 options
        # columns whose option k does not have the value k (anything but 0/1 one-hot columns and
        # continuous columns with all four quartile bins populated): their values are looked up
        "lookup_idx": t(np.flatnonzero(_lookup_columns(stats))).to(torch.int64),
        "bin_table": t(_bin_table(stats)),
    }


def _option_thresholds(cum: np.ndarray) -> np.ndarray:
    """int32 ``(d, n_opt - 1)``: a uniform 32-bit integer ``u`` (read as signed) draws an option past
    ``k`` exactly when ``u > t[j, k]``.

    ``t = ceil(cum · 2^32) − 2^31 − 1`` gives ``P(u > t) = 1 − ceil(cum · 2^32) / 2^32``: the
    background frequencies to within 2^-32 (lime's float64 draws resolve 2^-53; the counts behind
    the frequencies are far coarser), and exactly 0 where ``cum`` is 1 (options past the last).
    One raw 32-bit word per draw is ~3x cheaper than a float uniform.
    """
    t = np.ceil(np.clip(cum[:, :-1], 0.0, 1.0) * 2.0**32) - 2.0**31 - 1
    return np.clip(t, -(2.0**31), 2.0**31 - 1).astype(np.int32)


def _lookup_columns(stats: LimeStats) -> np.ndarray:
    """(d,) bool: some option k that can be drawn (cumulative frequency before it < 1) has a value != k."""
    k = np.arange(stats.values.shape[1])
    drawable = np.concatenate([np.ones((len(stats.cum), 1), dtype=bool), stats.cum[:, :-1] < 1.0], axis=1)
    return ((stats.values != k) & drawable).any(axis=1)


def _bin_table(stats: LimeStats) -> np.ndarray:
    """Per (feature, bin), flattened as ``feature * 4 + bin``: the constants of its truncated normal.

    Columns ``[shift, scale, a, b, cdf_a, cdf_width, sign]``: a draw is ``shift + scale * z`` with
    ``z`` from :func:`_truncnorm_draw` on the last five (:func:`_truncnorm_constants` of the bin's
    z bounds). Computed once per bin instead of once per sample (the CDF calls dominated LIME's
    sampling). lime returns the lower z bound itself for a degenerate bin (min == max): shift = that
    bound, scale = 0.
    """
    lo = (stats.mins - stats.means) / stats.stds
    hi = (stats.maxs - stats.means) / stats.stds
    degenerate = lo == hi
    shift = np.where(degenerate, lo, stats.means)
    scale = np.where(degenerate, 0.0, stats.stds)
    table = np.concatenate([shift[..., None], scale[..., None], _truncnorm_constants(lo, hi)], axis=-1)
    return table.reshape(-1, 7)


def _truncnorm_constants(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(..., 5)`` ``[a, b, cdf_a, cdf_width, sign]`` of the standard normal truncated to ``[lo, hi]``.

    A bound pair in the upper tail (``lo > 0``) is mirrored into the lower tail, where the CDF
    differences stay well conditioned; ``sign`` mirrors a draw back.
    """
    from scipy.special import ndtr

    flip = lo > 0
    a = np.where(flip, -hi, lo)
    b = np.where(flip, -lo, hi)
    ca = ndtr(a)
    return np.stack([a, b, ca, ndtr(b) - ca, np.where(flip, -1.0, 1.0)], axis=-1)


def _truncnorm_draw(c: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Truncated standard normal by inverse CDF (exact in distribution, float64): ``c`` (n, 5) rows of
    :func:`_truncnorm_constants`, ``u`` (n,) uniforms.

    One uniform per value and no data-dependent indexing: rejection sampling needed a gather /
    scatter per round (and every round for lime's degenerate bins, which never accept).
    """
    import torch

    a, b, ca, cw, sign = c.unbind(dim=1)
    p = (ca + u * cw).clamp_(torch.finfo(u.dtype).tiny, 1 - torch.finfo(u.dtype).eps)
    return sign * torch.minimum(torch.maximum(torch.special.ndtri(p), a), b)


def _sample(
    x: torch.Tensor, S: int, T: dict[str, torch.Tensor], gen: torch.Generator, wd: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """lime's ``__data_inverse`` for R rows: binary (R,S,d) and the model-space samples (R,S,d).

    Arrays are built in ``wd`` (float32 for torch models, which evaluate float32 anyway); the
    instance's bins and the truncated-normal draws are computed in float64.
    """
    import torch

    R, d = x.shape
    dev = x.device
    thr = T["thresholds"]
    n_opt = thr.shape[1] + 1
    # inverse CDF of the background frequencies in *option* space: option k of column j is drawn
    # with the k-th frequency; laid out (R, S, d) so the model reads the values without a copy. One
    # pass decides between the first two options of every column; columns with more options
    # (quartile bins, multi-valued categoricals) add their counts on their own small slice. The
    # uniforms are raw 32-bit integers compared with integer thresholds (see _option_thresholds);
    # comparison results stay uint8 (torch's bool -> float conversion is several times slower).
    bits = _uniform_bits((R, S, d), gen)
    odt = torch.uint8 if n_opt < 255 else torch.int32  # option indices; 255 stands for "no option"

    def count(b: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        hit = torch.gt(b, t)
        return hit.view(torch.uint8) if odt == torch.uint8 else hit.to(odt)

    opt = count(bits, thr[:, 0])
    multi = T["multi_idx"]
    if multi.numel():
        bm = bits[:, :, multi]
        tm = thr[multi]
        om = count(bm, tm[:, 1])
        for k in range(2, n_opt - 1):
            om += count(bm, tm[:, k])
        opt[:, :, multi] += om
    del bits
    # binary: the sample's option is the instance's own bin (continuous) / value (categorical);
    # compared as option indices, exact whatever the values are (-1: the instance's value is not
    # among the background's, so no sample shares it)
    inst_bin = torch.searchsorted(T["edges"], x.T.contiguous(), right=False).T.to(torch.float64)  # (R, d)
    inst_key = torch.where(T["cat"], x, inst_bin)
    hit = T["values"].unsqueeze(0) == inst_key.unsqueeze(2)  # (R, d, n_opt); padding repeats the last
    none = 255 if odt == torch.uint8 else -1  # the instance's value is not among the options: never matches
    inst_opt = torch.where(hit.any(dim=2), hit.to(torch.int8).argmax(dim=2), none).to(odt)
    binary = torch.eq(opt, inst_opt.unsqueeze(1)).view(torch.uint8).to(wd)
    # model-space values: the option index is the value itself except on the lookup columns
    drawn = opt.to(wd)
    look = T["lookup_idx"]
    if look.numel():
        flat_opt = look * n_opt + drawn[:, :, look].to(torch.int64)
        drawn[:, :, look] = torch.take(T["values"], flat_opt).to(wd)
    ci = T["cont_idx"]
    if ci.numel():
        # continuous values: truncated normal inside the drawn bin (flat lookups in the bin tables)
        flat = (ci * 4 + drawn[:, :, ci].to(torch.int64).clamp(0, 3)).reshape(-1)
        u = _uniform((flat.numel(),), gen, torch.float64).to(dev)
        vals = torch.empty(flat.numel(), dtype=torch.float64, device=dev)
        step = _BLOCK if dev.type == "cpu" else flat.numel()  # CPU: blocks whose temporaries stay in cache
        for i in range(0, flat.numel(), step):
            g = T["bin_table"].index_select(0, flat[i : i + step])  # (n, 7): the bins' constants
            vals[i : i + step] = torch.addcmul(g[:, 0], g[:, 1], _truncnorm_draw(g[:, 2:], u[i : i + step]))
        drawn[:, :, ci] = vals.reshape(R, S, -1).to(wd)
    # sample 0 is the instance itself
    binary[:, 0, :] = 1.0
    drawn[:, 0, :] = x.to(wd)
    return binary, drawn


def _uniform_bits(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Uniform 32-bit integers (int32, all 2^32 values equally likely) from ``gen``'s stream; on the
    CPU raw PCG64 output seeded by ``gen`` (no float conversion at all)."""
    import torch

    if gen.device.type != "cpu":
        return torch.randint(-(2**31), 2**31, shape, generator=gen, device=gen.device, dtype=torch.int32)
    seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    n = math.prod(shape)
    raw = np.random.default_rng(seed).bit_generator.random_raw((n + 1) // 2)
    return torch.from_numpy(raw.view(np.int32)[:n].reshape(shape))


def _uniform(shape: tuple[int, ...], gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """U[0, 1) draws from ``gen``'s stream. On the CPU the bulk comes from numpy's PCG64 seeded by
    ``gen`` (several times faster than torch's CPU generator for the (rows x samples x d) table;
    same distribution, still reproducible from ``random_state``)."""
    import torch

    if gen.device.type != "cpu":
        return torch.rand(shape, generator=gen, device=gen.device, dtype=dtype)
    seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    return torch.from_numpy(np.random.default_rng(seed).random(shape, dtype=np_dtype))
