"""FEU: NSGA-II search for retrained models that trade utility, outcome fairness and explanation fairness.

Paper §III (``papers/gesd-feu.md``) and DESIGN §4.3. Each candidate is the paper's network (MLP 64-32,
ReLU, sigmoid output, Adam, BCE, batch 32) trained with the decision variables

* learning rate ``gamma`` (searched as ``log10(lr)``, i.e. log-uniform; default ``1e-4..1e-1``),
* epochs ``rho`` (integer; default ``5..50``),
* decision threshold ``tau`` (default ``0.2..0.8``),

and scored on the **validation** split with three objectives to minimise: ``1 - AUC`` (the paper's
``-AUC`` shifted into ``[0, 1]`` like the others; Pareto dominance and NSGA-II's normalised crowding
distance are unchanged by the shift), the DP difference at ``tau`` and GESD
(:func:`fairmon.explain.gesd`, SHAP+LIME by default). The reference code's two extra "objective
weight" variables are not copied (a weight of 0 trivially zeroes an objective).

NSGA-II (pymoo): random initial population, SBX(prob 0.9, eta 15), PM(eta 20), duplicate elimination;
stops at the first of ``generations``, ``max_evaluations`` and ``time_budget_s``.

Documented choices of fairmon:

* **Pareto set** = the non-dominated evaluations of the whole search (an archive; NSGA-II may drop a
  non-dominated point from its population when the front outgrows it).
* **Selection** (paper: Chebyshev ``T(x) = max_i w_i |f_i(x) - z*_i|`` with weights AUC 0.4, DP 0.3,
  GESD 0.3 against the ideal point ``z*``): ``z*`` is the per-objective minimum of the validation
  objectives over the Pareto set, and the candidate minimising ``T`` is selected (ties: lowest
  evaluation id). ``FEUSettings.selection_scale`` says how the objectives are put on comparable scales
  (the paper normalises them but does not say how): ``"unit"`` (default) uses them as they are — ``1 -
  AUC``, the DP difference and GESD are all rates on the same ``[0, 1]`` scale, so one point of AUC
  weighs like one point of DP; ``"range"`` divides each by its spread over the Pareto set (min-max).
  Why ``"unit"``: min-max rescaling makes a spread at the noise level of the estimate (GESD spreads of
  0.005-0.05 on 200 validation rows with the light search GESD; DP at a low threshold) count as much as
  a real AUC spread of 0.1, so the selection kept landing on undertrained, near-constant models with a
  validation GESD or DP a hair lower (German, 5 seeds: held-out AUC 0.709 with ``"range"``, see
  ``benchmarks/feu_paper``).
* **Reported metrics** (AUC, F1, DP, EOD, GESD) of every Pareto candidate are on the **test** split,
  which the search never sees. The selected candidate is the trained network itself (no retraining),
  so its saved weights are the ones measured.
* **Common random numbers.** Every GESD evaluation uses the same seed (same sampled rows, same
  perturbations), so candidates are compared on equal terms; network initialisation and batch order
  use a per-evaluation seed derived from ``random_state`` and the evaluation id.
* **Parallelism.** A generation's networks are trained together as one stack of independent MLPs
  (:func:`fairmon.feu.train.train_mlps`: batched matrix products, one Adam step for all; each network
  keeps its own initialisation, shuffles, learning rate and epoch count). ``n_jobs > 1`` then scores
  the candidates (validation metrics and GESD) in worker processes (spawned; one torch thread each);
  results equal ``n_jobs=1`` because every seed is fixed before dispatch. On a 2-core machine the
  default is sequential scoring.
* A candidate whose training diverges (non-finite outputs) gets the worst objectives ``(1, 1, 1)``
  and is recorded with its error; a GESD with fewer than two sufficient groups counts as 1.0.

Example
-------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x1": rng.normal(size=300), "x2": rng.normal(size=300),
...                    "sex": rng.choice(["F", "M"], 300)})
>>> df["y"] = (df.x1 + rng.normal(size=300) > 0).astype(int)
>>> res = search(df, features=["x1", "x2", "sex"], sensitive="sex", label="y",
...              settings=FEUSettings.small(population=4, generations=1,
...                                         gesd={"explainer": "gradient", "sample_size": 30}))
>>> len(res.pareto) >= 1 and res.selected in res.pareto
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairmon.errors import ConfigError, DatasetError, InsufficientDataError, MethodError
from fairmon.feu.metrics import outcome_metrics
from fairmon.feu.settings import FEUSettings
from fairmon.schema import FeatureSchema

if TYPE_CHECKING:
    from fairmon.registry.model import Model
    from fairmon.registry.registry import Registry, SnapshotInfo

__all__ = [
    "search",
    "FEUResult",
    "Candidate",
    "chebyshev_select",
    "non_dominated",
    "ERR_COLUMNS",
    "ERR_LABEL",
    "ERR_FAVORABLE",
    "ERR_TOO_FEW",
]

ERR_COLUMNS = "FEU data is missing columns {columns}; available: {available}"
ERR_LABEL = "FEU needs a label column (pass label=... or a Dataset with .label)"
ERR_FAVORABLE = "label column {label!r} has values {values}; pass favorable=<the favorable label value>"
ERR_TOO_FEW = "FEU needs both label classes in every split; split {split!r} has {counts}"

WORST = (1.0, 1.0, 1.0)
OBJECTIVES = ("1-auc", "dp", "gesd")


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class Candidate:
    """One evaluated configuration: hyperparameters, validation objectives and (Pareto) test metrics."""

    id: int
    lr: float
    epochs: int
    threshold: float
    seed: int
    objectives: tuple[float, float, float]  #: (1 - AUC, DP, GESD) on validation, minimised
    validation: dict[str, float]
    test: dict[str, float] = field(default_factory=dict)
    chebyshev: float | None = None
    generation: int = 0
    error: str | None = None

    @property
    def hyperparameters(self) -> dict[str, float | int]:
        return {"lr": self.lr, "epochs": self.epochs, "threshold": self.threshold}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "generation": self.generation,
            "hyperparameters": self.hyperparameters,
            "seed": self.seed,
            "objectives": dict(zip(OBJECTIVES, self.objectives)),
            "validation": _clean(self.validation),
            "test": _clean(self.test),
            "chebyshev": self.chebyshev,
            "error": self.error,
        }


@dataclass
class FEUResult:
    """Pareto set, selected candidate (saved as a registry ``candidate``) and search bookkeeping."""

    pareto: list[Candidate]
    selected: Candidate
    evaluations: list[Candidate]
    model: Model
    snapshot: SnapshotInfo | None
    settings: FEUSettings
    random_state: int
    generations_run: int
    stopped_by: str
    elapsed_s: float
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "feu",
            "selected": self.selected.to_dict(),
            "pareto": [c.to_dict() for c in self.pareto],
            "n_evaluations": len(self.evaluations),
            "generations_run": self.generations_run,
            "stopped_by": self.stopped_by,
            "elapsed_s": self.elapsed_s,
            "random_state": self.random_state,
            "settings": self.settings.to_dict(),
            "snapshot": None if self.snapshot is None else self.snapshot.to_dict(),
            "data": self.data,
        }


# ---------------------------------------------------------------------- selection helpers
def non_dominated(F: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``F`` (minimised objectives) that no other row dominates.

    Example
    -------
    >>> non_dominated(np.array([[0, 1], [1, 0], [1, 1]])).tolist()
    [0, 1]
    """
    F = np.asarray(F, dtype=float)
    keep = []
    for i in range(len(F)):
        dominated = np.any(np.all(F <= F[i], axis=1) & np.any(F < F[i], axis=1))
        if not dominated:
            keep.append(i)
    return np.asarray(keep, dtype=int)


def chebyshev_select(
    F: np.ndarray, weights: Sequence[float], *, scale: Literal["unit", "range"] = "unit"
) -> tuple[int, np.ndarray]:
    """Index minimising the Chebyshev score ``T = max_i w_i * (f_i - z*_i) / s_i`` and all scores.

    ``z*`` is the ideal point (per-objective minimum over the rows of ``F``, objectives minimised).
    ``scale="unit"`` keeps the objectives on their own scale (``s_i = 1``; right for objectives that
    share one scale, such as FEU's ``1 - AUC``, DP and GESD in ``[0, 1]``); ``scale="range"`` divides
    by each objective's spread over the rows (min-max normalisation; a constant objective gets
    ``s_i = 1``). Ties go to the lowest index.

    Example
    -------
    >>> F = np.array([[0.20, 0.10, 0.010], [0.25, 0.02, 0.005], [0.40, 0.00, 0.000]])
    >>> chebyshev_select(F, (0.4, 0.3, 0.3))[0], chebyshev_select(F, (0.4, 0.3, 0.3), scale="range")[0]
    (1, 1)
    """
    F = np.asarray(F, dtype=float)
    if scale not in ("unit", "range"):
        raise ConfigError(f"chebyshev_select scale must be 'unit' or 'range', got {scale!r}")
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0) if scale == "range" else np.ones_like(lo)
    T = (np.asarray(weights, dtype=float)[None, :] * (F - lo) / span).max(axis=1)
    return int(np.argmin(T)), T


# ---------------------------------------------------------------------- data preparation
@dataclass
class _Prepared:
    schema: FeatureSchema
    Z: dict[str, np.ndarray]
    y: dict[str, np.ndarray]
    s: dict[str, np.ndarray]
    summary: dict[str, Any]


def _prepare(
    data: Any,
    features: Sequence[str] | None,
    sensitive: str | Sequence[str] | None,
    label: str | None,
    favorable: Any,
    split: tuple[float, float, float],
    random_state: int,
) -> _Prepared:
    from sklearn.model_selection import train_test_split

    if isinstance(data, pd.DataFrame):
        frame = data
    elif hasattr(data, "frame"):
        frame = data.frame
        features = features if features is not None else list(getattr(data, "features", []) or []) or None
        label = label if label is not None else getattr(data, "label", None)
        if sensitive is None:
            sensitive = list(getattr(data, "sensitive", []) or []) or None
        if favorable is None:
            fav = getattr(data, "favorable", None)
            favorable = fav if isinstance(fav, int | float | str | bool | np.generic) else None
    else:
        raise DatasetError(f"FEU data must be a DataFrame or a Dataset with .frame, got {type(data).__name__}")
    if label is None:
        raise DatasetError(ERR_LABEL)
    if sensitive is None:
        raise DatasetError("FEU needs the sensitive column(s) (pass sensitive=...)")
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    feats = list(features) if features is not None else [c for c in frame.columns if c != label]
    missing = [c for c in [*feats, *sens, label] if c not in frame.columns]
    if missing:
        raise DatasetError(ERR_COLUMNS.format(columns=missing, available=list(frame.columns)))

    y_raw = frame[label]
    values = sorted(pd.unique(y_raw.dropna()).tolist(), key=str)
    if favorable is None:
        if set(values) <= {0, 1} or set(values) <= {-1, 1} or set(values) <= {False, True}:
            favorable = 1
        else:
            raise DatasetError(ERR_FAVORABLE.format(label=label, values=values[:10]))
    y = (y_raw == favorable).to_numpy().astype(int)
    s = frame[sens[0]].astype(str).to_numpy() if len(sens) == 1 else (
        frame[sens].astype(str).agg("|".join, axis=1).to_numpy()
    )
    idx = np.arange(len(frame))
    tr_f, va_f, te_f = split
    rest, test = train_test_split(idx, test_size=te_f, random_state=random_state, stratify=y)
    train, val = train_test_split(
        rest, test_size=va_f / (tr_f + va_f), random_state=random_state, stratify=y[rest]
    )
    parts = {"train": np.sort(train), "validation": np.sort(val), "test": np.sort(test)}
    for name, rows in parts.items():
        counts = np.bincount(y[rows], minlength=2).tolist()
        if min(counts) == 0:
            raise DatasetError(ERR_TOO_FEW.format(split=name, counts=counts))
    X = frame[feats]
    schema = FeatureSchema.fit(X.iloc[parts["train"]].reset_index(drop=True))  # scaler fit on train only
    Z = {k: schema.transform(X.iloc[v].reset_index(drop=True)) for k, v in parts.items()}
    summary = {
        "rows": int(len(frame)),
        "features": feats,
        "sensitive": sens,
        "label": label,
        "favorable": favorable if not isinstance(favorable, np.generic) else favorable.item(),
        "split_rows": {k: int(len(v)) for k, v in parts.items()},
        "encoded_width": int(schema.n_encoded),
    }
    return _Prepared(schema, Z, {k: y[v] for k, v in parts.items()}, {k: s[v] for k, v in parts.items()}, summary)


# ---------------------------------------------------------------------- evaluation
class _Evaluator:
    """Trains and scores one configuration; picklable so worker processes can hold a copy."""

    def __init__(self, prep: _Prepared, settings: FEUSettings, gesd_seed: int, device: str | None) -> None:
        self.prep = prep
        self.settings = settings
        self.gesd_seed = gesd_seed
        self.device = device

    def decode(self, x: np.ndarray) -> tuple[float, int, float]:
        lo, hi = self.settings.epoch_bounds
        epochs = int(min(max(round(float(x[1])), lo), hi))
        return float(10.0 ** float(x[0])), epochs, float(x[2])

    def model(self, net: Any, threshold: float) -> Model:
        from fairmon.registry.model import Model

        return Model(net, self.prep.schema, framework="torch", threshold=threshold, device=self.device)

    def gesd_value(self, net: Any, part: str) -> tuple[float, float]:
        from fairmon.explain.gesd import gesd

        try:
            res = gesd(
                self.model(net, 0.5),
                self.prep.Z[part],
                self.prep.s[part],
                X_train=self.prep.Z["train"],
                random_state=self.gesd_seed,
                device=self.device,
                **self.settings.gesd,
            )
        except InsufficientDataError:  # the sampled rows hold one group only: GESD undefined
            return float("nan"), float("nan")
        return res.value, res.p_value

    def train(self, configs: list[tuple[float, int, int]]) -> list[Any]:
        """Train a generation's networks together (:func:`fairmon.feu.train.train_mlps`)."""
        from fairmon.feu.train import train_mlps

        st = self.settings
        return train_mlps(
            self.prep.Z["train"], self.prep.y["train"], configs, batch_size=st.batch_size, hidden=st.hidden,
            device=self.device,
        )

    def score(self, state: dict[str, Any], lr: float, epochs: int, thr: float, seed: int) -> dict[str, Any]:
        """Validation metrics and objectives of one trained network."""
        from fairmon.feu.train import predict_proba

        try:
            net = self.rebuild(state)
            proba = predict_proba(net, self.prep.Z["validation"])
            if not np.all(np.isfinite(proba)):
                raise FloatingPointError("non-finite predictions after training")
            val = outcome_metrics(self.prep.y["validation"], proba, self.prep.s["validation"], thr)
            g, p = self.gesd_value(net, "validation")
            val["gesd"] = g
            val["gesd_p_value"] = p
            objectives: tuple[float, ...] = (1.0 - val["auc"], val["dp"], g if math.isfinite(g) else 1.0)
            error = None
        except (FloatingPointError, RuntimeError, ValueError) as exc:
            val, objectives, error = {}, WORST, f"{type(exc).__name__}: {exc}"
        return {"lr": lr, "epochs": epochs, "threshold": thr, "seed": seed, "validation": val,
                "objectives": objectives, "state": state if error is None else None, "error": error}

    def test_metrics(self, state: dict[str, Any], threshold: float) -> dict[str, float]:
        from fairmon.feu.train import predict_proba

        net = self.rebuild(state)
        proba = predict_proba(net, self.prep.Z["test"])
        out = outcome_metrics(self.prep.y["test"], proba, self.prep.s["test"], threshold)
        g, p = self.gesd_value(net, "test")
        out["gesd"] = g
        out["gesd_p_value"] = p
        return out

    def rebuild(self, state: dict[str, Any]) -> Any:
        from fairmon._device import resolve_device
        from fairmon.registry.model import build_mlp

        net = build_mlp(self.prep.schema.n_encoded, self.settings.hidden)
        net.load_state_dict(state)
        return net.to(resolve_device(self.device)).eval()


_WORKER: _Evaluator | None = None


def _worker_init(evaluator: _Evaluator) -> None:
    import torch

    torch.set_num_threads(1)
    global _WORKER
    _WORKER = evaluator


def _worker_score(args: tuple[Any, ...]) -> dict[str, Any]:
    assert _WORKER is not None
    return _WORKER.score(*args)


# ---------------------------------------------------------------------- search
def search(
    data: pd.DataFrame | Any,
    *,
    features: Sequence[str] | None = None,
    sensitive: str | Sequence[str] | None = None,
    label: str | None = None,
    favorable: Any = None,
    settings: FEUSettings | None = None,
    registry: Registry | str | None = None,
    name: str = "feu-candidate",
    registry_metadata: Mapping[str, Any] | None = None,
    random_state: int = 42,
    n_jobs: int = 1,
    device: str | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> FEUResult:
    """Run FEU on labelled data and return the Pareto set and the selected candidate.

    Parameters
    ----------
    data
        A labelled raw DataFrame, or a ``fairmon.datasets`` ``Dataset`` (``.frame``, ``.features``,
        ``.label``, ``.sensitive``, ``.favorable`` supply the defaults of the next arguments).
    features, sensitive, label, favorable
        Column roles. ``features`` default to every column but the label; several ``sensitive``
        columns are combined into intersectional groups; ``favorable`` is the label value that counts
        as class 1 (default 1 for 0/1, -1/1 or boolean labels).
    settings
        :class:`FEUSettings` (reference settings by default; :meth:`FEUSettings.small` for demos/CI;
        :meth:`FEUSettings.from_spec` from a monitor spec's ``retraining`` section).
    registry, name
        Where the selected candidate is saved (status ``candidate``, with its test metrics,
        hyperparameters and feature schema); ``None`` saves nothing. ``registry_metadata`` is merged
        into the saved metrics (the pipeline records the monitor window that proposed it).
    random_state
        Seed of the split, NSGA-II (pymoo), network initialisation, batch order and GESD
        (reference: 42). Same inputs and seed give the same result (generation-limited runs).
    n_jobs
        Worker processes for a generation's evaluations (1 = sequential).
    device
        Torch device for training and GESD (None: CUDA when available, else CPU).
    progress
        Optional ``callback(generation, n_evaluations, elapsed_s)`` after each generation.

    Returns
    -------
    FEUResult
    """
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.core.termination import TerminateIfAny
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.sampling.rnd import FloatRandomSampling
    from pymoo.optimize import minimize
    from pymoo.termination.max_eval import MaximumFunctionCallTermination
    from pymoo.termination.max_gen import MaximumGenerationTermination
    from pymoo.termination.max_time import TimeBasedTermination

    st = settings or FEUSettings()
    if n_jobs < 1:
        raise ConfigError(f"n_jobs must be >= 1, got {n_jobs}")
    t0 = time.perf_counter()
    prep = _prepare(data, features, sensitive, label, favorable, st.split, random_state)
    evaluator = _Evaluator(prep, st, gesd_seed=random_state + 1, device=device)
    archive: list[dict[str, Any]] = []
    state = {"generation": 0}

    pool = None
    if n_jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(
            max_workers=n_jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init, initargs=(evaluator,)
        )

    def evaluate_batch(X: np.ndarray) -> np.ndarray:
        configs: list[tuple[float, int, int]] = []
        thresholds: list[float] = []
        for row in np.asarray(X, dtype=float):
            lr, epochs, thr = evaluator.decode(row)
            configs.append((lr, epochs, random_state * 1_000_003 + len(archive) + len(configs)))
            thresholds.append(thr)
        nets = evaluator.train(configs)
        jobs = [
            ({k: v.detach().cpu().clone() for k, v in net.state_dict().items()}, lr, ep, thr, seed)
            for net, (lr, ep, seed), thr in zip(nets, configs, thresholds)
        ]
        if pool is not None:
            results = list(pool.map(_worker_score, jobs))
        else:
            results = [evaluator.score(*j) for j in jobs]
        for r in results:
            r["generation"] = state["generation"]
            r["id"] = len(archive)
            archive.append(r)
        state["generation"] += 1
        if progress is not None:
            progress(state["generation"], len(archive), time.perf_counter() - t0)
        return np.asarray([r["objectives"] for r in results], dtype=float)

    class _Problem(Problem):
        def __init__(self) -> None:
            lo, hi = st.epoch_bounds
            super().__init__(
                n_var=3,
                n_obj=3,
                xl=np.array([math.log10(st.lr_bounds[0]), lo - 0.499, st.threshold_bounds[0]]),
                xu=np.array([math.log10(st.lr_bounds[1]), hi + 0.499, st.threshold_bounds[1]]),
            )

        def _evaluate(self, x: np.ndarray, out: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            out["F"] = evaluate_batch(x)

    algorithm = NSGA2(
        pop_size=st.population,
        sampling=FloatRandomSampling(),
        crossover=SBX(prob=st.crossover_prob, eta=st.crossover_eta),
        mutation=PM(eta=st.mutation_eta),
        eliminate_duplicates=True,
    )
    limits: list[Any] = [MaximumGenerationTermination(st.generations)]
    if st.max_evaluations is not None:
        limits.append(MaximumFunctionCallTermination(st.max_evaluations))
    if st.time_budget_s is not None:
        limits.append(TimeBasedTermination(st.time_budget_s))
    try:
        minimize(_Problem(), algorithm, TerminateIfAny(*limits), seed=random_state, verbose=False)
    finally:
        if pool is not None:
            pool.shutdown()

    if not archive:
        raise MethodError("FEU evaluated no candidate (time budget too small?)")
    evaluations = [_candidate(r) for r in archive]
    F = np.asarray([c.objectives for c in evaluations])
    valid = [i for i, r in enumerate(archive) if r["state"] is not None]
    if not valid:
        raise MethodError(f"every FEU candidate failed to train; first error: {archive[0]['error']}")
    front = [valid[i] for i in non_dominated(F[valid])]
    sel_pos, T = chebyshev_select(F[front], st.weights, scale=st.selection_scale)
    pareto = []
    for pos, i in enumerate(front):
        r = archive[i]
        test = evaluator.test_metrics(r["state"], r["threshold"])
        pareto.append(_candidate(r, test=test, chebyshev=float(T[pos])))
    selected = pareto[sel_pos]
    r_sel = archive[front[sel_pos]]
    model = evaluator.model(evaluator.rebuild(r_sel["state"]), selected.threshold)

    stopped_by = _stopped_by(st, state["generation"], len(archive), time.perf_counter() - t0)
    snapshot = None
    if registry is not None:
        from fairmon.registry.registry import Registry

        reg = registry if isinstance(registry, Registry) else Registry(str(registry))
        snapshot = reg.register(
            model,
            name=name,
            status="candidate",
            metrics={
                "source": "feu",
                "test": selected.test,
                "validation": selected.validation,
                "hyperparameters": selected.hyperparameters,
                "chebyshev": selected.chebyshev,
                "weights": dict(zip(("auc", "dp", "gesd"), st.weights)),
                "pareto_size": len(pareto),
                "random_state": random_state,
                **dict(registry_metadata or {}),
            },
        )
    return FEUResult(
        pareto=pareto,
        selected=selected,
        evaluations=evaluations,
        model=model,
        snapshot=snapshot,
        settings=st,
        random_state=random_state,
        generations_run=state["generation"],
        stopped_by=stopped_by,
        elapsed_s=round(time.perf_counter() - t0, 3),
        data=prep.summary,
    )


def _candidate(r: dict[str, Any], *, test: dict[str, float] | None = None, chebyshev: float | None = None) -> Candidate:
    return Candidate(
        id=int(r["id"]),
        lr=float(r["lr"]),
        epochs=int(r["epochs"]),
        threshold=float(r["threshold"]),
        seed=int(r["seed"]),
        objectives=tuple(float(v) for v in r["objectives"]),  # type: ignore[arg-type]
        validation=dict(r["validation"]),
        test=dict(test or {}),
        chebyshev=chebyshev,
        generation=int(r["generation"]),
        error=r["error"],
    )


def _clean(d: dict[str, float]) -> dict[str, float | None]:
    """NaN (e.g. GESD with one sampled group) becomes None so the dict is valid JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _stopped_by(st: FEUSettings, generations: int, n_eval: int, elapsed: float) -> str:
    if generations >= st.generations:
        return "generations"
    if st.max_evaluations is not None and n_eval >= st.max_evaluations:
        return "max_evaluations"
    if st.time_budget_s is not None and elapsed >= st.time_budget_s:
        return "time_budget_s"
    return "converged"
