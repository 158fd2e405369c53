"""RUMIE's core: mining on prepared rows (IE, IE-DT and the rule search, Enum) and the split test."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import MethodError
from fairmon.fairness._rule_search import RuleSearchLike, RuleSearchResult, RuleSearchSettings, search_rules
from fairmon.fairness._rumie_enum import EnumResult, enumerate_groups
from fairmon.fairness._rumie_ie import EarlyStop, fit_ie, truncate_top_k
from fairmon.fairness._rumie_inputs import (
    ERR_K_RANGE,
    ERR_PARAM,
    MIN_SPLIT_ROWS,
    Prepared,
    check_params,
    prepare,
)
from fairmon.fairness._rumie_stats import best_cut, dscore, group_rates, two_proportion_test, within_bounds
from fairmon.fairness._rumie_tree import PrunedTree, Rule, fit_pruned_tree, render_rules, simplify_boxes
from fairmon.rules import RuleSet

if TYPE_CHECKING:
    from fairmon.schema import FeatureSchema

__all__ = ["EarlyStopLike", "Found", "early_stop_settings", "held_out_dscore", "mine_encoded", "setup", "held_out_stats", "split_significance", "stratified_split",
           "torch_threads"]


@contextmanager
def torch_threads(num_threads: int | None, device_type: str) -> Iterator[None]:
    """Torch CPU threads for the call (half the cores by default), restored afterwards."""
    import torch

    old = torch.get_num_threads()
    want = num_threads if num_threads is not None else max(1, (os.cpu_count() or 2) // 2)
    change = device_type == "cpu" and want != old
    if change:
        torch.set_num_threads(want)
    try:
        yield
    finally:
        if change:
            torch.set_num_threads(old)


@dataclass
class Found:
    """One mining result, with a way to apply the group to new rows.

    ``reported`` is the rule set the group *is* when the rule search ran (its membership on the raw
    rows); otherwise the group is the pruned tree's, the Enum conjunction's or IE's linear cut.
    """

    mask: np.ndarray
    ok: bool
    theta: np.ndarray | None = None  # truncated (d,)
    bias: float = 0.0
    tau: float = 0.0
    cut: str = "paper"
    ie_mask: np.ndarray | None = None
    tree: PrunedTree | None = None
    rules: list[Rule] = field(default_factory=list)
    enum: EnumResult | None = None
    restart: int = 0
    search: dict[str, Any] = field(default_factory=dict)
    tree_rules: RuleSet | None = None
    reported: RuleSet | None = None
    rule_search: RuleSearchResult | None = None

    def apply(self, p: Prepared) -> np.ndarray:
        """The group on other rows (the held-out half, or the whole window): the rules actually
        reported, decided on the raw columns; otherwise the tree's, Enum's or IE's cut on the encoded
        rows, a block at a time when ``p`` has not built its full matrix."""
        if self.reported is not None:
            return self.reported.membership(p.raw)
        parts = [self._apply_encoded(Z) for Z in p.encoded_blocks()]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _apply_encoded(self, Z: np.ndarray) -> np.ndarray:
        """Membership of encoded rows (no rule search result)."""
        if self.tree is not None:
            return self.tree.apply(Z)
        if self.enum is not None:
            return self.enum.evaluate(Z)
        assert self.theta is not None
        return np.asarray((Z @ self.theta + self.bias) >= self.tau)


def mine_encoded(p: Prepared, o: dict[str, Any]) -> Found:
    """IE, IE-DT (then the rule search when ``o["rule_search"].enabled``) or Enum on prepared rows."""
    Z, fav, schema = p.Z, p.fav, p.schema
    n = Z.shape[0]
    alpha, beta, k = o["alpha"], o["beta"], o["k"]
    if o["method"] == "enum":
        res = enumerate_groups(
            Z, fav, schema, k=k, alpha=alpha, beta=beta, time_budget_s=o["enum_time_budget_s"],
            max_thresholds=o["enum_max_thresholds"],
        )
        esearch = {"evaluated": res.evaluated, "complete": res.complete, "depth_completed": res.depth_completed}
        if not res.spec:
            return Found(mask=np.zeros(n, dtype=bool), ok=False, enum=res, search=esearch)
        return Found(mask=res.evaluate(Z), ok=True, enum=res, search=esearch)

    t0 = time.perf_counter()
    fit = fit_ie(
        Z, fav, k=k, alpha=alpha, beta=beta, lam=o["lam"], iterations=o["iterations"], lr=o["lr"],
        clip_norm=o["clip_norm"], restarts=o["restarts"], init_scale=o["init_scale"], bias=o["bias"],
        penalty_start=o["penalty_start"], penalty_end=o["penalty_end"], device=o["device"],
        random_state=o["random_state"], dtype=o["dtype"], layout=o["layout"], early_stop=o["early_stop"],
    )
    t_opt = time.perf_counter() - t0
    thetas = truncate_top_k(fit.theta, k)
    candidates: list[Found] = []
    seen: set[bytes] = set()
    for r in range(thetas.shape[0]):
        th, b = thetas[r], float(fit.bias[r])
        s = Z @ th + b
        mask = s >= 0.0
        tau, cut = 0.0, "paper"
        if not within_bounds(int(mask.sum()), n, alpha, beta):
            if o["bounds_repair"] == "shift":
                choice = best_cut(s, fav, alpha=alpha, beta=beta)
                if choice is None:
                    continue
                tau, cut = choice.tau, "shifted"
                mask = s >= tau
            else:
                continue
        key = np.packbits(mask).tobytes()
        if key in seen:
            continue
        seen.add(key)
        candidates.append(Found(mask=mask, ok=True, theta=th, bias=b, tau=tau, cut=cut, ie_mask=mask, restart=r))
    search: dict[str, Any] = {
        "restarts": int(thetas.shape[0]),
        "expected_dscore": [float(v) for v in fit.expected_dscore],
        "expected_fraction": [float(v) for v in fit.mean_p],
        "optimise_s": t_opt,
        "distinct_groups": len(candidates),
        "device": fit.device,
        "iterations_run": fit.iterations_run,
        "stopped_early": fit.stopped_early,
        "layout": fit.layout,
    }
    if not candidates:
        return Found(mask=np.zeros(n, dtype=bool), ok=False, search=search)
    if o["method"] == "ie-dt":
        t1 = time.perf_counter()
        for c in candidates:
            assert c.theta is not None
            feats = [int(j) for j in np.nonzero(c.theta)[0]]
            tree = fit_pruned_tree(
                Z, c.mask, feats, alpha=alpha, beta=beta, max_depth=o["tree_max_depth"],
                random_state=o["random_state"], stop=o["tree_prune"],
            )
            c.tree = tree
            c.mask = tree.apply(Z)
        search["tree_s"] = time.perf_counter() - t1
    scores = [dscore(fav, c.mask) if within_bounds(int(c.mask.sum()), n, alpha, beta) else -math.inf
              for c in candidates]
    best = candidates[int(np.argmax(scores))]
    if not math.isfinite(max(scores)):
        return Found(mask=np.zeros(n, dtype=bool), ok=False, search=search)
    if best.tree is not None:
        boxes = best.tree.leaf_boxes()
        in_group = {leaf: bool(best.tree.in_group[leaf]) for leaf in boxes}
        best.rules = render_rules(simplify_boxes(boxes, in_group), schema, p.decimals)
        best.tree_rules = RuleSet(tuple(r.conditions for r in best.rules))
        settings: RuleSearchSettings = o["rule_search"]
        if settings.enabled:
            keys = {int(j) for th in thetas for j in np.nonzero(th)[0]}  # every restart's key attributes
            _search_rules(best, p, settings, alpha, beta, search, keys)
    best.search = {**search, "chosen_restart": best.restart, "cut": best.cut}
    return best


def _search_rules(best: Found, p: Prepared, settings: RuleSearchSettings, alpha: float, beta: float,
                  search: dict[str, Any], keys: set[int]) -> None:
    """The rule-search stage on the key attributes (IE's top-k of every restart, and the tree's);
    the simplest rule set within epsilon of the best becomes the group."""
    assert best.tree is not None
    cols = p.schema.encoded_to_column
    used = {cols[j] for j in keys} | {cols[j] for j in best.tree.features}
    columns = [c for c in p.schema.names if c in used]
    kinds = {c.name: c.kind for c in p.schema.columns}
    result = search_rules(p.raw, p.fav, columns, alpha=alpha, beta=beta, settings=settings,
                          decimals=p.decimals, kinds=kinds, reference=best.tree_rules)
    best.rule_search = result
    search["rule_search"] = {**result.to_dict(), "columns": columns}
    if result.simplest is not None:
        best.reported = result.simplest.rules
        best.mask = best.reported.membership(p.raw)


def setup(
    X: Any, favorable: Any, *, attributes: Sequence[str] | None, schema: FeatureSchema | None, k: int,
    alpha: float, beta: float, lam: float, method: str, iterations: int, lr: float, device: str | None,
    random_state: int, restarts: int, init_scale: float, bias: bool, penalty_start: float,
    penalty_end: float, clip_norm: float, bounds_repair: str, tree_max_depth: int | None, tree_prune: str,
    significance: str, split_fraction: float, enum_time_budget_s: float, enum_max_thresholds: int | None,
    dtype: str, layout: str, rule_search: RuleSearchLike | None = None, early_stop: EarlyStopLike | None = None,
) -> tuple[Prepared, dict[str, Any], dict[str, Any]]:
    """Validate everything, encode the attributes; returns (inputs, settings, options)."""
    check_params(k=k, alpha=alpha, beta=beta, lam=lam, method=method, iterations=iterations, lr=lr,
                  restarts=restarts)
    if not 0.0 < split_fraction < 1.0:
        raise MethodError(ERR_PARAM.format(name="split_fraction", rule="in (0, 1)", value=split_fraction))
    if bounds_repair not in ("shift", "none"):
        raise MethodError(ERR_PARAM.format(name="bounds_repair", rule="'shift' or 'none'", value=bounds_repair))
    if tree_prune not in ("first-invalid", "largest-valid"):
        raise MethodError(ERR_PARAM.format(name="tree_prune", rule="'first-invalid' or 'largest-valid'",
                                           value=tree_prune))
    if significance not in ("split", "none"):
        raise MethodError(ERR_PARAM.format(name="significance", rule="'split' or 'none'", value=significance))
    search = RuleSearchSettings.of(rule_search)
    stop = early_stop_settings(early_stop)
    p = prepare(X, favorable, attributes, schema)
    sub = p.schema
    d = p.schema.n_encoded  # the width, without building a lazily prepared window's matrix
    if k > d:
        raise MethodError(ERR_K_RANGE.format(d=d, k=k))
    dev = resolve_device(device)
    settings: dict[str, Any] = {
        "method": method, "k": int(k), "alpha": alpha, "beta": beta, "lam": lam, "iterations": iterations,
        "lr": lr, "restarts": restarts, "init_scale": init_scale, "bias": bias,
        "penalty_start": penalty_start, "penalty_end": penalty_end, "clip_norm": clip_norm,
        "bounds_repair": bounds_repair, "tree_max_depth": tree_max_depth, "tree_prune": tree_prune,
        "significance": significance, "split_fraction": split_fraction, "random_state": random_state,
        "device": str(dev), "dtype": dtype, "layout": layout, "attributes": sub.names, "n_encoded": d,
        "early_stop": asdict(stop),
    }
    if method == "enum":
        settings.update(enum_time_budget_s=enum_time_budget_s, enum_max_thresholds=enum_max_thresholds)
    if method == "ie-dt":
        settings["rule_search"] = asdict(search)
    o = dict(settings)
    o.update(device=dev, k=int(k), early_stop=stop, enum_time_budget_s=enum_time_budget_s, enum_max_thresholds=enum_max_thresholds,
             rule_search=search if method == "ie-dt" else RuleSearchSettings(enabled=False))
    return p, settings, o


#: an :class:`EarlyStop`, the spec's ``rumie.early_stop`` section (any object with ``tol``, ``patience``,
#: ``check_every``) or a mapping of those keys
EarlyStopLike = Any


def early_stop_settings(value: EarlyStopLike | None) -> EarlyStop:
    """``mine``'s ``early_stop`` as an :class:`EarlyStop` (None: the defaults), checked.

    Examples
    --------
    >>> early_stop_settings({"tol": 0.0}).enabled
    False
    """
    if value is None:
        return EarlyStop()
    if isinstance(value, EarlyStop):
        stop = value
    else:
        base = asdict(EarlyStop())
        got = {key: (value.get(key, default) if isinstance(value, dict) else getattr(value, key, default))
               for key, default in base.items()}
        stop = EarlyStop(tol=float(got["tol"]), patience=int(got["patience"]), check_every=int(got["check_every"]))
    if not (math.isfinite(stop.tol) and stop.tol >= 0.0):
        raise MethodError(ERR_PARAM.format(name="early_stop.tol", rule="a finite number >= 0 (0: never stop early)",
                                           value=stop.tol))
    if stop.patience < 1 or stop.check_every < 1:
        raise MethodError(ERR_PARAM.format(name="early_stop.patience/check_every", rule="integers >= 1",
                                           value=(stop.patience, stop.check_every)))
    return stop


def split_significance(
    p: Prepared, o: dict[str, Any], split_fraction: float, random_state: int,
) -> tuple[float | None, float | None, dict[str, Any]]:
    """Mine a random ``split_fraction`` of the rows, test the reported group on the rest.

    Returns ``(honest_dscore, p_value, details)``; with the rule search the details also hold IE-DT's
    own rules' held-out DScore (``tree_honest_dscore``) for comparison.
    """
    n = p.n
    info: dict[str, Any] = {"method": "split", "test": "one-sided pooled two-proportion z-test",
                            "split_fraction": split_fraction}
    if n < MIN_SPLIT_ROWS:
        info["reason"] = f"too few rows for a split-sample test ({n} < {MIN_SPLIT_ROWS})"
        return None, None, info
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(n)
    n_a = int(round(split_fraction * n))
    a, b = np.sort(perm[:n_a]), np.sort(perm[n_a:])
    info.update(n_mine=int(a.size), n_test=int(b.size))
    pa, pb = p.rows(a), p.rows(b)
    fa = pa.fav
    if fa.all() or not fa.any():
        info["reason"] = "the mining half has no variation in the decision"
        return 0.0, 1.0, info
    found = mine_encoded(pa, o)
    if not found.ok:
        info["reason"] = "no group within the bounds on the mining half"
        return None, 1.0, info
    return held_out_dscore(found, pb, info)


def held_out_dscore(found: Found, pb: Prepared, info: dict[str, Any]) -> tuple[float | None, float, dict[str, Any]]:
    """The honest DScore and one-sided p-value of a mined group on rows it never saw (``pb``);
    ``info`` gains the held-out group size, rates and z."""
    tree = found.tree_rules.membership(pb.raw) if found.reported is not None and found.tree_rules is not None else None
    return held_out_stats(found.apply(pb), pb.fav, tree, info)


def held_out_stats(
    mb: np.ndarray, fb: np.ndarray, tb: np.ndarray | None, info: dict[str, Any]
) -> tuple[float | None, float, dict[str, Any]]:
    """:func:`held_out_dscore` from the group's membership ``mb`` on the held-out rows, their
    decisions ``fb`` and IE-DT's own rules' membership ``tb`` there (None without the rule search)."""
    if tb is not None:
        info["tree_honest_dscore"] = dscore(fb, tb) if 0 < tb.sum() < tb.size else None
    info.update(test_group_size=int(mb.sum()), test_fraction=float(mb.mean()))
    z, p_value = two_proportion_test(fb, mb)
    info["z"] = z
    if mb.all() or not mb.any():
        info["reason"] = "the mined group is empty or everything on the held-out half"
        return 0.0, 1.0, info
    p_in, p_out = group_rates(fb, mb)
    info.update(test_p_fav_in=p_in, test_p_fav_out=p_out)
    return p_out - p_in, p_value, info


def stratified_split(fav: np.ndarray, m: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded sample of ``m`` rows stratified by the decision (each class keeps its share, rounded)
    and the other rows; both sorted.

    Examples
    --------
    >>> fav = np.r_[np.ones(30, bool), np.zeros(70, bool)]
    >>> a, b = stratified_split(fav, 10, 0)
    >>> int(fav[a].sum()), a.size, b.size
    (3, 10, 90)
    """
    n = fav.shape[0]
    rng = np.random.default_rng(random_state)
    pos, neg = np.flatnonzero(fav), np.flatnonzero(~fav)
    m_pos = min(pos.size, max(0, int(round(m * pos.size / n))))
    m_neg = min(neg.size, m - m_pos)
    picked = np.concatenate([rng.permutation(pos)[:m_pos], rng.permutation(neg)[:m_neg]])
    taken = np.zeros(n, dtype=bool)
    taken[picked] = True
    return np.flatnonzero(taken), np.flatnonzero(~taken)
