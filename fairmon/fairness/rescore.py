"""Model or data? The fired metric of a window under the current model and under an earlier one.

When a finding fires, the window's rows are scored again with the earlier production model version
and the fired metric is computed under both, with the same definition on the same rows:

* an outcome metric (``dp_difference`` of ``sex``, ``selection_rate`` of ``sex=F``, ...):
  :func:`rescore_outcome` runs :func:`fairmon.fairness.outcome.outcome_metrics` for that metric only
  on each model's favourable indicator (bootstrap intervals at the monitor's confidence);
* RUMIE's DScore (``rumie_honest_dscore``): :func:`rescore_rules` computes
  ``P(fav | rest) - P(fav | group)`` of the *reported rules* on every row of the window under each
  model, with a percentile-bootstrap interval (the honest DScore itself comes from a held-out split
  of a mining run and cannot be recomputed without mining again; the same fixed rules on the same
  rows compare the two models on equal terms).

The verdict (:func:`verdict`), documented once:

* ``data`` — the earlier model's value lies inside the current model's interval: on this window's
  data both models give the same value within noise, so the change follows the data;
* ``model`` — it lies outside, and closer to the baseline (the pre-change level the finding compares
  with; without a baseline, outside is enough): the earlier model would not show the change, so it
  follows the model;
* ``data`` as well when it lies outside but no closer to the baseline (the earlier model would show
  the change as much or more);
* ``undetermined`` — a value or the current interval is undefined.

Examples
--------
>>> verdict(0.19, (0.15, 0.23), 0.05, baseline=0.04)
'model'
>>> verdict(0.19, (0.15, 0.23), 0.18, baseline=0.04)
'data'
>>> r = Rescore(kind="rumie_dscore", metric="rumie_honest_dscore", group="", old_version="v1",
...             new_version="v2", value_old=0.05, value_new=0.19, ci_new=(0.15, 0.23), baseline=0.04,
...             verdict="model", definition="DScore of the reported rules")
>>> Rescore.from_dict(r.to_dict()) == r
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairmon._numbers import finite_float
from fairmon.errors import MethodError
from fairmon.fairness.outcome import DEFAULT_METRICS, outcome_metrics
from fairmon.results import register

__all__ = ["Rescore", "Verdict", "verdict", "rescore_sentence", "describe_series", "rescore_outcome", "rescore_rules", "rules_dscore", "RUMIE_METRICS"]

Verdict = Literal["model", "data", "undetermined"]
#: the RUMIE series a finding can fire on (both are rescored as the DScore of the reported rules)
RUMIE_METRICS = ("rumie_honest_dscore", "rumie_dscore")


@dataclass(frozen=True)
class Rescore:
    """One fired finding's metric under the current (``new``) and the earlier (``old``) model version.

    ``kind``/``metric``/``group`` are the finding's key; ``value_fired`` the value it fired with;
    ``value_new``/``value_old`` the metric recomputed with one definition (``definition``) on the
    window's rows under each model, ``ci_new``/``ci_old`` their intervals.
    """

    kind: str
    metric: str
    group: str
    old_version: str
    new_version: str
    value_old: float | None
    value_new: float | None
    ci_new: tuple[float, float] | None = None
    ci_old: tuple[float, float] | None = None
    value_fired: float | None = None
    baseline: float | None = None
    verdict: str = "undetermined"
    definition: str = ""
    status: str = "ok"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (intervals as lists)."""
        out = asdict(self)
        out["ci_new"] = list(self.ci_new) if self.ci_new is not None else None
        out["ci_old"] = list(self.ci_old) if self.ci_old is not None else None
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rescore:
        """The inverse of :meth:`to_dict`."""
        def ci(v: Any) -> tuple[float, float] | None:
            return (float(v[0]), float(v[1])) if v is not None and len(v) == 2 else None

        return cls(
            kind=str(d["kind"]), metric=str(d["metric"]), group=str(d.get("group") or ""),
            old_version=str(d["old_version"]), new_version=str(d["new_version"]),
            value_old=finite_float(d.get("value_old")), value_new=finite_float(d.get("value_new")),
            ci_new=ci(d.get("ci_new")), ci_old=ci(d.get("ci_old")), value_fired=finite_float(d.get("value_fired")),
            baseline=finite_float(d.get("baseline")), verdict=str(d.get("verdict") or "undetermined"),
            definition=str(d.get("definition") or ""), status=str(d.get("status") or "ok"),
            reason=str(d.get("reason") or ""),
        )


register("rescore", Rescore, Rescore.to_dict, Rescore.from_dict)


def describe_series(metric: str, group: str, *, quote: str = "`") -> str:
    """What a rescored value is, in words.

    >>> describe_series("rumie_honest_dscore", ""), describe_series("dp_difference", "sex")
    ('DScore of the same rules', '`dp_difference` of `sex`')
    """
    if metric in RUMIE_METRICS:
        return "DScore of the same rules"
    return f"{quote}{metric}{quote}" + (f" of {quote}{group}{quote}" if group else "")


def rescore_sentence(
    *, metric: str, group: str, old_version: str, new_version: str, value_old: float | None,
    value_new: float | None, verdict: str, quote: str = "`",
) -> str:
    """The "model or data?" sentence of one rescored finding (plain text).

    >>> rescore_sentence(metric="rumie_honest_dscore", group="", old_version="v1", new_version="v2",
    ...                  value_old=0.05, value_new=0.19, verdict="model")
    "with v1 on this window's data the DScore of the same rules would be 0.05 (v2: 0.19; both in-sample, on all the window's rows): the change follows the model, not the data"
    """
    what = describe_series(metric, group, quote=quote)

    def num(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.2f}"

    # RUMIE's rescoring reads all the window's rows (in-sample), unlike the alert's held-out honest DScore: said
    rows = "; both in-sample, on all the window's rows" if metric in RUMIE_METRICS else ""
    head = (f"with {old_version} on this window's data the {what} would be {num(value_old)} ({new_version}: "
            f"{num(value_new)}{rows})")
    if verdict == "model":
        return f"{head}: the change follows the model, not the data"
    if verdict == "data":
        return f"{head}: the change follows the data, not the model"
    return f"{head}: undetermined (a value or its interval is undefined)"


def verdict(
    value_new: float | None, ci_new: tuple[float, float] | None, value_old: float | None, *, baseline: float | None
) -> Verdict:
    """``model`` / ``data`` / ``undetermined`` by the rule in the module docstring.

    >>> verdict(0.19, None, 0.05, baseline=None)
    'undetermined'
    >>> verdict(0.19, (0.15, 0.23), 0.30, baseline=0.04)   # the old model would be worse: the data
    'data'
    """
    if value_new is None or value_old is None or ci_new is None:
        return "undetermined"
    lo, hi = ci_new
    if lo <= value_old <= hi:
        return "data"
    if baseline is None or abs(value_old - baseline) < abs(value_new - baseline):
        return "model"
    return "data"


def rules_dscore(favorable: np.ndarray, mask: np.ndarray) -> float | None:
    """``P(fav | rest) - P(fav | group)`` over rows with a defined favourable indicator (None: a side is empty).

    >>> rules_dscore(np.array([0, 0, 1, 1.0]), np.array([True, True, False, False]))
    1.0
    """
    ok = ~np.isnan(favorable)
    f, m = favorable[ok], mask[ok]
    if not m.any() or m.all():
        return None
    return float(f[~m].mean() - f[m].mean())


def rescore_rules(
    fav_new: Any, fav_old: Any, mask: Any, *, n_bootstrap: int = 200, confidence: float = 0.95,
    random_state: int | None = 0,
) -> tuple[tuple[float | None, tuple[float, float] | None], tuple[float | None, tuple[float, float] | None]]:
    """DScore of one fixed group under two models: ``((new, ci_new), (old, ci_old))``.

    The bootstrap resamples the window's rows (the same replicate rows for both models) and takes
    the percentile interval of each model's DScore.

    >>> rng = np.random.default_rng(0)
    >>> mask = rng.random(2000) < 0.3
    >>> new = (rng.random(2000) < np.where(mask, 0.3, 0.6)).astype(float)
    >>> old = (rng.random(2000) < 0.6).astype(float)
    >>> (vn, cn), (vo, co) = rescore_rules(new, old, mask)
    >>> round(vn, 1), cn[0] <= vn <= cn[1], verdict(vn, cn, vo, baseline=0.0)
    (0.3, True, 'model')
    """
    new = np.asarray(fav_new, dtype=float).reshape(-1)
    old = np.asarray(fav_old, dtype=float).reshape(-1)
    m = np.asarray(mask, dtype=bool).reshape(-1)
    if not (new.shape == old.shape == m.shape):
        raise MethodError(f"rescore_rules: {new.shape[0]} / {old.shape[0]} predictions for {m.shape[0]} group flags")
    rng = np.random.default_rng(random_state)
    reps = [rng.integers(0, m.size, size=m.size) for _ in range(max(0, int(n_bootstrap)))]
    q = (1.0 - confidence) / 2.0

    def one(f: np.ndarray) -> tuple[float | None, tuple[float, float] | None]:
        v = rules_dscore(f, m)
        if v is None or not reps:
            return v, None
        vals = np.array([x for x in (rules_dscore(f[r], m[r]) for r in reps) if x is not None])
        if vals.size < 2:
            return v, None
        return v, (float(np.quantile(vals, q)), float(np.quantile(vals, 1.0 - q)))

    return one(new), one(old)


def _row_of(result: Any, metric: str, group: str) -> tuple[float | None, tuple[float, float] | None]:
    """The (value, ci) of series ``(metric, group)`` (``attr`` or ``attr=value``) in an OutcomeResult."""
    for r in result.rows:
        key = r.attribute if r.group is None or r.group == "" else f"{r.attribute}={r.group}"
        if r.metric == metric and key == group:
            if r.status != "ok":
                return None, None
            lo, hi = finite_float(r.ci_low), finite_float(r.ci_high)
            return finite_float(r.value), (lo, hi) if lo is not None and hi is not None else None
    return None, None


def rescore_outcome(
    fav_new: Any, fav_old: Any, sensitive: pd.DataFrame, *, metric: str, group: str, y_true: Any = None,
    min_group_size: int = 30, n_bootstrap: int = 200, confidence: float = 0.95, random_state: int | None = 0,
    attributes: Sequence[str] | None = None,
) -> tuple[tuple[float | None, tuple[float, float] | None], tuple[float | None, tuple[float, float] | None]]:
    """One outcome series (``metric`` of ``group``: ``sex`` or ``sex=F``, ``sex&race`` for an
    intersection) under two models: ``((new, ci_new), (old, ci_old))``.

    >>> rng = np.random.default_rng(0)
    >>> sex = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000)})
    >>> new = (rng.random(3000) < np.where(sex["sex"] == "F", 0.3, 0.6)).astype(float)
    >>> old = (rng.random(3000) < 0.6).astype(float)
    >>> (vn, cn), (vo, co) = rescore_outcome(new, old, sex, metric="dp_difference", group="sex")
    >>> round(vn, 1), round(vo, 1) < 0.1
    (0.3, True)
    """
    if metric not in DEFAULT_METRICS:
        raise MethodError(f"rescore_outcome: {metric!r} is not an outcome metric ({list(DEFAULT_METRICS)})")
    attr = group.split("=", 1)[0]
    parts = attr.split("&")
    cols = list(attributes) if attributes is not None else parts
    missing = [c for c in parts if c not in sensitive.columns]
    if missing:
        raise MethodError(f"rescore_outcome: the window has no column(s) {missing} for series {group!r}")
    metrics = (metric,)

    def one(f: Any) -> tuple[float | None, tuple[float, float] | None]:
        res = outcome_metrics(
            np.asarray(f, dtype=float), sensitive_features=sensitive[cols], y_true=y_true, metrics=metrics,
            intersections=[parts] if len(parts) > 1 else False, min_group_size=min_group_size,
            n_bootstrap=n_bootstrap, confidence=confidence, random_state=random_state,
        )
        return _row_of(res, metric, group)

    return one(fav_new), one(fav_old)
