"""Why a group is disfavored: the mean attribution per feature inside a group minus outside it.

For one group (RUMIE's discriminated group, or the declared group with the lowest favorable rate),
:func:`attribution_gap` explains ``sample_size`` seeded rows inside the group and as many outside it
with one batched explainer call (KernelSHAP by default, the monitor's background rows), sums the
encoded attributions back to the raw features (:func:`fairmon.explain.to_columns`), and reports per
feature

* ``inside`` / ``outside``: the mean attribution of P(favorable) over the sampled rows of each side;
* ``difference`` = ``inside - outside``, negative when the feature lowers P(favorable) more for the
  group's members than for everyone else;
* a bootstrap interval of the difference (``n_bootstrap`` replicates, each resampling the inside rows
  and the outside rows independently with replacement; the explainer is not re-run, so the interval
  covers the sampling of rows, not the explainer's own Monte-Carlo noise), max-t simultaneous over the
  features (:func:`_simultaneous`; per-feature percentile intervals until session 23).

Features are ranked by ``|difference|``. Attributions are of P(favorable): with a favorable class
0 the attributions of P(class 1) are negated. A side with fewer than ``min_rows`` rows gives a result
with ``status="insufficient"`` and no features (undefined, never zeros).

Examples
--------
>>> g = GroupAttributionGap(group_kind="declared", group="sex=F", status="ok", n_inside=50, n_outside=50,
...     features=(FeatureGap("age", -0.1, 0.02, -0.12, -0.15, -0.09),))
>>> g.top(1)[0].sentence()
'`age` lowers P(favorable) by 0.12 more inside the group'
>>> GroupAttributionGap.from_dict(g.to_dict()) == g
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairmon._numbers import finite_float
from fairmon.errors import MethodError
from fairmon.explain._api import explain, to_columns
from fairmon.fairness._outcome_ci import max_t_critical
from fairmon.results import register

if TYPE_CHECKING:
    from fairmon.registry.model import Model

__all__ = [
    "FeatureGap",
    "GroupAttributionGap",
    "attribution_gap",
    "gap_sentence",
    "worth_a_sentence",
    "MIN_GAP",
    "GroupKind",
    "DEFAULT_SAMPLE_SIZE",
    "DEFAULT_BOOTSTRAP",
    "MIN_ROWS",
    "ERR_MASK",
]

GroupKind = Literal["rumie", "declared"]
DEFAULT_SAMPLE_SIZE = 200
DEFAULT_BOOTSTRAP = 200
#: fewest rows a side needs for a mean attribution (fewer: ``status="insufficient"``)
MIN_ROWS = 10
ERR_MASK = "group mask has {got} entries for {rows} rows"


@dataclass(frozen=True)
class FeatureGap:
    """One feature's mean attribution of P(favorable) inside and outside the group, and their gap."""

    feature: str
    inside: float
    outside: float
    difference: float
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def direction(self) -> Literal["lowers", "raises"]:
        """``lowers``: the feature pushes P(favorable) down more inside the group than outside."""
        return "lowers" if self.difference < 0 else "raises"

    @property
    def significant(self) -> bool:
        """The bootstrap interval excludes 0 (False without an interval)."""
        return self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0)

    def sentence(self, *, digits: int = 2) -> str:
        """``"`age` lowers P(favorable) by 0.12 more inside the group"`` (see :func:`gap_sentence`)."""
        return gap_sentence(self.feature, self.difference, digits=digits)


#: smallest gap of P(favorable) a sentence names: a smaller one, however certain, moves no decision worth a
#: page (the demo's declared group showed "+0.002 [0.00, 0.00]")
MIN_GAP = 0.01


def worth_a_sentence(f: Mapping[str, object]) -> bool:
    """Whether a stored feature gap (``difference``, ``ci_low``, ``ci_high``) is worth a sentence: at least
    :data:`MIN_GAP` and its interval excludes 0 (or it has none to say otherwise). The alert's "why
    disfavored" line and the report's sentences both name only these.

    >>> worth_a_sentence({"difference": -0.02, "ci_low": -0.05, "ci_high": 0.012})
    False
    >>> worth_a_sentence({"difference": -0.04, "ci_low": -0.07, "ci_high": -0.01})
    True
    """
    size = finite_float(f.get("difference"))
    lo, hi = finite_float(f.get("ci_low")), finite_float(f.get("ci_high"))
    return size is not None and abs(size) >= MIN_GAP and (lo is None or hi is None or not lo <= 0 <= hi)


def gap_sentence(feature: str, difference: float, *, digits: int = 2, quote: str = "`") -> str:
    """One feature's attribution gap in words (plain text; ``quote`` around the feature name).

    >>> gap_sentence("account_years", 0.081)
    '`account_years` raises P(favorable) by 0.08 more inside the group'
    >>> gap_sentence("age", -0.0043, quote="")
    'age lowers P(favorable) by 0.004 more inside the group'
    """
    direction = "lowers" if difference < 0 else "raises"
    size = abs(difference)
    places = digits if size >= 10.0 ** -digits or size == 0 else digits + 1  # 0.004, not 0.00
    return f"{quote}{feature}{quote} {direction} P(favorable) by {size:.{places}f} more inside the group"


@dataclass(frozen=True)
class GroupAttributionGap:
    """The attribution gap of one group: features ranked by ``|difference|`` (largest first).

    ``group_kind`` is ``rumie`` (the window's discriminated group, ``group`` its rules) or ``declared``
    (the most disadvantaged declared group, ``group`` like ``sex=Female``). ``n_inside``/``n_outside``
    are the explained rows of each side, ``population_inside``/``population_outside`` the window's.
    """

    group_kind: str
    group: str
    status: str = "ok"
    reason: str = ""
    n_inside: int = 0
    n_outside: int = 0
    population_inside: int = 0
    population_outside: int = 0
    explainer: str = "kernelshap"
    n_bootstrap: int = DEFAULT_BOOTSTRAP
    confidence: float = 0.95
    favorable_rate_inside: float | None = None
    favorable_rate_outside: float | None = None
    features: tuple[FeatureGap, ...] = field(default_factory=tuple)

    def top(self, k: int = 3) -> tuple[FeatureGap, ...]:
        """The ``k`` features with the largest ``|difference|``."""
        return self.features[: max(0, int(k))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (features as a list of dicts)."""
        out = asdict(self)
        out["features"] = [asdict(f) for f in self.features]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GroupAttributionGap:
        """The inverse of :meth:`to_dict`."""
        feats = tuple(
            FeatureGap(str(f["feature"]), float(f["inside"]), float(f["outside"]), float(f["difference"]),
                       finite_float(f.get("ci_low")), finite_float(f.get("ci_high")))
            for f in d.get("features") or ()
        )
        kw = {k: d[k] for k in ("status", "reason", "n_inside", "n_outside", "population_inside",
                                "population_outside", "explainer", "n_bootstrap", "confidence") if k in d}
        return cls(group_kind=str(d["group_kind"]), group=str(d["group"]), features=feats,
                   favorable_rate_inside=finite_float(d.get("favorable_rate_inside")),
                   favorable_rate_outside=finite_float(d.get("favorable_rate_outside")), **kw)


register("attribution_gap", GroupAttributionGap, GroupAttributionGap.to_dict, GroupAttributionGap.from_dict)


def _rate(favorable: np.ndarray | None, mask: np.ndarray) -> float | None:
    if favorable is None:
        return None
    v = favorable[mask]
    v = v[~np.isnan(v)]
    return float(v.mean()) if v.size else None


def attribution_gap(
    model: Model,
    X: Any,
    inside: Any,
    *,
    background: Any,
    group_kind: GroupKind,
    group: str,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    explainer: str = "kernelshap",
    explainer_params: Mapping[str, Any] | None = None,
    favorable_class: int = 1,
    favorable: Any = None,
    min_rows: int = MIN_ROWS,
    random_state: int | None = 0,
    device: str | None = None,
) -> GroupAttributionGap:
    """Mean attribution per feature inside ``inside`` minus outside it, with a bootstrap interval.

    Parameters
    ----------
    model : fairmon.registry.Model
        The scored model (its schema encodes ``X``).
    X : DataFrame
        The window's rows (the model's feature columns).
    inside : array-like of bool (n,)
        Group membership of each row.
    background : DataFrame
        Reference rows for the explainer's background (the monitor's ``background_size`` rows).
    group_kind, group : str
        What the group is (``rumie`` / ``declared``) and its label (rules or ``attribute=value``).
    sample_size : int
        Rows explained per side (all of a smaller side); the cost is ``2 * sample_size`` explanations.
    n_bootstrap : int
        Percentile-bootstrap replicates of the difference (0: no interval).
    confidence : float
        Coverage of the interval.
    explainer : str
        A :func:`fairmon.explain.explain` method; ``explainer_params`` its options (``n_samples``).
    favorable_class : {0, 1}
        The model class that is favorable (attributions of P(favorable)).
    favorable : array-like (n,), optional
        The rows' favorable indicator, for the reported favorable rates of the two sides.
    random_state : int
        Seeds the samples, the explainer and the bootstrap.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairmon.registry import Model
    >>> from fairmon.schema import FeatureSchema
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    >>> X.loc[:199, "a"] -= 2.0   # the group's rows have low `a`; `a` drives the decision
    >>> y = (X["a"] + 0.1 * rng.normal(size=400) > 0).astype(int)
    >>> schema = FeatureSchema.fit(X)
    >>> model = Model(LogisticRegression().fit(schema.transform(X), y), schema, framework="sklearn")
    >>> inside = np.arange(400) < 200
    >>> res = attribution_gap(model, X, inside, background=X.sample(30, random_state=0), group_kind="declared",
    ...                       group="g=1", sample_size=60, n_bootstrap=100, device="cpu")
    >>> res.features[0].feature, res.features[0].direction, res.features[0].significant
    ('a', 'lowers', True)
    """
    if favorable_class not in (0, 1):
        raise MethodError(f"favorable_class must be 0 or 1, got {favorable_class!r}")
    feats = list(model.schema.names)
    frame = X[feats].reset_index(drop=True)
    mask = np.asarray(inside, dtype=bool).reshape(-1)
    if mask.shape[0] != len(frame):
        raise MethodError(ERR_MASK.format(got=mask.shape[0], rows=len(frame)))
    fav = None if favorable is None else np.asarray(favorable, dtype=float).reshape(-1)
    base = GroupAttributionGap(
        group_kind=group_kind, group=group, population_inside=int(mask.sum()),
        population_outside=int((~mask).sum()), explainer=explainer, n_bootstrap=int(n_bootstrap),
        confidence=float(confidence), favorable_rate_inside=_rate(fav, mask), favorable_rate_outside=_rate(fav, ~mask),
    )
    if base.population_inside < min_rows or base.population_outside < min_rows:
        reason = (f"insufficient: {base.population_inside} rows inside and {base.population_outside} outside "
                  f"the group; a mean attribution needs {min_rows} on each side")
        return GroupAttributionGap(**{**_fields(base), "status": "insufficient", "reason": reason})
    rng = np.random.default_rng(random_state)
    idx_in = np.sort(rng.choice(np.flatnonzero(mask), min(sample_size, base.population_inside), replace=False))
    idx_out = np.sort(rng.choice(np.flatnonzero(~mask), min(sample_size, base.population_outside), replace=False))
    rows = frame.iloc[np.concatenate([idx_in, idx_out])]
    Z = model.schema.transform(rows)
    bg = model.schema.transform(background[feats])
    A = explain(model, Z, method=explainer, target="positive", background=bg, random_state=random_state,  # type: ignore[arg-type]
                device=device, **dict(explainer_params or {}))
    C = to_columns(A, model.schema) * (1.0 if favorable_class == 1 else -1.0)
    a_in, a_out = C[: len(idx_in)], C[len(idx_in) :]
    diff = a_in.mean(axis=0) - a_out.mean(axis=0)
    lo = hi = np.full(diff.shape, np.nan)
    if n_bootstrap > 0:
        b_in = rng.integers(0, len(a_in), size=(int(n_bootstrap), len(a_in)))
        b_out = rng.integers(0, len(a_out), size=(int(n_bootstrap), len(a_out)))
        reps = a_in[b_in].mean(axis=1) - a_out[b_out].mean(axis=1)  # (B, p)
        lo, hi = _simultaneous(diff, reps, confidence)
    order = np.argsort(-np.abs(diff), kind="stable")
    gaps = tuple(
        FeatureGap(feats[j], float(a_in[:, j].mean()), float(a_out[:, j].mean()), float(diff[j]),
                   finite_float(lo[j]), finite_float(hi[j]))
        for j in order
    )
    return GroupAttributionGap(**{**_fields(base), "n_inside": len(idx_in), "n_outside": len(idx_out), "features": gaps})


def _simultaneous(diff: np.ndarray, reps: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Max-t bootstrap intervals of every feature's gap, holding for all features at once at ``confidence``.

    Why not one percentile interval per feature: the alert shows the features with the largest gaps whose
    interval excludes 0, i.e. it picks among ``p`` intervals; with a group drawn independently of every
    feature, per-feature 95% intervals put at least one "why disfavored" line in 10 of 15 alerts (10
    features; a statistician's review, session 23). ``c`` is the ``confidence`` quantile of
    ``max_j |gap*_j - gap_j| / sd_j`` over the replicates (``sd_j`` the bootstrap standard deviation),
    never below the pointwise normal quantile; a feature whose replicates do not move (a constant
    attribution) gets the point itself.
    """
    sd = reps.std(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(sd > 0, np.abs(reps - diff) / np.where(sd > 0, sd, 1.0), 0.0)
    c = max_t_critical(t.max(axis=1), confidence)
    return diff - c * sd, diff + c * sd


def _fields(g: GroupAttributionGap) -> dict[str, Any]:
    return {k: getattr(g, k) for k in g.__dataclass_fields__}
