"""RUMIE: find the most discriminated group nobody declared, its key attributes and readable rules.

Implements "Revealing Unfair Models by Mining Interpretable Evidence" (Bajaj et al.; DESIGN §4.1,
``papers/rumie.md``): IE (Algorithm 1, a penalised continuous optimisation of the expected
discrimination score in torch, CUDA when available), IE-DT (Algorithm 2, a decision tree on the key
attributes pruned by minimal cost-complexity pruning while the size bounds hold) and the Enum
baseline (exhaustive conjunctions with a time budget). Beyond the paper, every result carries an
*honest* DScore and a calibrated p-value from a split sample, because the in-sample DScore of a
searched group is optimistic and a monitor must not alert on the optimism of searching.

Data handling: the attributes are encoded by :class:`fairmon.schema.FeatureSchema` (one-hot
categoricals with every category, standardised numerics) - the model's schema when given, otherwise
one fitted on ``X``. As in the paper (whose Adult run counts 100 one-hot "attributes"), ``k`` and the
sparsity penalty count *encoded* attributes; key attributes are reported by original column with the
one-hot detail, thresholds in original units and categories by name. Missing categorical values are a
category of their own (``<NA>``, the schema's rule); a numeric NaN is an error naming the column.

Choices the paper leaves open are parameters of :func:`mine` (defaults in brackets):

* ``bias`` [True]: ``P(x in S) = sigmoid(theta . z + b)`` with a learnt, unpenalised intercept;
* ``penalty_start``/``penalty_end`` [1, 1000]: quadratic penalty ``rho_t * viol^2`` on the violation
  of ``alpha <= mean p(x) <= beta``, ``rho_t`` growing geometrically over the iterations;
* ``restarts`` [4], ``init_scale`` [0.1]: restart 0 starts at ``theta = 0``, the others at
  ``N(0, init_scale^2)``; all run batched; the restart with the best final DScore within bounds wins;
* ``clip_norm`` [5], ``lr`` [0.1], ``iterations`` [2500]: the paper's full-batch gradient steps;
* ``bounds_repair`` ["shift"]: after the top-k truncation the paper's group is ``p(x) >= 0.5``. The
  size bound was only enforced *in expectation*, so that hard group can land outside ``[alpha, beta]``
  (the "trap"). With ``"shift"`` an out-of-bounds group is replaced by the best threshold set
  ``{theta.z + b >= tau}`` of the same truncated linear function whose size is within the bounds
  (IE-DT then starts from that group); ``"none"`` keeps the paper's cut and reports
  ``status="no_group_within_bounds"`` when it is outside. Either way the returned group satisfies the
  bounds or the status says that none was found;
* ``tree_prune`` ["first-invalid"]: Algorithm 2's pseudo-code (stop increasing ``psi`` at the first
  pruned tree outside the bounds; the pruning sequence is sklearn's weakest-link sequence replayed on
  the fitted tree). ``"largest-valid"`` follows the paper's prose instead (the most pruned valid tree on
  the whole path): far simpler rules, lower DScore (COMPAS: 1 rule, DScore 0.31 instead of 0.49);
* ``significance`` ["split"]: mine again on a random ``split_fraction`` of the rows and evaluate the
  group found there on the other rows: ``honest_dscore`` and a one-sided two-proportion z-test
  ``p_value`` (H1: the group is favoured less). The held-out group's size is whatever the rule gives
  there (not forced into the bounds). Under "favorable independent of membership" the p-value is
  uniform because the group never saw the test rows (``benchmarks/rumie_calibration`` measures it).
  :func:`held_out_test` runs this step alone. ``"none"`` skips it;
* ``dtype`` ["float32"], ``layout`` ["auto"]: the optimisation's precision and matrix layout (CSR
  products on CPU when the encoded matrix is mostly zeros, dense otherwise and on CUDA); the
  gradient is written by hand (checked against autograd in the tests) for speed;
* ``num_threads`` [half the cores]: torch CPU threads during the call (restored afterwards); on a
  shared 2-core machine two threads are many times slower than one.

Example
-------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> X = pd.DataFrame({"age": rng.integers(18, 70, 400), "colour": rng.choice(["red", "blue"], 400)})
>>> fav = np.where(X["age"] <= 30, rng.random(400) < 0.2, rng.random(400) < 0.8)
>>> ev = mine(X, fav, k=1, alpha=0.2, beta=0.8, iterations=300)
>>> ev.key_attributes, ev.within_bounds
(['age'], True)
>>> ev.rule.startswith("age <= ")
True
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import InsufficientDataError, MethodError
from fairmon.fairness._rumie_stats import (
    best_cut,
    dscore,
    group_rates,
    two_proportion_test,
    within_bounds,
)

if TYPE_CHECKING:
    from fairmon.fairness._rumie_enum import EnumResult
    from fairmon.fairness._rumie_tree import PrunedTree, Rule
    from fairmon.schema import FeatureSchema

__all__ = [
    "Evidence",
    "mine",
    "held_out_test",
    "enum_baseline",
    "dscore",
    "ERR_EMPTY",
    "ERR_TOO_FEW_ROWS",
    "ERR_NOT_FRAME",
    "ERR_FAVORABLE_LENGTH",
    "ERR_FAVORABLE_NOT_BINARY",
    "ERR_FAVORABLE_NAN",
    "ERR_FAVORABLE_COLUMN",
    "ERR_NAN",
    "ERR_BOUNDS_ORDER",
    "ERR_BOUNDS_RANGE",
    "ERR_K_RANGE",
    "ERR_UNKNOWN_ATTRIBUTES",
    "ERR_NO_ATTRIBUTES",
    "ERR_METHOD",
    "ERR_PARAM",
    "REASON_ALL_FAVORABLE",
    "REASON_NONE_FAVORABLE",
    "REASON_NO_GROUP",
]

Method = Literal["ie", "ie-dt", "enum"]
Status = Literal["ok", "no_variation", "no_group_within_bounds"]

ERR_EMPTY = "RUMIE needs data: the frame has no rows"
ERR_TOO_FEW_ROWS = "RUMIE needs at least {min_rows} rows to form a group and its complement; got {n}"
ERR_NOT_FRAME = "X must be a pandas DataFrame of raw attribute columns, got {type}"
ERR_FAVORABLE_LENGTH = "favorable has {got} values but X has {n} rows"
ERR_FAVORABLE_NOT_BINARY = "{what} must be binary (bool or 0/1); found values {values}"
ERR_FAVORABLE_NAN = "{what} has {count} missing values; every row needs a decision"
ERR_FAVORABLE_COLUMN = "favorable column {column!r} is not in the data; columns are {columns}"
ERR_NAN = "attribute column {column!r} has {count} missing (NaN) numeric values; drop or impute them first"
ERR_BOUNDS_ORDER = "alpha ({alpha}) must not exceed beta ({beta})"
ERR_BOUNDS_RANGE = "alpha and beta must lie in [0, 1]; got alpha={alpha}, beta={beta}"
ERR_K_RANGE = "k must be between 1 and the number of encoded attributes ({d}); got {k}"
ERR_K_TYPE = "k must be a positive integer (the number of key encoded attributes); got {k!r}"
ERR_UNKNOWN_ATTRIBUTES = "unknown attributes {names}; available columns are {available}"
ERR_NO_ATTRIBUTES = "no attributes to mine: pass attribute columns in X"
ERR_METHOD = "method must be one of {allowed}; got {method!r}"
ERR_PARAM = "{name} must be {rule}; got {value!r}"

REASON_ALL_FAVORABLE = "every row received the favorable decision: no group can be discriminated (DScore 0)"
REASON_NONE_FAVORABLE = "no row received the favorable decision: no group can be discriminated (DScore 0)"
REASON_NO_GROUP = (
    "no group with size fraction within [{alpha}, {beta}] was found (n={n}); "
    "widen the bounds or use bounds_repair='shift'"
)

MIN_ROWS = 2
MIN_SPLIT_ROWS = 20


# ============================================================================ result
@dataclass
class Evidence:
    """The interpretable evidence of one RUMIE run (one rich result; :meth:`to_dict` for storage).

    ``dscore`` is ``P(fav | rest) - P(fav | group)`` on the mined rows (in-sample, optimistic);
    ``honest_dscore`` and ``p_value`` come from the held-out part of a split sample.
    """

    method: str
    status: Status
    reason: str
    n_rows: int
    mask: np.ndarray
    dscore: float | None
    p_fav_in: float | None
    p_fav_out: float | None
    group_size: int
    fraction: float
    within_bounds: bool
    key_attributes: list[str] = field(default_factory=list)
    key_features: list[dict[str, Any]] = field(default_factory=list)
    theta: dict[str, float] = field(default_factory=dict)
    bias: float | None = None
    threshold: float | None = None
    rules: list[str] = field(default_factory=list)
    rule: str = ""
    rule_conditions: list[list[dict[str, Any]]] = field(default_factory=list)
    tree: dict[str, Any] | None = None
    ie_dscore: float | None = None
    honest_dscore: float | None = None
    p_value: float | None = None
    significance: dict[str, Any] = field(default_factory=dict)
    runtime_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, include_mask: bool = False) -> dict[str, Any]:
        """JSON-safe dict (NaN/inf become ``None``); the mask as row indices when asked."""
        out: dict[str, Any] = {
            "method": self.method,
            "status": self.status,
            "reason": self.reason,
            "n_rows": self.n_rows,
            "dscore": self.dscore,
            "honest_dscore": self.honest_dscore,
            "p_value": self.p_value,
            "p_fav_in": self.p_fav_in,
            "p_fav_out": self.p_fav_out,
            "group_size": self.group_size,
            "fraction": self.fraction,
            "within_bounds": self.within_bounds,
            "key_attributes": list(self.key_attributes),
            "key_features": list(self.key_features),
            "theta": dict(self.theta),
            "bias": self.bias,
            "threshold": self.threshold,
            "rule": self.rule,
            "rules": list(self.rules),
            "rule_conditions": self.rule_conditions,
            "tree": self.tree,
            "ie_dscore": self.ie_dscore,
            "significance": self.significance,
            "runtime_s": self.runtime_s,
            "timings": dict(self.timings),
            "settings": dict(self.settings),
            "search": dict(self.search),
        }
        if include_mask:
            out["group_rows"] = np.nonzero(self.mask)[0].tolist()
        return _json_safe(out)

    def summary(self) -> str:
        """A few readable lines (what the CLI prints)."""
        lines = [f"RUMIE {self.method}: {self.status}"]
        if self.status != "ok":
            lines.append(f"  {self.reason}")
            return "\n".join(lines)
        lines.append(
            f"  group: {self.group_size} of {self.n_rows} rows ({self.fraction:.1%}), "
            f"P(favorable) {self.p_fav_in:.3f} inside vs {self.p_fav_out:.3f} outside"
        )
        lines.append(f"  DScore (in-sample): {self.dscore:.4f}")
        if self.honest_dscore is not None:
            lines.append(f"  DScore (held-out):  {self.honest_dscore:.4f}   p-value {_fmt_p(self.p_value)}")
        elif self.significance.get("reason"):
            lines.append(f"  significance: {self.significance['reason']}")
        if self.key_attributes:
            detail = ", ".join(f["encoded"] for f in self.key_features)
            lines.append(f"  key attributes: {', '.join(self.key_attributes)}  ({detail})")
        lines.append("  rules (group = any of):")
        for r in self.rules:
            lines.append(f"    - {r}")
        lines.append(f"  runtime: {self.runtime_s:.2f} s")
        return "\n".join(lines)


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.ndarray):
        return _json_safe(obj.tolist())
    return obj


# ============================================================================ input handling
def _check_params(
    *, k: int, alpha: float, beta: float, lam: float, method: str, iterations: int, lr: float, restarts: int
) -> None:
    if method not in ("ie", "ie-dt", "enum"):
        raise MethodError(ERR_METHOD.format(allowed=["ie", "ie-dt", "enum"], method=method))
    if not (0.0 <= alpha <= 1.0 and 0.0 <= beta <= 1.0):
        raise MethodError(ERR_BOUNDS_RANGE.format(alpha=alpha, beta=beta))
    if alpha > beta:
        raise MethodError(ERR_BOUNDS_ORDER.format(alpha=alpha, beta=beta))
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise MethodError(ERR_K_TYPE.format(k=k))
    if lam < 0 or not math.isfinite(lam):
        raise MethodError(ERR_PARAM.format(name="lam", rule="a finite number >= 0", value=lam))
    if iterations < 1:
        raise MethodError(ERR_PARAM.format(name="iterations", rule="at least 1", value=iterations))
    if not lr > 0:
        raise MethodError(ERR_PARAM.format(name="lr", rule="> 0", value=lr))
    if restarts < 1:
        raise MethodError(ERR_PARAM.format(name="restarts", rule="at least 1", value=restarts))


def _favorable_array(X: pd.DataFrame, favorable: Any) -> tuple[np.ndarray, str | None]:
    col = None
    if isinstance(favorable, str):
        if favorable not in X.columns:
            raise MethodError(ERR_FAVORABLE_COLUMN.format(column=favorable, columns=list(X.columns)))
        col = favorable
        favorable = X[favorable]
    s = pd.Series(np.asarray(favorable).ravel() if not isinstance(favorable, pd.Series) else favorable.to_numpy())
    if len(s) != len(X):
        raise MethodError(ERR_FAVORABLE_LENGTH.format(got=len(s), n=len(X)))
    what = "favorable" if col is None else f"favorable column {col!r}"
    nan = int(s.isna().sum())
    if nan:
        raise MethodError(ERR_FAVORABLE_NAN.format(what=what, count=nan))
    vals = pd.unique(s)
    try:
        ok = all(v in (0, 1) or v is True or v is False for v in vals.tolist())
    except TypeError:
        ok = False
    if not ok:
        shown = sorted(map(str, vals.tolist()))[:10]
        raise MethodError(ERR_FAVORABLE_NOT_BINARY.format(what=what, values=shown))
    return s.astype(bool).to_numpy(), col


def _prepare(
    X: Any, favorable: Any, attributes: Sequence[str] | None, schema: FeatureSchema | None
) -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    from fairmon.schema import ColumnSpec, FeatureSchema

    if not isinstance(X, pd.DataFrame):
        raise MethodError(ERR_NOT_FRAME.format(type=type(X).__name__))
    if len(X) == 0:
        raise InsufficientDataError(ERR_EMPTY)
    fav, fav_col = _favorable_array(X, favorable)
    if attributes is None:
        attrs = [str(c) for c in X.columns if c != fav_col]
        if schema is not None:
            attrs = [a for a in schema.names if a in attrs] or attrs
    else:
        attrs = [str(a) for a in attributes]
        unknown = [a for a in attrs if a not in X.columns or (schema is not None and a not in schema.names)]
        if unknown:
            available = schema.names if schema is not None else [str(c) for c in X.columns]
            raise MethodError(ERR_UNKNOWN_ATTRIBUTES.format(names=unknown, available=available))
    if not attrs:
        raise MethodError(ERR_NO_ATTRIBUTES)
    if len(X) < MIN_ROWS:
        raise InsufficientDataError(ERR_TOO_FEW_ROWS.format(min_rows=MIN_ROWS, n=len(X)))
    if schema is not None:
        specs: list[ColumnSpec] = [schema.column(a) for a in attrs]
        sub = FeatureSchema(tuple(specs))
        numeric = [c.name for c in specs if c.kind == "numeric"]
    else:
        numeric = [a for a in attrs if pd.api.types.is_numeric_dtype(X[a]) and not pd.api.types.is_bool_dtype(X[a])]
    for name in numeric:
        count = int(X[name].isna().sum())
        if count:
            raise MethodError(ERR_NAN.format(column=name, count=count))
    if schema is None:
        sub = FeatureSchema.fit(X, columns=attrs)
    Z = sub.transform(X)
    return Z, fav, sub


@contextmanager
def _torch_threads(num_threads: int | None, device_type: str) -> Iterator[None]:
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


# ============================================================================ the core search
@dataclass
class _Found:
    """One mining result on encoded rows, with a way to apply the group to new rows."""

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

    def apply(self, Z: np.ndarray) -> np.ndarray:
        if self.tree is not None:
            return self.tree.apply(Z)
        if self.enum is not None:
            return self.enum.evaluate(Z)
        assert self.theta is not None
        return (Z @ self.theta + self.bias) >= self.tau


def _mine_encoded(Z: np.ndarray, fav: np.ndarray, schema: FeatureSchema, o: dict[str, Any]) -> _Found:
    n = Z.shape[0]
    alpha, beta, k = o["alpha"], o["beta"], o["k"]
    if o["method"] == "enum":
        from fairmon.fairness._rumie_enum import enumerate_groups

        res = enumerate_groups(
            Z, fav, schema, k=k, alpha=alpha, beta=beta, time_budget_s=o["enum_time_budget_s"],
            max_thresholds=o["enum_max_thresholds"],
        )
        esearch = {"evaluated": res.evaluated, "complete": res.complete, "depth_completed": res.depth_completed}
        if not res.spec:
            return _Found(mask=np.zeros(n, dtype=bool), ok=False, enum=res, search=esearch)
        return _Found(mask=res.evaluate(Z), ok=True, enum=res, search=esearch)

    from fairmon.fairness._rumie_ie import fit_ie, truncate_top_k

    t0 = time.perf_counter()
    fit = fit_ie(
        Z, fav, k=k, alpha=alpha, beta=beta, lam=o["lam"], iterations=o["iterations"], lr=o["lr"],
        clip_norm=o["clip_norm"], restarts=o["restarts"], init_scale=o["init_scale"], bias=o["bias"],
        penalty_start=o["penalty_start"], penalty_end=o["penalty_end"], device=o["device"],
        random_state=o["random_state"], dtype=o["dtype"], layout=o["layout"],
    )
    t_opt = time.perf_counter() - t0
    thetas = truncate_top_k(fit.theta, k)
    candidates: list[_Found] = []
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
        candidates.append(_Found(mask=mask, ok=True, theta=th, bias=b, tau=tau, cut=cut, ie_mask=mask, restart=r))
    search: dict[str, Any] = {
        "restarts": int(thetas.shape[0]),
        "expected_dscore": [float(v) for v in fit.expected_dscore],
        "expected_fraction": [float(v) for v in fit.mean_p],
        "optimise_s": t_opt,
        "distinct_groups": len(candidates),
        "device": fit.device,
    }
    if not candidates:
        return _Found(mask=np.zeros(n, dtype=bool), ok=False, search=search)
    if o["method"] == "ie-dt":
        from fairmon.fairness._rumie_tree import fit_pruned_tree, render_rules, simplify_boxes

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
        return _Found(mask=np.zeros(n, dtype=bool), ok=False, search=search)
    if best.tree is not None:
        from fairmon.fairness._rumie_tree import render_rules, simplify_boxes

        boxes = best.tree.leaf_boxes()
        in_group = {leaf: bool(best.tree.in_group[leaf]) for leaf in boxes}
        best.rules = render_rules(simplify_boxes(boxes, in_group), schema)
    best.search = {**search, "chosen_restart": best.restart, "cut": best.cut}
    return best


def _setup(
    X: Any, favorable: Any, *, attributes: Sequence[str] | None, schema: FeatureSchema | None, k: int,
    alpha: float, beta: float, lam: float, method: str, iterations: int, lr: float, device: str | None,
    random_state: int, restarts: int, init_scale: float, bias: bool, penalty_start: float,
    penalty_end: float, clip_norm: float, bounds_repair: str, tree_max_depth: int | None, tree_prune: str,
    significance: str, split_fraction: float, enum_time_budget_s: float, enum_max_thresholds: int | None,
    dtype: str, layout: str,
) -> tuple[np.ndarray, np.ndarray, FeatureSchema, dict[str, Any], dict[str, Any]]:
    """Validate everything, encode the attributes; returns (Z, favorable, schema, settings, options)."""
    from fairmon._device import resolve_device

    _check_params(k=k, alpha=alpha, beta=beta, lam=lam, method=method, iterations=iterations, lr=lr,
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
    Z, fav, sub = _prepare(X, favorable, attributes, schema)
    d = Z.shape[1]
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
    }
    if method == "enum":
        settings.update(enum_time_budget_s=enum_time_budget_s, enum_max_thresholds=enum_max_thresholds)
    o = dict(settings)
    o.update(device=dev, k=int(k), enum_time_budget_s=enum_time_budget_s, enum_max_thresholds=enum_max_thresholds)
    return Z, fav, sub, settings, o


# ============================================================================ public API
def mine(
    X: pd.DataFrame,
    favorable: Any,
    *,
    attributes: Sequence[str] | None = None,
    schema: FeatureSchema | None = None,
    k: int = 5,
    alpha: float = 0.45,
    beta: float = 0.55,
    lam: float = 1.0,
    method: Method = "ie-dt",
    iterations: int = 2500,
    lr: float = 0.1,
    device: str | None = None,
    random_state: int = 0,
    restarts: int = 4,
    init_scale: float = 0.1,
    bias: bool = True,
    penalty_start: float = 1.0,
    penalty_end: float = 1000.0,
    clip_norm: float = 5.0,
    bounds_repair: Literal["shift", "none"] = "shift",
    tree_max_depth: int | None = None,
    tree_prune: Literal["first-invalid", "largest-valid"] = "first-invalid",
    significance: Literal["split", "none"] = "split",
    split_fraction: float = 0.5,
    enum_time_budget_s: float = 60.0,
    enum_max_thresholds: int | None = None,
    dtype: Literal["float32", "float64"] = "float32",
    layout: Literal["auto", "dense", "sparse"] = "auto",
    num_threads: int | None = None,
) -> Evidence:
    """Mine the most discriminated group of ``X`` under the decisions ``favorable``.

    Parameters
    ----------
    X : DataFrame
        Raw attribute columns (one row per decision).
    favorable : array-like of bool/{0,1}, or a column name of ``X``
        1 where the model's decision is the favorable one.
    attributes : list of str, optional
        The attribute set ``A`` (original column names); default all columns of ``X`` (except a
        ``favorable`` column).
    schema : FeatureSchema, optional
        Encode with this schema (e.g. the model's); default: fit one on ``X[attributes]``.
    k, alpha, beta, lam, iterations, lr
        The paper's parameters: at most ``k`` key (encoded) attributes, group size fraction in
        ``[alpha, beta]``, sparsity weight ``lam``, full-batch gradient steps with learning rate ``lr``.
    method : {"ie", "ie-dt", "enum"}
        IE (Algorithm 1), IE-DT (Algorithm 2, default) or the Enum baseline.
    device : str, optional
        Torch device; ``None`` picks CUDA when available.
    random_state : int
        Seeds the restarts, the tree and the significance split: same inputs, same result.
    restarts, init_scale, bias, penalty_start, penalty_end, clip_norm, bounds_repair
        Choices the paper leaves open; see the module docstring.
    tree_max_depth : int, optional
        Depth limit of the unpruned IE-DT tree (default unlimited: it reproduces the IE group).
    significance, split_fraction
        Honest DScore and p-value from a split sample (``"none"`` to skip).
    enum_time_budget_s, enum_max_thresholds
        Budget and optional cap on numeric thresholds (quantiles) for ``method="enum"``.
    dtype, layout, num_threads
        Numerics: torch dtype, dense or sparse (CSR) matrix products, CPU threads.

    Returns
    -------
    Evidence

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"g": ["a", "a", "b", "b"] * 25, "x": list(range(100))})
    >>> ev = mine(X, (X["g"] == "a").to_numpy(), k=1, alpha=0.4, beta=0.6, iterations=200,
    ...           significance="none")
    >>> ev.rule, round(ev.dscore, 2)
    ('g = b', 1.0)
    """
    t_start = time.perf_counter()
    Z, fav, sub, settings, o = _setup(
        X, favorable, attributes=attributes, schema=schema, k=k, alpha=alpha, beta=beta, lam=lam,
        method=method, iterations=iterations, lr=lr, device=device, random_state=random_state,
        restarts=restarts, init_scale=init_scale, bias=bias, penalty_start=penalty_start,
        penalty_end=penalty_end, clip_norm=clip_norm, bounds_repair=bounds_repair,
        tree_max_depth=tree_max_depth, tree_prune=tree_prune, significance=significance,
        split_fraction=split_fraction, enum_time_budget_s=enum_time_budget_s,
        enum_max_thresholds=enum_max_thresholds, dtype=dtype, layout=layout,
    )
    n = Z.shape[0]
    dev = o["device"]
    empty = np.zeros(n, dtype=bool)
    if fav.all() or not fav.any():
        reason = REASON_ALL_FAVORABLE if fav.all() else REASON_NONE_FAVORABLE
        return Evidence(
            method=method, status="no_variation", reason=reason, n_rows=n, mask=empty, dscore=0.0,
            p_fav_in=None, p_fav_out=float(fav.mean()), group_size=0, fraction=0.0, within_bounds=False,
            honest_dscore=0.0 if significance == "split" else None,
            p_value=1.0 if significance == "split" else None,
            significance={"method": significance, "reason": reason},
            runtime_s=time.perf_counter() - t_start, settings=settings,
        )

    timings: dict[str, float] = {}
    with _torch_threads(num_threads, dev.type):
        t0 = time.perf_counter()
        found = _mine_encoded(Z, fav, sub, o)
        timings["mine_s"] = time.perf_counter() - t0
        sig: dict[str, Any] = {"method": significance}
        honest = p_value = None
        if significance == "split":
            t1 = time.perf_counter()
            honest, p_value, sig = _split_significance(Z, fav, sub, o, split_fraction, random_state)
            timings["significance_s"] = time.perf_counter() - t1

    if not found.ok:
        return Evidence(
            method=method, status="no_group_within_bounds",
            reason=REASON_NO_GROUP.format(alpha=alpha, beta=beta, n=n), n_rows=n, mask=empty, dscore=None,
            p_fav_in=None, p_fav_out=None, group_size=0, fraction=0.0, within_bounds=False,
            honest_dscore=honest, p_value=p_value, significance=sig, runtime_s=time.perf_counter() - t_start,
            timings=timings, settings=settings, search=found.search,
        )
    return _build_evidence(found, Z, fav, sub, method, settings, honest, p_value, sig, timings, t_start)


def held_out_test(X: pd.DataFrame, favorable: Any, *, num_threads: int | None = None, **options: Any) -> dict[str, Any]:
    """Only the significance step of :func:`mine`: mine a random part, test the group on the rest.

    Takes the same keyword options as :func:`mine` (``split_fraction`` and ``random_state`` choose the
    split) and returns ``{"honest_dscore", "p_value", ...split details}``, exactly the numbers
    ``mine(..., significance="split")`` reports, without mining the full data as well (about a third
    of the cost; the calibration benchmark runs hundreds of windows through it).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"g": rng.choice(["a", "b"], 400)})
    >>> res = held_out_test(X, rng.random(400) < 0.5, k=1, alpha=0.3, beta=0.7, iterations=100)
    >>> sorted(res)[:3], 0.0 <= res["p_value"] <= 1.0
    (['honest_dscore', 'method', 'n_mine'], True)
    """
    import inspect

    params = {
        name: p.default for name, p in inspect.signature(mine).parameters.items() if p.kind == p.KEYWORD_ONLY
    }
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise MethodError(ERR_PARAM.format(name="options", rule=f"keywords of mine(), not {unknown}", value=options))
    params.update(options)
    params.pop("num_threads", None)
    params["significance"] = "split"
    Z, fav, sub, _, o = _setup(X, favorable, **params)
    if fav.all() or not fav.any():
        reason = REASON_ALL_FAVORABLE if fav.all() else REASON_NONE_FAVORABLE
        return {"honest_dscore": 0.0, "p_value": 1.0, "method": "split", "reason": reason}
    with _torch_threads(num_threads, o["device"].type):
        honest, p_value, info = _split_significance(Z, fav, sub, o, params["split_fraction"], params["random_state"])
    return _json_safe({"honest_dscore": honest, "p_value": p_value, **info})


def _split_significance(
    Z: np.ndarray, fav: np.ndarray, schema: FeatureSchema, o: dict[str, Any], split_fraction: float,
    random_state: int,
) -> tuple[float | None, float | None, dict[str, Any]]:
    n = Z.shape[0]
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
    fa = fav[a]
    if fa.all() or not fa.any():
        info["reason"] = "the mining half has no variation in the decision"
        return 0.0, 1.0, info
    found = _mine_encoded(Z[a], fa, schema, o)
    if not found.ok:
        info["reason"] = "no group within the bounds on the mining half"
        return None, 1.0, info
    mb = found.apply(Z[b])
    fb = fav[b]
    info.update(test_group_size=int(mb.sum()), test_fraction=float(mb.mean()))
    z, p = two_proportion_test(fb, mb)
    info["z"] = z
    if mb.all() or not mb.any():
        info["reason"] = "the mined group is empty or everything on the held-out half"
        return 0.0, 1.0, info
    p_in, p_out = group_rates(fb, mb)
    info.update(test_p_fav_in=p_in, test_p_fav_out=p_out)
    return p_out - p_in, p, info


def _key_features(theta: np.ndarray, schema: FeatureSchema) -> tuple[list[str], list[dict[str, Any]]]:
    names, cols = schema.encoded_names, schema.encoded_to_column
    order = [int(j) for j in np.argsort(-np.abs(theta), kind="stable") if theta[j] != 0.0]
    feats: list[dict[str, Any]] = []
    keys: list[str] = []
    for j in order:
        col = cols[j]
        cat = names[j].split("=", 1)[1] if schema.column(col).kind == "categorical" else None
        feats.append({"encoded": names[j], "column": col, "category": cat, "weight": float(theta[j])})
        if col not in keys:
            keys.append(col)
    return keys, feats


def _tree_json(found: _Found, Z: np.ndarray, fav: np.ndarray, schema: FeatureSchema) -> dict[str, Any]:
    from fairmon.fairness._rumie_tree import render_rules

    tree = found.tree
    assert tree is not None
    t = tree.estimator.tree_
    leaf_ids = tree.leaf_ids(Z)
    n = Z.shape[0]
    boxes = tree.leaf_boxes()
    names = schema.encoded_names

    def node(i: int) -> dict[str, Any]:
        if i in boxes:
            rows = leaf_ids == i
            size = int(rows.sum())
            rule = render_rules([boxes[i]], schema)[0]
            return {
                "leaf": i, "size": size, "fraction": size / n,
                "p_fav": float(fav[rows].mean()) if size else None,
                "in_group": bool(tree.in_group[i]), "path": rule.text,
            }
        j = tree.features[int(t.feature[i])]
        thr = float(t.threshold[i])
        col = schema.encoded_to_column[j]
        if schema.column(col).kind == "numeric":
            split = {"column": col, "threshold": schema.to_original_value(col, thr), "left": "<=", "right": ">"}
        else:
            split = {"column": col, "category": names[j].split("=", 1)[1], "left": "!=", "right": "="}
        return {"split": split, "left": node(int(t.children_left[i])), "right": node(int(t.children_right[i]))}

    return {
        "ccp_alpha": tree.ccp_alpha,
        "n_leaves": len(tree.leaves),
        "n_leaves_unpruned": tree.n_leaves_unpruned,
        "features": [names[j] for j in tree.features],
        "root": node(0),
    }


def _build_evidence(
    found: _Found, Z: np.ndarray, fav: np.ndarray, schema: FeatureSchema, method: str,
    settings: dict[str, Any], honest: float | None, p_value: float | None, sig: dict[str, Any],
    timings: dict[str, float], t_start: float,
) -> Evidence:
    from fairmon.fairness._rumie_tree import union_text

    n = Z.shape[0]
    mask = found.mask
    p_in, p_out = group_rates(fav, mask)
    size = int(mask.sum())
    ev = Evidence(
        method=method, status="ok", reason="", n_rows=n, mask=mask, dscore=p_out - p_in, p_fav_in=p_in,
        p_fav_out=p_out, group_size=size, fraction=size / n,
        within_bounds=within_bounds(size, n, settings["alpha"], settings["beta"]),
        honest_dscore=honest, p_value=p_value, significance=sig, timings=timings, settings=settings,
        search=found.search,
    )
    if found.enum is not None:
        conds = found.enum.conditions
        ev.key_attributes = list(dict.fromkeys(c.column for c in conds))
        ev.key_features = [{"encoded": c.text, "column": c.column, "category": None, "weight": None} for c in conds]
        text = " AND ".join(c.text for c in conds)
        ev.rules, ev.rule = [text], text
        ev.rule_conditions = [[c.to_dict() for c in conds]]
    else:
        assert found.theta is not None
        ev.key_attributes, ev.key_features = _key_features(found.theta, schema)
        names = schema.encoded_names
        ev.theta = {names[j]: float(found.theta[j]) for j in np.nonzero(found.theta)[0]}
        ev.bias, ev.threshold = float(found.bias), float(found.tau)
        assert found.ie_mask is not None
        ev.ie_dscore = dscore(fav, found.ie_mask)
        if found.tree is not None:
            ev.rules = [r.text for r in found.rules]
            ev.rule = union_text(found.rules)
            ev.rule_conditions = [[c.to_dict() for c in r.conditions] for r in found.rules]
            ev.tree = _tree_json(found, Z, fav, schema)
        else:
            ev.rule = _linear_rule_text(found.theta, found.bias, found.tau, schema)
            ev.rules = [ev.rule]
    ev.runtime_s = time.perf_counter() - t_start
    return ev


def _linear_rule_text(theta: np.ndarray, b: float, tau: float, schema: FeatureSchema) -> str:
    """IE's group ``theta.z + b >= tau`` in original units: ``sum w_j * term_j >= c``."""
    names, cols = schema.encoded_names, schema.encoded_to_column
    const = tau - b
    terms: list[str] = []
    for j in np.argsort(-np.abs(theta), kind="stable"):
        w = float(theta[j])
        if w == 0.0:
            continue
        spec = schema.column(cols[j])
        if spec.kind == "numeric":
            # w * (x - mean) / scale  ->  (w/scale) * x - w*mean/scale
            coef = w / spec.scale
            const += w * spec.mean / spec.scale
            terms.append(f"{coef:+.4g}*{spec.name}")
        else:
            terms.append(f"{w:+.4g}*[{names[j].replace('=', ' = ', 1)}]")
    return f"{' '.join(terms)} >= {const:.4g}"


def enum_baseline(
    X: pd.DataFrame,
    favorable: Any,
    *,
    k: int,
    alpha: float,
    beta: float,
    time_budget_s: float,
    attributes: Sequence[str] | None = None,
    max_thresholds: int | None = None,
    significance: Literal["split", "none"] = "none",
    random_state: int = 0,
) -> Evidence:
    """The paper's Enum baseline: best conjunction of at most ``k`` conditions within a time budget.

    Conditions are categorical equality/inequality and numeric thresholds at every unique value;
    ``search["complete"]`` says whether the enumeration finished within ``time_budget_s``.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"g": ["a", "b"] * 10})
    >>> ev = enum_baseline(X, (X["g"] == "a").to_numpy(), k=1, alpha=0.3, beta=0.7, time_budget_s=5)
    >>> ev.rule, ev.dscore
    ('g = b', 1.0)
    """
    return mine(
        X, favorable, attributes=attributes, k=k, alpha=alpha, beta=beta, method="enum",
        enum_time_budget_s=time_budget_s, enum_max_thresholds=max_thresholds, significance=significance,
        random_state=random_state,
    )
