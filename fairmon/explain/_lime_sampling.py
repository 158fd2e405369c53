"""LIME's perturbation sampler in torch: per-feature bins/values drawn with the background
frequencies, continuous values from each bin's truncated normal (see :mod:`fairmon.explain._lime`).

The tables are built once per background (:func:`_tensors`); :func:`_sample` then draws a whole
chunk of rows x samples x features in one pass.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

    from fairmon.explain._lime import LimeStats

__all__: list[str] = []

_BLOCK = 1 << 16  # continuous values drawn per block on the CPU (temporaries of 512 KiB)


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
    return np.asarray(np.clip(t, -(2.0**31), 2.0**31 - 1), dtype=np.int32)


def _lookup_columns(stats: LimeStats) -> np.ndarray:
    """(d,) bool: some option k that can be drawn (cumulative frequency before it < 1) has a value != k."""
    k = np.arange(stats.values.shape[1])
    drawable = np.concatenate([np.ones((len(stats.cum), 1), dtype=bool), stats.cum[:, :-1] < 1.0], axis=1)
    return np.asarray(((stats.values != k) & drawable).any(axis=1))


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
