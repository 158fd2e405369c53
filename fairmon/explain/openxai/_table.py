"""``evaluate``: OpenXAI's explanation-quality metrics and their group disparities as a tidy table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairmon.errors import MethodError
from fairmon.explain import _api  # the module, so a patched explain() is seen
from fairmon.explain._common import check_matrix
from fairmon.explain._gradients import GRADIENT_METHODS
from fairmon.explain.openxai import _groundtruth as gt_metrics
from fairmon.explain.openxai._fairness import group_means
from fairmon.explain.openxai._predictive import prediction_gap
from fairmon.explain.openxai.stability import relative_stability

if TYPE_CHECKING:

    from fairmon.registry.model import Model

__all__ = [
    "evaluate",
    "instance_metrics",
    "BASE_METRICS",
    "GROUND_TRUTH_METRICS",
    "PRODUCTION_METRICS",
    "ERR_UNKNOWN_METRIC",
    "ERR_NEEDS_GT",
    "ERR_NEEDS_EXPLAINER",
]

GROUND_TRUTH_METRICS = ("PRA", "RC", "FA", "RA", "SA", "SRA")
PRODUCTION_METRICS = ("PGI", "PGU", "RIS", "RRS", "ROS")
BASE_METRICS = GROUND_TRUTH_METRICS + PRODUCTION_METRICS
ERR_UNKNOWN_METRIC = "unknown OpenXAI metric(s) {names}; expected some of {allowed}"
ERR_NEEDS_GT = "metric(s) {names} need ground-truth importances (ground_truth=...), e.g. LR weights or SynthGauss masks"
ERR_NEEDS_EXPLAINER = (
    "stability metric(s) {names} re-explain perturbed rows: pass explainer= (a method name for "
    "fairmon.explain.explain or a callable (Z, labels) -> attributions)"
)
COLUMNS = ["metric", "group", "value", "n", "n_nan", "note"]


def instance_metrics(
    model: Model,
    Z: np.ndarray,
    explanations: np.ndarray,
    *,
    metrics: Sequence[str] | None = None,
    ground_truth: np.ndarray | None = None,
    k: float | int = 0.25,
    auc: bool = False,
    explainer: str | Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    explainer_params: Mapping[str, Any] | None = None,
    n_samples: int = 100,
    std: float = 0.1,
    stability_std: float = 1e-5,
    stability_draws: int = 1000,
    stability_keep: int = 100,
    random_state: int | None = 0,
    device: str | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Per-row values of each metric (``{name: (n,)}``) and notes (e.g. RRS undefined without a hidden layer)."""

    names = _resolve_metrics(metrics, ground_truth)
    d = model.schema.n_encoded
    Z = check_matrix(Z, width=d)
    E = check_matrix(explanations, name="explanations", width=d)
    if E.shape[0] != Z.shape[0]:
        raise MethodError(f"explanations have {E.shape[0]} rows but Z has {Z.shape[0]}")
    out: dict[str, np.ndarray] = {}
    notes: dict[str, str] = {}
    gt_names = [m for m in names if m in GROUND_TRUTH_METRICS]
    if gt_names:
        if ground_truth is None:
            raise MethodError(ERR_NEEDS_GT.format(names=gt_names))
        pred = model.predict_encoded(Z)
        fns = {"FA": gt_metrics.fa, "RA": gt_metrics.ra, "SA": gt_metrics.sa, "SRA": gt_metrics.sra}
        for m in gt_names:
            if m == "PRA":
                out[m] = gt_metrics.pra(E, ground_truth)
            elif m == "RC":
                out[m] = gt_metrics.rc(E, ground_truth)
            else:
                out[m] = fns[m](E, ground_truth, pred, k=k, auc=auc)
    for m in ("PGI", "PGU"):
        if m in names:
            out[m] = prediction_gap(model, Z, E, invert=m == "PGU", k=k, n_samples=n_samples, std=std,
                                    auc=auc, random_state=random_state, device=device)
    stab = tuple(m for m in ("RIS", "RRS", "ROS") if m in names)
    if stab:
        if explainer is None:
            raise MethodError(ERR_NEEDS_EXPLAINER.format(names=list(stab)))
        # a gradient method by name is explained inside relative_stability, in float64 end to end
        named = isinstance(explainer, str) and explainer in GRADIENT_METHODS and model.differentiable
        fn = explainer if named else _explainer_fn(model, explainer, dict(explainer_params or {}), random_state, device)
        res = relative_stability(model, Z, E, fn, metrics=stab, std=stability_std, n_draws=stability_draws,
                                 n_keep=stability_keep, random_state=random_state, device=device,
                                 explainer_params=explainer_params if named else None)
        out.update(res.values)
        notes.update(res.notes)
    return {m: out[m] for m in names}, notes


def evaluate(
    model: Model,
    Z: np.ndarray,
    explanations: np.ndarray,
    *,
    metrics: Sequence[str] | None = None,
    groups: Mapping[str, Sequence[object] | np.ndarray] | Sequence[object] | np.ndarray | None = None,
    ground_truth: np.ndarray | None = None,
    k: float | int = 0.25,
    auc: bool = False,
    random_state: int | None = 0,
    min_group_size: int = 1,
    **kwargs: Any,
) -> pd.DataFrame:
    """OpenXAI metrics of ``explanations`` of ``model`` on rows ``Z`` as a tidy table.

    Parameters
    ----------
    model : fairmon.registry.Model
    Z : ndarray (n, d)
        Encoded rows that were explained.
    explanations : ndarray (n, d)
        Attributions of each row's *predicted* class (OpenXAI's convention), e.g.
        ``explain(model, Z, method=..., target="predicted")``.
    metrics : sequence of str, optional
        Subset of PRA, RC, FA, RA, SA, SRA, PGI, PGU, RIS, RRS, ROS. Default: PGI, PGU, RIS, RRS,
        ROS (what a production window runs), plus the six ground-truth metrics when
        ``ground_truth`` is given.
    groups : mapping or array, optional
        Protected attribute(s): ``{"sex": labels}`` or one label array (named ``"group"``). Adds
        per-group means and the fairness metric ``<METRIC>_fairness`` = |mean majority − mean
        minority| (range of group means for more than two groups).
    ground_truth : ndarray (d,) or (n, d), optional
        True importances for the ground-truth metrics.
    k : float or int
        Top-k as a fraction of d (rounded up) or a count; ``auc`` integrates over k = 1..k.
    min_group_size : int
        Fewest rows with a value a group needs to take part in ``<METRIC>_fairness`` (default 1:
        OpenXAI's definition). A group below it keeps its own row and is named in the fairness row's
        note; with fewer than two groups left the fairness value is NaN, its note saying why.
    **kwargs
        ``explainer`` (method name or callable, needed by RIS/RRS/ROS), ``explainer_params``,
        ``n_samples`` (100), ``std`` (0.1), ``stability_std`` (1e-5), ``stability_draws`` (1000),
        ``stability_keep`` (100), ``device``.

    Returns
    -------
    DataFrame with columns ``metric, group, value, n, n_nan, note``: one ``group="all"`` row per
    metric (mean over rows with a value; ``n_nan`` rows without one, e.g. no valid stability
    perturbation), ``group="<attr>=<label>"`` rows with group means and
    ``metric="<METRIC>_fairness", group="<attr>"`` rows with the disparity.

    Example
    -------
    >>> import numpy as np, pandas as pd, torch
    >>> from fairmon.schema import FeatureSchema
    >>> from fairmon.registry import Model, build_mlp
    >>> from fairmon.explain import explain
    >>> df = pd.DataFrame({"x": np.linspace(-1, 1, 20), "s": ["a", "b"] * 10})
    >>> schema = FeatureSchema.fit(df); Z = schema.transform(df)
    >>> _ = torch.manual_seed(0)
    >>> model = Model(build_mlp(3, (4,)), schema, framework="torch", device="cpu")
    >>> E = explain(model, Z, method="gradient", device="cpu")
    >>> t = evaluate(model, Z, E, metrics=["PGI", "RIS"], groups={"s": df["s"]}, explainer="gradient",
    ...              device="cpu", stability_draws=50, stability_keep=10)
    >>> sorted(set(t["metric"]))
    ['PGI', 'PGI_fairness', 'RIS', 'RIS_fairness']
    """

    values, notes = instance_metrics(model, Z, explanations, metrics=metrics, ground_truth=ground_truth, k=k,
                                     auc=auc, random_state=random_state, **kwargs)
    n = np.asarray(Z).shape[0]
    group_sets = _group_sets(groups, n)
    rows: list[dict[str, Any]] = []
    for m, v in values.items():
        note = notes.get(m, "")
        ok = v[~np.isnan(v)]
        rows.append({"metric": m, "group": "all", "value": float(ok.mean()) if len(ok) else float("nan"),
                     "n": int(len(v)), "n_nan": int(np.isnan(v).sum()), "note": note})
        for attr, labels in group_sets.items():
            gm = group_means(v, labels, name=attr)
            for lab, mean, cnt, nn in zip(gm.labels, gm.means, gm.n, gm.n_nan):
                rows.append({"metric": m, "group": f"{attr}={lab}", "value": float(mean), "n": int(cnt),
                             "n_nan": int(nn), "note": note})
            small = gm.small(min_group_size) if len(ok) else []  # no value at all: the metric's own note says why
            kept = len(gm.labels) - len(small)
            how = "|majority - minority|" if kept == 2 else "range of group means"
            left = ""
            if small:
                named = ", ".join(f"{lab} ({c})" for lab, c in small)
                left = f"; groups with fewer than {min_group_size} rows left out: {named}"
                if kept < 2:
                    left = f"; undefined: fewer than two groups with at least {min_group_size} rows ({named})"
            rows.append({"metric": f"{m}_fairness", "group": attr, "value": gm.disparity_among(min_group_size),
                         "n": int(gm.n.sum()), "n_nan": int(gm.n_nan.sum()),
                         "note": f"{how}; majority={gm.labels[0]}{left}" + (f"; {note}" if note else "")})
    return pd.DataFrame(rows, columns=COLUMNS)


def _resolve_metrics(metrics: Sequence[str] | None, ground_truth: np.ndarray | None) -> list[str]:
    if metrics is None:
        return list(BASE_METRICS if ground_truth is not None else PRODUCTION_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    names = [str(m).upper() for m in metrics]
    bad = [m for m in names if m not in BASE_METRICS]
    if bad:
        raise MethodError(ERR_UNKNOWN_METRIC.format(names=bad, allowed=list(BASE_METRICS)))
    if not names:
        raise MethodError("metrics is empty")
    return list(dict.fromkeys(names))


def _group_sets(groups: Any, n: int) -> dict[str, np.ndarray]:
    if groups is None:
        return {}
    if isinstance(groups, Mapping):
        items = dict(groups)
    else:
        items = {"group": groups}
    out = {}
    for name, labels in items.items():
        arr = np.asarray(labels, dtype=object).reshape(-1)
        if len(arr) != n:
            raise MethodError(f"protected attribute {name!r} has {len(arr)} labels but there are {n} rows")
        out[str(name)] = arr
    return out


def _explainer_fn(model: Model, explainer: Any, params: dict[str, Any], random_state: int | None,
                  device: str | None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if callable(explainer):
        return explainer  # type: ignore[no-any-return]

    def fn(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
        # every kept perturbation has its row's predicted label, so "predicted" explains `labels`
        return _api.explain(model, X, method=explainer, target="predicted", random_state=random_state,
                            device=device, **params)

    return fn
