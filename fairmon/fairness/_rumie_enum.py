"""The Enum baseline of the paper: exhaustive conjunctions of at most ``k`` attribute conditions.

Conditions per original column: categorical ``col = v`` and ``col != v`` for every category; numeric
``col <= u`` and ``col > u`` for every unique value ``u`` (except the maximum, where ``<=`` is
everything). A conjunction uses each column at most once. Sizes ``1, 2, ..., k`` are searched in order
(iterative deepening; size 1 is scored while the condition masks are built), so a time budget
returns the best group among all shorter conjunctions first.
A branch stops when its group is already smaller than ``alpha * n`` (adding conditions only shrinks
it), which prunes nothing that could satisfy the bounds. Masks are packed into 64-bit words and counted
with ``np.bitwise_count``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon.rules import Condition

if TYPE_CHECKING:
    from fairmon.schema import FeatureSchema

__all__ = ["EnumResult", "enumerate_groups"]


@dataclass
class _Cond:
    column: str
    encoded: int
    kind: str  # "eq", "ne", "le", "gt"
    value: float  # encoded units (1.0 for one-hot)
    text: str
    raw: Any


@dataclass
class EnumResult:
    conditions: list[Condition] = field(default_factory=list)
    spec: list[tuple[int, str, float]] = field(default_factory=list)  # (encoded index, kind, value)
    dscore: float = -math.inf
    size: int = 0
    evaluated: int = 0
    complete: bool = False
    depth_completed: int = 0

    def evaluate(self, Z: np.ndarray) -> np.ndarray:
        m = np.ones(Z.shape[0], dtype=bool)
        for j, kind, v in self.spec:
            col = Z[:, j]
            if kind == "eq":
                m &= col > 0.5
            elif kind == "ne":
                m &= col <= 0.5
            elif kind == "le":
                m &= col <= v
            else:
                m &= col > v
        return m


def _conditions(Z: np.ndarray, schema: FeatureSchema, max_thresholds: int | None) -> list[list[_Cond]]:
    out: list[list[_Cond]] = []
    for col, sl in schema.groups:
        spec = schema.column(col)
        conds: list[_Cond] = []
        if spec.kind == "categorical":
            for i, cat in enumerate(spec.categories):
                j = sl.start + i
                if not Z[:, j].any():
                    continue
                conds.append(_Cond(col, j, "eq", 1.0, f"{col} = {cat}", cat))
                if len(spec.categories) > 2:  # for a binary column "!= a" is "= b"
                    conds.append(_Cond(col, j, "ne", 1.0, f"{col} != {cat}", cat))
        else:
            j = sl.start
            uniq = np.unique(Z[:, j])[:-1]
            if max_thresholds is not None and uniq.size > max_thresholds:
                uniq = np.unique(np.quantile(uniq, np.linspace(0, 1, max_thresholds)))
            for u in uniq:
                ov = schema.to_original_value(col, float(u))
                txt = f"{ov:.6g}"
                conds.append(_Cond(col, j, "le", float(u), f"{col} <= {txt}", ov))
                conds.append(_Cond(col, j, "gt", float(u), f"{col} > {txt}", ov))
        out.append(conds)
    return out


def _pack(mask: np.ndarray, words: int) -> np.ndarray:
    b = np.packbits(mask.astype(bool), bitorder="little")
    buf = np.zeros(words * 8, dtype=np.uint8)
    buf[: b.size] = b
    return buf.view(np.uint64)


def enumerate_groups(
    Z: np.ndarray,
    favorable: np.ndarray,
    schema: FeatureSchema,
    *,
    k: int,
    alpha: float,
    beta: float,
    time_budget_s: float,
    max_thresholds: int | None = None,
) -> EnumResult:
    """Best conjunction (highest DScore within ``[alpha, beta]``) found within the budget."""
    t0 = time.perf_counter()
    n = Z.shape[0]
    words = (n + 63) // 64
    f = np.asarray(favorable, dtype=bool)
    fav = _pack(f, words)
    F = int(f.sum())
    lo_size = max(1, math.ceil(alpha * n - 1e-9))
    hi_size = min(n - 1, math.floor(beta * n + 1e-9))
    per_col = [c for c in _conditions(Z, schema, max_thresholds) if c]
    packed: list[list[tuple[np.ndarray, _Cond]]] = []
    res = EnumResult()
    best: list[_Cond] = []
    counter = 0
    out_of_time = False
    bc = np.bitwise_count
    # building the masks is also the size-1 level: every single condition is scored as it is built,
    # so a budget that ends while building still returns the best single condition so far
    for conds in per_col:
        row = []
        for i, c in enumerate(conds):
            if i % 256 == 0 and time.perf_counter() - t0 > time_budget_s:
                out_of_time = True
                break
            col = Z[:, c.encoded]
            if c.kind == "eq":
                m = col > 0.5
            elif c.kind == "ne":
                m = col <= 0.5
            elif c.kind == "le":
                m = col <= c.value
            else:
                m = col > c.value
            pm = _pack(m, words)
            row.append((pm, c))
            counter += 1
            size = int(m.sum())
            if lo_size <= size <= hi_size:
                fin = int(bc(pm & fav).sum())
                d = (F - fin) / (n - size) - fin / size
                if d > res.dscore:
                    res.dscore, res.size = d, size
                    best = [c]
        packed.append(row)
        if out_of_time:
            break
    p = len(packed)

    def dfs(start: int, depth: int, target: int, prefix: np.ndarray | None, chosen: list[_Cond]) -> None:
        nonlocal counter, out_of_time, best
        for a in range(start, p):
            for mask, c in packed[a]:
                m = mask if prefix is None else (prefix & mask)
                size = int(bc(m).sum())
                if size < lo_size:
                    continue
                if depth + 1 == target:
                    counter += 1
                    if size <= hi_size:
                        fin = int(bc(m & fav).sum())
                        d = (F - fin) / (n - size) - fin / size
                        if d > res.dscore:
                            res.dscore, res.size = d, size
                            best = [*chosen, c]
                    if counter % 256 == 0 and time.perf_counter() - t0 > time_budget_s:
                        out_of_time = True
                        return
                else:
                    dfs(a + 1, depth + 1, target, m, [*chosen, c])
                    if out_of_time:
                        return

    if not out_of_time:
        res.depth_completed = 1
        for target in range(2, min(k, p) + 1):
            if time.perf_counter() - t0 > time_budget_s:
                out_of_time = True
                break
            dfs(0, 0, target, None, [])
            if out_of_time:
                break
            res.depth_completed = target
    res.complete = not out_of_time
    res.evaluated = counter
    order = {name: i for i, name in enumerate(schema.names)}
    best.sort(key=lambda c: order[c.column])
    ops = {"eq": "=", "ne": "!=", "le": "<=", "gt": ">"}
    res.conditions = [Condition(c.column, ops[c.kind], c.raw, c.text) for c in best]
    res.spec = [(c.encoded, c.kind, c.value) for c in best]
    return res
