"""The rule-search stage after IE-DT: the simplest DNF rule set as discriminating as the best found.

IE's linear relaxation finds a slanted boundary that IE-DT then imitates with a staircase of many
rules; a planted ``A <= a AND B > b`` comes back as dozens of depth-5 rules with a *lower* DScore.
This stage searches readable rule sets directly (issue 17):

* the space: DNF rule sets of at most ``max_rules`` rules of at most ``max_conditions`` conditions on
  the key attributes (IE's plus the tree's), candidate conditions as in
  :mod:`fairmon.fairness._rule_search_bits`, as packed bitsets;
* the search: a beam over rule sets, seeded with IE-DT's rules and simplifications of them (each
  rule cut to ``max_conditions`` by greedily dropping the least useful condition, and the union of
  the largest ones); moves AND a candidate into a rule, OR a new one-condition rule, or drop a
  condition. The beam keeps the rule sets with the best DScore inside ``[alpha, beta]`` and, to reach
  across the bounds (a group built by OR starts too small), those best by
  ``DScore - 0.5 * distance outside the bounds``. Numeric thresholds of the best rule sets of each
  size are then refined over a finer quantile grid, and rules that add fewer than
  ``min_rule_support`` of the rows to the others are dropped;
* Occam's razor: among rule sets whose DScore is within ``epsilon`` of the best found (IE-DT's own
  rule set included), report the one with the fewest conditions (ties: higher DScore), then drop
  conditions from it while it stays within epsilon of the best and within the bounds. Both the best
  and the simplest are kept (:class:`RuleSearchResult`), so the trade is visible.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from fairmon.errors import MethodError
from fairmon.fairness._rule_search_bits import (
    Candidates,
    Scorer,
    State,
    build_candidates,
    canon,
    dscores,
    n_conditions_of,
    pack,
    prune,
    rule_bits,
    threshold_grid,
    top,
    union,
    valid,
)
from fairmon.rules import Condition, RuleSet, numeric_condition

__all__ = [
    "ERR_SEARCH_SETTING",
    "RuleSearchLike",
    "RuleSearchResult",
    "RuleSearchSettings",
    "RuleSetScore",
    "search_rules",
]

ERR_SEARCH_SETTING = "rule search: {name} must be {rule}; got {value!r}"


class RuleSearchLike(Protocol):
    """What :func:`~fairmon.fairness.rumie.mine` reads from a spec's ``rumie.rule_search`` section."""

    @property
    def enabled(self) -> bool: ...
    @property
    def max_rules(self) -> int: ...
    @property
    def max_conditions(self) -> int: ...
    @property
    def epsilon(self) -> float: ...


@dataclass(frozen=True)
class RuleSearchSettings:
    """Settings of the rule-search stage (the spec's ``rumie.rule_search`` fields and search knobs).

    ``max_rules`` x ``max_conditions`` bound the reported DNF; ``epsilon`` is Occam's tolerance on
    DScore; ``beam_width``, ``thresholds`` (quantile thresholds per numeric column) and
    ``refine_thresholds`` (the finer grid the chosen thresholds are refined on) trade time for reach;
    a reported rule must add at least ``min_rule_support`` of the rows to the other rules (a rule
    describing a handful of rows is noise, not evidence).

    Examples
    --------
    >>> RuleSearchSettings().max_rules, RuleSearchSettings(epsilon=0.02).epsilon
    (3, 0.02)
    """

    enabled: bool = True
    max_rules: int = 3
    max_conditions: int = 3
    epsilon: float = 0.01
    beam_width: int = 24
    thresholds: int = 48
    refine_thresholds: int = 256
    min_rule_support: float = 0.01

    def __post_init__(self) -> None:
        for name in ("max_rules", "max_conditions", "beam_width", "thresholds", "refine_thresholds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise MethodError(ERR_SEARCH_SETTING.format(name=name, rule="an integer >= 1", value=value))
        for name in ("epsilon", "min_rule_support"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value < 1.0:
                raise MethodError(ERR_SEARCH_SETTING.format(name=name, rule="a number in [0, 1)", value=value))

    @classmethod
    def of(cls, spec: RuleSearchLike | None) -> RuleSearchSettings:
        """Settings from a spec section (or these defaults for ``None``)."""
        if spec is None or isinstance(spec, RuleSearchSettings):
            return spec or cls()
        return cls(enabled=bool(spec.enabled), max_rules=int(spec.max_rules),
                   max_conditions=int(spec.max_conditions), epsilon=float(spec.epsilon))


@dataclass(frozen=True)
class RuleSetScore:
    """A rule set with its DScore and group size on the rows it was scored on."""

    rules: RuleSet
    dscore: float
    group_size: int
    fraction: float

    @property
    def n_rules(self) -> int:
        """Number of rules (OR-ed)."""
        return len(self.rules.rules)

    @property
    def n_conditions(self) -> int:
        """Number of conditions in all rules."""
        return self.rules.n_conditions

    def to_dict(self) -> dict[str, Any]:
        """The stored form (``Evidence.to_dict`` keys ``rules_best``/``rules_simplest``)."""
        return {
            "text": self.rules.text, "rules": self.rules.rule_texts, "rule_conditions": self.rules.to_dicts(),
            "dscore": self.dscore, "group_size": self.group_size, "fraction": self.fraction,
            "n_rules": self.n_rules, "n_conditions": self.n_conditions,
        }


@dataclass(frozen=True)
class RuleSearchResult:
    """Best and simplest (reported) rule sets, IE-DT's own for comparison, and search statistics."""

    best: RuleSetScore | None
    simplest: RuleSetScore | None
    reference: RuleSetScore | None
    evaluated: int
    n_candidates: int
    runtime_s: float

    def to_dict(self) -> dict[str, Any]:
        """Search statistics for ``Evidence.search``."""
        return {"evaluated": self.evaluated, "n_candidates": self.n_candidates, "runtime_s": self.runtime_s,
                "ie_dt_dscore": None if self.reference is None else self.reference.dscore,
                "ie_dt_n_rules": None if self.reference is None else self.reference.n_rules}


class _Beam:
    def __init__(self, cand: Candidates, scorer: Scorer, settings: RuleSearchSettings) -> None:
        self.cand, self.scorer, self.s = cand, scorer, settings
        self.width = cand.bits.shape[1]
        self.archive: dict[State, float] = {}

    def _children(self, state: State) -> list[tuple[State, float, float]]:
        """(child, in-bounds DScore or -inf, ranking) of the best moves from ``state``."""
        cand, s, k = self.cand, self.s, self.s.beam_width
        rules = [rule_bits(cand, r) for r in state]
        whole = np.zeros(self.width, dtype=np.uint64)
        for r in rules:
            whole |= r
        out: list[tuple[State, float, float]] = []

        def take(bits: np.ndarray, make: Any) -> None:
            d, rank, size = self.scorer.score(bits)
            for j in set(top(d, k).tolist()) | set(top(rank, k).tolist()):
                child = make(int(j))
                if child is not None:
                    out.append((child, float(d[j]), float(rank[j])))

        if len(state) < s.max_rules:
            take(whole[None, :] | cand.bits, lambda j: canon([*state, (j,)]))
        for i, rule in enumerate(state):
            if len(rule) >= s.max_conditions:
                continue
            others = np.zeros(self.width, dtype=np.uint64)
            for q, r in enumerate(rules):
                if q != i:
                    others |= r
            take(others[None, :] | (rules[i][None, :] & cand.bits),
                 lambda j, i=i, rule=rule: None if j in rule else canon([*state[:i], (*rule, j), *state[i + 1:]]))
        drops = [canon([*state[:i], tuple(x for x in rule if x != c), *state[i + 1:]])
                 for i, rule in enumerate(state) for c in rule]
        drops = [c for c in drops if c]
        if drops:
            d, rank, _ = self.scorer.score(np.stack([union(cand, c, self.width) for c in drops]))
            out += [(c, float(d[q]), float(rank[q])) for q, c in enumerate(drops)]
        return out

    def run(self, seeds: list[State]) -> None:
        beam: list[State] = [()] + seeds
        for st in seeds:
            self._record(st)
        seen: set[State] = set(beam)
        for _ in range(self.s.max_rules * self.s.max_conditions + 1):
            pool: dict[State, tuple[float, float]] = {}
            for st in beam:
                for child, d, rank in self._children(st):
                    if math.isfinite(d):
                        self.archive.setdefault(child, d)
                    pool[child] = (d, rank)
            fresh = {c: v for c, v in pool.items() if c not in seen}
            if not fresh:
                break
            half = max(1, self.s.beam_width // 2)
            by_d = sorted(fresh, key=lambda c: -fresh[c][0])[:half]
            by_rank = sorted(fresh, key=lambda c: -fresh[c][1])
            beam = list(dict.fromkeys([*[c for c in by_d if math.isfinite(fresh[c][0])], *by_rank]))[
                : self.s.beam_width]
            seen.update(beam)

    def _record(self, state: State) -> None:
        d, _, _ = self.scorer.score(union(self.cand, state, self.width)[None, :])
        if math.isfinite(float(d[0])):
            self.archive[state] = float(d[0])


def _greedy_truncate(rule: list[int], cand: Candidates, scorer: Scorer, width: int, limit: int) -> tuple[int, ...]:
    """Drop the condition whose removal ranks best until ``limit`` remain (a seed simplification)."""
    rule = list(dict.fromkeys(rule))
    while len(rule) > limit:
        options = [tuple(x for x in rule if x != c) for c in rule]
        bits = np.stack([rule_bits(cand, o) for o in options])
        _, rank, _ = scorer.score(bits)
        rule = list(options[int(np.argmax(rank))])
    return tuple(rule)


class _Refiner:
    """Coordinate ascent on numeric thresholds over a finer quantile grid (grids built once)."""

    def __init__(self, cand: Candidates, scorer: Scorer, frame: pd.DataFrame, levels: int,
                 decimals: Mapping[str, int | None]) -> None:
        self.cand, self.scorer, self.frame, self.levels, self.decimals = cand, scorer, frame, levels, decimals
        self.grids: dict[tuple[str, str], tuple[list[Condition], np.ndarray]] = {}

    def _grid(self, column: str, op: str) -> tuple[list[Condition], np.ndarray]:
        if (column, op) not in self.grids:
            x = self.frame[column].to_numpy(dtype=float)
            conds = [numeric_condition(column, op, v, self.decimals.get(column))
                     for v in threshold_grid(x, self.levels)]
            vals = np.array([c.value for c in conds], dtype=float)
            masks = x[None, :] <= vals[:, None] if op == "<=" else x[None, :] > vals[:, None]
            self.grids[(column, op)] = (conds, pack(masks) if conds else np.zeros((0, self.cand.bits.shape[1]),
                                                                                   dtype=np.uint64))
        return self.grids[(column, op)]

    def refine(self, state: State) -> State:
        cand, width = self.cand, self.cand.bits.shape[1]
        rules = [list(r) for r in state]
        for i, rule in enumerate(rules):
            for pos, cid in enumerate(list(rule)):
                cond = cand.conditions[cid]
                if cond.op not in ("<=", ">"):
                    continue
                grid, fine = self._grid(cond.column, cond.op)
                if not grid:
                    continue
                others = union(cand, canon([r for q, r in enumerate(rules) if q != i]), width)
                rest = [c for c in rule if c != cid]
                base = rule_bits(cand, rest) if rest else np.full(width, np.iinfo(np.uint64).max, dtype=np.uint64)
                d, _, _ = self.scorer.score(others[None, :] | (base[None, :] & fine))
                current, _, _ = self.scorer.score(union(cand, canon(rules), width)[None, :])
                j = int(np.argmax(d))
                if math.isfinite(float(d[j])) and d[j] > current[0] + 1e-12:
                    rule[pos] = cand.index(grid[j], self.frame)
        return canon(rules)


def _to_score(cand: Candidates, state: State, scorer: Scorer) -> RuleSetScore:
    """The state as a rule set (largest rule first) with its DScore and size from the bitsets."""
    width = cand.bits.shape[1]
    sizes = [int(np.bitwise_count(rule_bits(cand, r)).sum()) for r in state]
    order = sorted(range(len(state)), key=lambda q: -sizes[q])
    rs = RuleSet(tuple(tuple(cand.conditions[c] for c in state[q]) for q in order))
    d, size = dscores(union(cand, state, width)[None, :], scorer.fav_bits, scorer.n, scorer.n_fav)
    return RuleSetScore(rules=rs, dscore=float(d[0]), group_size=int(size[0]), fraction=int(size[0]) / scorer.n)


def _score_of(rs: RuleSet, frame: pd.DataFrame, fav: np.ndarray) -> RuleSetScore:
    mask = rs.membership(frame)
    size = int(mask.sum())
    d = float(fav[~mask].mean() - fav[mask].mean()) if 0 < size < mask.size else -math.inf
    return RuleSetScore(rules=rs, dscore=d, group_size=size, fraction=size / max(1, mask.size))


def search_rules(
    frame: pd.DataFrame, fav: np.ndarray, columns: Sequence[str], *, alpha: float, beta: float,
    settings: RuleSearchSettings, decimals: Mapping[str, int | None], kinds: Mapping[str, str],
    reference: RuleSet | None = None,
) -> RuleSearchResult:
    """Search rule sets on ``frame`` (the mining rows) and pick best and simplest (module docstring).

    ``reference`` is IE-DT's rule set: it seeds the beam and competes for "best" at any size.
    """
    t0 = time.perf_counter()
    fav = np.asarray(fav, dtype=bool)
    scorer = Scorer(fav, alpha, beta)
    cand = build_candidates(frame, fav, columns, levels=settings.thresholds, decimals=decimals, kinds=kinds)
    width = cand.bits.shape[1]
    seeds: list[State] = []
    if reference is not None and reference.rules:
        truncated: list[tuple[int, ...]] = []
        for rule in reference.rules:
            ids = [cand.index(c, frame) for c in rule]
            if ids:
                truncated.append(_greedy_truncate(ids, cand, scorer, width, settings.max_conditions))
        seeds += [canon([r]) for r in truncated]
        sizes = [int(np.bitwise_count(rule_bits(cand, r)).sum()) for r in truncated]
        largest = [truncated[q] for q in np.argsort(sizes)[::-1][: settings.max_rules]]
        seeds.append(canon(largest))
    seeds = list(dict.fromkeys(s for s in seeds if s))
    beam = _Beam(cand, scorer, settings)
    if cand.conditions:
        beam.run(seeds)
    min_rows = max(1, int(math.ceil(settings.min_rule_support * scorer.n)))
    states = _finalists(beam.archive, per_size=3)
    refiner = _Refiner(cand, scorer, frame, settings.refine_thresholds, decimals)
    states = [refiner.refine(st) for st in states]
    clean = [st for st in (prune(st, cand, min_rows) for st in states) if valid(st, cand, scorer)]
    pool = [_to_score(cand, st, scorer) for st in dict.fromkeys(clean or states)]
    ref = _score_of(reference, frame, fav) if reference is not None and reference.rules else None
    contenders = [p for p in pool if _inside(p, alpha, beta)]
    contenders += [ref] if ref is not None and _inside(ref, alpha, beta) else []
    if not contenders:
        return RuleSearchResult(None, None, ref, scorer.evaluated, len(cand.conditions), time.perf_counter() - t0)
    best = max(contenders, key=lambda p: (p.dscore, -p.n_conditions))
    floor = best.dscore - settings.epsilon - 1e-12
    simplest = min((p for p in contenders if p.dscore >= floor), key=lambda p: (p.n_conditions, -p.dscore))
    if simplest is not ref:
        state = _simplify(_state_of(simplest, cand, frame), cand, scorer, floor)
        simplest = _to_score(cand, state, scorer)
    return RuleSearchResult(best, simplest, ref, scorer.evaluated, len(cand.conditions), time.perf_counter() - t0)


def _finalists(archive: Mapping[State, float], per_size: int) -> list[State]:
    """The ``per_size`` best rule sets of every number of conditions."""
    by_size: dict[int, list[State]] = {}
    for st in sorted(archive, key=lambda st: -archive[st]):
        group = by_size.setdefault(n_conditions_of(st), [])
        if len(group) < per_size:
            group.append(st)
    return [st for group in by_size.values() for st in group]


def _simplify(state: State, cand: Candidates, scorer: Scorer, floor: float) -> State:
    """Drop conditions (or whole rules) while the rule set stays in bounds with DScore >= ``floor``."""
    width = cand.bits.shape[1]
    while True:
        options = [o for o in (canon([*state[:i], tuple(x for x in r if x != c), *state[i + 1:]])
                               for i, r in enumerate(state) for c in r) if o]
        options += [o for o in (canon([r for q, r in enumerate(state) if q != i]) for i in range(len(state))) if o]
        if not options:
            return state
        d, _, _ = scorer.score(np.stack([union(cand, o, width) for o in options]))
        j = int(np.argmax(d))
        if not (np.isfinite(d[j]) and d[j] >= floor and n_conditions_of(options[j]) < n_conditions_of(state)):
            return state
        state = options[j]


def _state_of(score: RuleSetScore, cand: Candidates, frame: pd.DataFrame) -> State:
    return canon([[cand.index(c, frame) for c in rule] for rule in score.rules.rules])


def _inside(p: RuleSetScore, alpha: float, beta: float) -> bool:
    return math.isfinite(p.dscore) and alpha - 1e-12 <= p.fraction <= beta + 1e-12
