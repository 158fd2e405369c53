"""The rule search's bit level: candidate conditions as packed bitsets, DScore of many masks at once,
rule-set states (tuples of condition ids) and their masks.

Every candidate condition of the searched columns is one row of a packed ``(M, W)`` ``uint64``
matrix (``W = ceil(n / 64)``), so OR-ing a rule set with all candidates, or AND-ing one of its rules
with them, is one vectorised operation and its DScore a ``bitwise_count``.

Candidates per column (the key attributes; conditions are :class:`fairmon.rules.Condition` in
original units, evaluated on the raw frame, so the reported text *is* the group):

* numeric: ``col <= t`` and ``col > t`` for ``t`` at data quantiles (observed values, so thresholds
  carry the data's own precision);
* categorical: ``col = c`` and ``col != c`` per category, and the subsets the DScore can prefer:
  the categories ordered by favourable rate, every prefix and every suffix (``in {...}``, written
  ``not in`` when the complement is shorter). For a single categorical column a prefix of that order
  is the best subset of every size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairmon.rules import Condition, numeric_condition
from fairmon.schema import category_strings

__all__ = [
    "OUT_OF_BOUNDS_WEIGHT", "Candidates", "Scorer", "State", "build_candidates", "canon", "dscores",
    "n_conditions_of", "pack", "prune", "rule_bits", "threshold_grid", "top", "union", "valid",
]


def pack(masks: np.ndarray) -> np.ndarray:
    """Boolean ``(M, n)`` (or ``(n,)``) -> packed ``uint64`` ``(M, W)`` (or ``(W,)``)."""
    m = np.atleast_2d(np.asarray(masks, dtype=bool))
    n = m.shape[1]
    pad = (-n) % 64
    if pad:
        m = np.concatenate([m, np.zeros((m.shape[0], pad), dtype=bool)], axis=1)
    packed = np.packbits(m, axis=1, bitorder="little").view(np.uint64)
    return packed[0] if np.asarray(masks).ndim == 1 else packed


def dscores(
    packed: np.ndarray, fav_bits: np.ndarray, n: int, n_fav: int
) -> tuple[np.ndarray, np.ndarray]:
    """(DScore, group size) of every packed mask row; DScore is -inf for an empty or full group."""
    size = np.bitwise_count(packed).sum(axis=-1, dtype=np.int64)
    inside = np.bitwise_count(packed & fav_bits).sum(axis=-1, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (n_fav - inside) / (n - size) - inside / size
    d = np.where((size > 0) & (size < n), d, -np.inf)
    return np.asarray(d, dtype=np.float64), size


def threshold_grid(x: np.ndarray, levels: int) -> np.ndarray:
    """Up to ``levels`` observed values at evenly spaced quantiles (the maximum excluded)."""
    u = np.unique(x[np.isfinite(x)])
    if u.size <= 1:
        return u[:0]
    if u.size - 1 <= levels:
        return u[:-1]
    q = np.quantile(x[np.isfinite(x)], np.linspace(0.0, 1.0, levels + 2)[1:-1], method="lower")
    return np.unique(q[q < u[-1]])


@dataclass
class Candidates:
    """The condition universe: conditions, their packed masks and the column each one tests."""

    conditions: list[Condition]
    bits: np.ndarray  # (M, W) uint64
    columns: list[str]
    ids: dict[tuple[str, str, object], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, c in enumerate(self.conditions):
            self.ids.setdefault((c.column, c.op, _key(c.value)), i)

    def index(self, cond: Condition, frame: pd.DataFrame) -> int:
        """Id of ``cond`` (same column, operator and value), adding it when new."""
        key = (cond.column, cond.op, _key(cond.value))
        if key not in self.ids:
            self.ids[key] = len(self.conditions)
            self.conditions.append(cond)
            self.columns.append(cond.column)
            self.bits = np.concatenate([self.bits, pack(cond.mask(frame))[None, :]], axis=0)
        return self.ids[key]


def _key(value: object) -> object:
    return tuple(value) if isinstance(value, list | tuple) else value


def _numeric(column: str, x: np.ndarray, levels: int, decimals: int | None) -> tuple[list[Condition], np.ndarray]:
    conds = [numeric_condition(column, "<=", v, decimals) for v in threshold_grid(x, levels)]
    t = np.array([c.value for c in conds], dtype=float)  # as written: rounded to the data's precision
    conds += [numeric_condition(column, ">", v, decimals) for v in t]
    with np.errstate(invalid="ignore"):
        masks = np.concatenate([x[None, :] <= t[:, None], x[None, :] > t[:, None]], axis=0)
    return conds, masks


def _subset(column: str, chosen: Sequence[str], everything: Sequence[str]) -> Condition:
    rest = [c for c in everything if c not in set(chosen)]
    if len(chosen) == 1:
        return Condition(column, "=", chosen[0])
    if len(rest) == 1:
        return Condition(column, "!=", rest[0])
    if len(rest) < len(chosen):
        return Condition(column, "not in", tuple(rest))
    return Condition(column, "in", tuple(chosen))


def _categorical(column: str, cats: np.ndarray, fav: np.ndarray, max_categories: int) -> tuple[list[Condition], np.ndarray]:
    # np.unique's result (sorted values, inverse codes) by hashing: sorting 200k strings took ~0.3 s a column
    codes, values = pd.factorize(cats, sort=True)
    codes = np.asarray(codes, dtype=np.int64)
    values = np.asarray(values)
    counts = np.bincount(codes, minlength=values.size)
    if values.size <= 1:
        return [], np.zeros((0, cats.size), dtype=bool)
    rate = np.bincount(codes, weights=fav.astype(float), minlength=values.size) / counts
    names = [str(v) for v in values]
    order = sorted(range(values.size), key=lambda i: (float(rate[i]), names[i]))  # least favoured first
    onehot = codes[None, :] == np.arange(values.size)[:, None]
    conds: list[Condition] = []
    masks: list[np.ndarray] = []
    singles = order if values.size <= max_categories else order[:max_categories // 2] + order[-max_categories // 2:]
    for i in singles:
        conds.append(Condition(column, "=", names[i]))
        masks.append(onehot[i])
        if values.size > 2:
            conds.append(Condition(column, "!=", names[i]))
            masks.append(~onehot[i])
    every = [names[i] for i in order]
    cum = np.zeros(cats.size, dtype=bool)
    for m in range(1, values.size - 2):  # prefixes of 2 .. size-2 categories and their complements
        cum = cum | onehot[order[m - 1]]
        prefix = cum | onehot[order[m]]
        conds.append(_subset(column, every[: m + 1], every))
        masks.append(prefix)
        conds.append(_subset(column, every[m + 1:], every))
        masks.append(~prefix)
    return conds, np.asarray(masks, dtype=bool).reshape(len(masks), cats.size)


def build_candidates(
    frame: pd.DataFrame, fav: np.ndarray, columns: Sequence[str], *, levels: int,
    decimals: Mapping[str, int | None], kinds: Mapping[str, str], max_categories: int = 40,
) -> Candidates:
    """All candidate conditions on ``columns`` of ``frame`` (see the module docstring).

    ``kinds`` maps a column to the feature schema's kind (``"numeric"`` or ``"categorical"``).
    """
    conds: list[Condition] = []
    blocks: list[np.ndarray] = []
    for col in columns:
        s = frame[col]
        if kinds.get(col) == "numeric":
            c, m = _numeric(col, s.to_numpy(dtype=float), levels, decimals.get(col))
        else:
            c, m = _categorical(col, category_strings(s), fav, max_categories)
        conds += c
        blocks.append(m)
    masks = np.concatenate(blocks, axis=0) if blocks else np.zeros((0, len(frame)), dtype=bool)
    bits = pack(masks) if masks.shape[0] else np.zeros((0, (len(frame) + 63) // 64), dtype=np.uint64)
    return Candidates(conditions=conds, bits=bits.reshape(len(conds), -1), columns=[c.column for c in conds])


#: weight of the distance outside [alpha, beta] in the beam's ranking of out-of-bounds rule sets
OUT_OF_BOUNDS_WEIGHT = 0.5

#: a rule set as condition ids: an OR of (sorted) AND-ed ids, sorted - one key per rule set
State = tuple[tuple[int, ...], ...]


class Scorer:
    """DScore, size and the beam's ranking of packed masks on the mining rows."""

    def __init__(self, fav: np.ndarray, alpha: float, beta: float) -> None:
        self.n, self.n_fav = int(fav.size), int(fav.sum())
        self.fav_bits = pack(fav)
        self.alpha, self.beta = alpha, beta
        self.evaluated = 0

    def score(self, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(DScore within bounds or -inf, ranking score, size) per row of ``bits``."""
        d, size = dscores(bits, self.fav_bits, self.n, self.n_fav)
        self.evaluated += int(np.size(d))
        frac = size / self.n
        tol = 1e-12
        inside = (frac >= self.alpha - tol) & (frac <= self.beta + tol) & np.isfinite(d)
        viol = np.maximum(0.0, np.maximum(self.alpha - frac, frac - self.beta))
        return np.where(inside, d, -np.inf), d - OUT_OF_BOUNDS_WEIGHT * viol, size


def canon(rules: Sequence[Sequence[int]]) -> State:
    """The one key of a rule set: duplicates and empty rules dropped, ids and rules sorted."""
    return tuple(sorted({tuple(sorted(set(r))) for r in rules if r}))


def rule_bits(cand: Candidates, rule: Sequence[int]) -> np.ndarray:
    """Packed mask of one rule (AND of its conditions)."""
    out = np.bitwise_and.reduce(cand.bits[list(rule)], axis=0)
    return np.asarray(out)


def union(cand: Candidates, state: State, width: int) -> np.ndarray:
    """Packed mask of a rule set (OR of its rules)."""
    out = np.zeros(width, dtype=np.uint64)
    for rule in state:
        out |= rule_bits(cand, rule)
    return out


def top(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest finite values (unordered)."""
    finite = np.nonzero(np.isfinite(values))[0]
    if finite.size <= k:
        return finite
    return finite[np.argpartition(-values[finite], k - 1)[:k]]


def n_conditions_of(state: State) -> int:
    """Number of conditions of a rule set state."""
    return sum(len(r) for r in state)


def valid(state: State, cand: Candidates, scorer: Scorer) -> bool:
    """Whether the rule set is a group within the bounds (a finite DScore)."""
    d, _, _ = scorer.score(union(cand, state, cand.bits.shape[1])[None, :])
    return bool(np.isfinite(d[0]))


def prune(state: State, cand: Candidates, min_rows: int) -> State:
    """Drop rules that add fewer than ``min_rows`` rows to the others' (noise, not evidence)."""
    rules = list(state)
    width = cand.bits.shape[1]
    while len(rules) > 1:
        bits = [rule_bits(cand, r) for r in rules]
        unique = []
        for i in range(len(rules)):
            others = np.zeros(width, dtype=np.uint64)
            for q, b in enumerate(bits):
                if q != i:
                    others |= b
            unique.append(int(np.bitwise_count(bits[i] & ~others).sum()))
        worst = int(np.argmin(unique))
        if unique[worst] >= min_rows:
            break
        del rules[worst]
    return canon(rules)
