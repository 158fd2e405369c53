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
* ``dtype`` ["float32"], ``layout`` ["auto"]: the optimisation's precision and matrix layout (dense
  ``[Z, 1]`` and its (d+1, n) transpose, or CSR products on CPU when the encoded matrix is wide and
  mostly zeros: ``_rumie_ie.choose_layout``, from measured costs); the gradient is written by hand
  (checked against autograd in the tests) for speed;
* ``early_stop`` [tol 0.002, patience 300, check every 50]: IE stops before ``iterations`` once, in
  every restart, at most a ``tol`` fraction of the rows changed its hard group (the top-k cut, size
  clipped into the bounds) within the last ``patience`` iterations; ``Evidence.search`` reports
  ``iterations_run`` and ``stopped_early``. Beyond the paper (issue 21); see ``_rumie_ie``;
* ``num_threads`` [half the cores]: torch CPU threads during the call (restored afterwards); on a
  shared 2-core machine two threads are many times slower than one;
* ``rule_search`` [on, 3 rules x 3 conditions, epsilon 0.01]: beyond the paper, a search for readable
  DNF rule sets after IE-DT (:mod:`fairmon.fairness._rule_search`; a :class:`RuleSearchSettings` or
  the spec's ``rumie.rule_search`` section). The reported group is the rule set with the fewest
  conditions whose DScore is within epsilon of the best found (IE-DT's own rules included), so the
  alert's text *is* the group; ``Evidence.rules_best``/``rules_simplest``/``rules_ie_dt`` keep the
  trade. The split test mines (and searches) on the mining half and tests the reported rules on the
  held-out half. ``method="ie"`` keeps the paper's linear group.

Modules: inputs and error texts (``_rumie_inputs``), the result (``_rumie_evidence``), mining and the
split test (``_rumie_core``), assembling the evidence (``_rumie_build``), IE (``_rumie_ie``), IE-DT
(``_rumie_tree``), Enum (``_rumie_enum``), statistics (``_rumie_stats``), the rule search
(``_rule_search``, ``_rule_search_bits``), and the rule objects in :mod:`fairmon.rules`.

Example
-------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> X = pd.DataFrame({"age": rng.integers(18, 70, 400), "colour": rng.choice(["red", "blue"], 400)})
>>> fav = np.where(X["age"] <= 30, rng.random(400) < 0.2, rng.random(400) < 0.8)
>>> ev = mine(X, fav, k=1, alpha=0.2, beta=0.8, iterations=300)
>>> ev.key_attributes, ev.within_bounds
(['age'], True)
>>> ev.rule
'age <= 30'

"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import MethodError
from fairmon.fairness._rule_search import (
    ERR_SEARCH_SETTING,
    RuleSearchLike,
    RuleSearchResult,
    RuleSearchSettings,
    RuleSetScore,
)
from fairmon.fairness._rumie_build import build_evidence
from fairmon.fairness._rumie_core import (
    EarlyStopLike,
    held_out_stats,
    mine_encoded,
    setup,
    split_significance,
    stratified_split,
    torch_threads,
)
from fairmon.fairness._rumie_evidence import Evidence, json_safe
from fairmon.fairness._rumie_inputs import (
    ERR_BOUNDS_ORDER,
    ERR_BOUNDS_RANGE,
    ERR_EMPTY,
    ERR_FAVORABLE_COLUMN,
    ERR_FAVORABLE_LENGTH,
    ERR_FAVORABLE_NAN,
    ERR_FAVORABLE_NOT_BINARY,
    ERR_K_RANGE,
    ERR_K_TYPE,
    ERR_METHOD,
    ERR_NAN,
    ERR_NO_ATTRIBUTES,
    ERR_NOT_FRAME,
    ERR_PARAM,
    ERR_TOO_FEW_ROWS,
    ERR_UNKNOWN_ATTRIBUTES,
    MIN_ROWS,
    MIN_SPLIT_ROWS,
    REASON_ALL_FAVORABLE,
    REASON_NO_GROUP,
    REASON_NONE_FAVORABLE,
    Prepared,
)
from fairmon.fairness._rumie_stats import dscore, within_bounds

if TYPE_CHECKING:
    from fairmon.schema import FeatureSchema

__all__ = [
    "Evidence",
    "RuleSearchSettings",
    "RuleSetScore",
    "RuleSearchResult",
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
    "ERR_K_TYPE",
    "ERR_UNKNOWN_ATTRIBUTES",
    "ERR_NO_ATTRIBUTES",
    "ERR_METHOD",
    "ERR_PARAM",
    "ERR_SEARCH_SETTING",
    "MIN_ROWS",
    "MIN_SPLIT_ROWS",
    "REASON_ALL_FAVORABLE",
    "REASON_NONE_FAVORABLE",
    "REASON_NO_GROUP",
]

Method = Literal["ie", "ie-dt", "enum"]


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
    rule_search: RuleSearchLike | None = None,
    max_rows: int | None = None,
    early_stop: EarlyStopLike | None = None,
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
    rule_search : RuleSearchSettings or the spec's ``rumie.rule_search`` section, optional
        The rule-search stage after IE-DT (default on: at most 3 rules x 3 conditions, epsilon 0.01);
        ``RuleSearchSettings(enabled=False)`` reports IE-DT's own rules.
    early_stop : mapping or the spec's ``rumie.early_stop`` section, optional
        ``tol``, ``patience``, ``check_every`` of the early stop (module docstring); ``{"tol": 0}``
        runs all ``iterations``. Default: tol 0.002, patience 300, every 50 iterations.
    max_rows : int, optional
        Mine on a sample for speed: with more rows than this, the group is mined once, on a sample
        stratified by the decision of ``min(max_rows, split_fraction * n)`` rows, and its honest
        DScore, p-value and size are computed on *all* the other rows (``Evidence.n_mined``,
        ``n_honest``); ``mask``/``group_size`` are the group on every row. Default: all rows
        (mined on the whole window; the split test mines ``split_fraction`` of it again).

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
    p, settings, o = setup(
        X, favorable, attributes=attributes, schema=schema, k=k, alpha=alpha, beta=beta, lam=lam,
        method=method, iterations=iterations, lr=lr, device=device, random_state=random_state,
        restarts=restarts, init_scale=init_scale, bias=bias, penalty_start=penalty_start,
        penalty_end=penalty_end, clip_norm=clip_norm, bounds_repair=bounds_repair,
        tree_max_depth=tree_max_depth, tree_prune=tree_prune, significance=significance,
        split_fraction=split_fraction, enum_time_budget_s=enum_time_budget_s,
        enum_max_thresholds=enum_max_thresholds, dtype=dtype, layout=layout, rule_search=rule_search,
        early_stop=early_stop,
    )
    fav = p.fav
    n = p.n
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

    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer))
                                 or max_rows < MIN_SPLIT_ROWS):
        raise MethodError(ERR_PARAM.format(name="max_rows", rule=f"an integer >= {MIN_SPLIT_ROWS} or None",
                                           value=max_rows))
    if max_rows is not None and n > max_rows:
        return _mine_sampled(p, o, settings, int(max_rows), significance, split_fraction, random_state,
                             num_threads, t_start)
    timings: dict[str, float] = {}
    with torch_threads(num_threads, dev.type):
        t0 = time.perf_counter()
        found = mine_encoded(p, o)
        timings["mine_s"] = time.perf_counter() - t0
        sig: dict[str, Any] = {"method": significance}
        honest = p_value = None
        if significance == "split":
            t1 = time.perf_counter()
            honest, p_value, sig = split_significance(p, o, split_fraction, random_state)
            timings["significance_s"] = time.perf_counter() - t1

    if not found.ok:
        return Evidence(
            method=method, status="no_group_within_bounds",
            reason=REASON_NO_GROUP.format(alpha=alpha, beta=beta, n=n), n_rows=n, mask=empty, dscore=None,
            p_fav_in=None, p_fav_out=None, group_size=0, fraction=0.0, within_bounds=False,
            honest_dscore=honest, p_value=p_value, significance=sig, runtime_s=time.perf_counter() - t_start,
            timings=timings, settings=settings, search=found.search,
        )
    ev = build_evidence(found, p, method, settings, honest, p_value, sig, timings, t_start)
    ev.n_mined, ev.n_honest, ev.honest_group_size = n, sig.get("n_test"), sig.get("test_group_size")
    return ev


def _mine_sampled(
    p: Prepared, o: dict[str, Any], settings: dict[str, Any], max_rows: int, significance: str,
    split_fraction: float, random_state: int, num_threads: int | None, t_start: float,
) -> Evidence:
    """:func:`mine` with ``max_rows``: mine a stratified sample once, evaluate on every other row."""
    n = p.n
    m = min(max_rows, int(round(split_fraction * n))) if significance == "split" else max_rows
    a, b = stratified_split(p.fav, m, random_state)
    pa = p.rows(a)  # the held-out rows are read through index b: no copy of the other rows
    sig: dict[str, Any] = {"method": significance, "sample": "stratified by the decision", "n_mine": int(a.size),
                           "n_test": int(b.size) if significance == "split" else 0,
                           "test": "one-sided pooled two-proportion z-test"}
    timings: dict[str, float] = {}
    method = settings["method"]
    with torch_threads(num_threads, o["device"].type):
        t0 = time.perf_counter()
        found = mine_encoded(pa, o) if pa.fav.any() and not pa.fav.all() else None
        timings["mine_s"] = time.perf_counter() - t0
    honest = p_value = None
    if found is None or not found.ok:
        reason = ("the mining sample has no variation in the decision" if found is None
                  else REASON_NO_GROUP.format(alpha=o["alpha"], beta=o["beta"], n=a.size))
        sig["reason"] = reason
        return Evidence(
            method=method, status="no_group_within_bounds", reason=reason, n_rows=n, mask=np.zeros(n, dtype=bool),
            dscore=None, p_fav_in=None, p_fav_out=None, group_size=0, fraction=0.0, within_bounds=False,
            honest_dscore=None, p_value=1.0 if significance == "split" else None, significance=sig,
            runtime_s=time.perf_counter() - t_start, timings=timings, settings=settings,
            search=found.search if found is not None else {}, n_mined=int(a.size), n_honest=sig["n_test"],
        )
    t1 = time.perf_counter()
    full = found.apply(p)  # the reported group on every row of the window (rules are cheap)
    if significance == "split":
        tree = (found.tree_rules.membership(p.raw)[b]
                if found.reported is not None and found.tree_rules is not None else None)
        honest, p_value, sig = held_out_stats(full[b], p.fav[b], tree, sig)
        timings["significance_s"] = time.perf_counter() - t1
    ev = build_evidence(found, pa, method, settings, honest, p_value, sig, timings, t_start)
    size = int(full.sum())
    ev.mask, ev.n_rows, ev.group_size, ev.fraction = full, n, size, size / n
    ev.within_bounds = within_bounds(size, n, o["alpha"], o["beta"])
    ev.n_mined, ev.n_honest = int(a.size), sig["n_test"]
    ev.honest_group_size = sig.get("test_group_size")
    ev.runtime_s = time.perf_counter() - t_start
    return ev


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
    params = {
        name: p.default for name, p in inspect.signature(mine).parameters.items() if p.kind == p.KEYWORD_ONLY
    }
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise MethodError(ERR_PARAM.format(name="options", rule=f"keywords of mine(), not {unknown}", value=options))
    params.update(options)
    params.pop("num_threads", None)
    if params.pop("max_rows", None) is not None:
        raise MethodError(ERR_PARAM.format(name="max_rows", rule="not an option of held_out_test (it tests the split "
                                           "sample of all rows; mine(max_rows=...) mines a sample)",
                                           value=options["max_rows"]))
    params["significance"] = "split"
    p, _, o = setup(X, favorable, **params)
    if p.fav.all() or not p.fav.any():
        reason = REASON_ALL_FAVORABLE if p.fav.all() else REASON_NONE_FAVORABLE
        return {"honest_dscore": 0.0, "p_value": 1.0, "method": "split", "reason": reason}
    with torch_threads(num_threads, o["device"].type):
        honest, p_value, info = split_significance(p, o, params["split_fraction"], params["random_state"])
    result: dict[str, Any] = json_safe({"honest_dscore": honest, "p_value": p_value, **info})
    return result


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
