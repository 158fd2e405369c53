"""FEU: NSGA-II search for retrained models that trade utility, outcome fairness and explanation fairness.

Paper §III (``papers/gesd-feu.md``) and DESIGN §4.3. Each candidate is the paper's network (MLP 64-32,
ReLU, sigmoid output, Adam, BCE, batch 32) trained with the decision variables

* learning rate ``gamma`` (searched as ``log10(lr)``, i.e. log-uniform; default ``1e-4..1e-1``),
* epochs ``rho`` (integer; default ``5..50``),
* decision threshold ``tau`` (default ``0.2..0.8``),
* fairmon's: the DP-penalty weight of the training loss (default ``0..30``; ``None`` in paper mode)
  and, opt-in, the parity shift of group thresholds (below),

and scored on the **validation** split with three objectives to minimise: ``1 - utility``
(``FEUSettings.utility``: balanced accuracy at ``tau`` by default; the paper's threshold-free AUC in
paper mode, its ``-AUC`` shifted into ``[0, 1]`` like the others — Pareto dominance and NSGA-II's
normalised crowding distance are unchanged by the shift), the DP difference at ``tau`` and GESD
(:func:`fairmon.explain.gesd`, SHAP+LIME by default). The default mode adds the positive-rate band and
the utility floor around production as pymoo constraints (:mod:`fairmon.feu.settings`). The reference
code's two extra "objective weight" variables are not copied (a weight of 0 trivially zeroes an objective).

NSGA-II (pymoo): random initial population, SBX(prob 0.9, eta 15), PM(eta 20), duplicate elimination;
stops at the first of ``generations``, ``max_evaluations`` and ``time_budget_s`` (which covers the whole
step: the baselines run before the search, and the search leaves time for the out-of-fold refits and
its front's test metrics: :mod:`fairmon.feu._budget`).

Documented choices of fairmon:

* **Pareto set** = the non-dominated evaluations of the whole search (an archive; NSGA-II may drop a
  non-dominated point from its population when the front outgrows it).
* **Recommendation in the default mode**: the rule of :mod:`fairmon.feu._recommend` — among the
  feasible candidates whose DP gain over production exceeds its bootstrap noise, the lowest validation
  DP (ties within noise broken by GESD beyond its floor, then utility); the Chebyshev scores below
  are still recorded for those candidates, for comparison. Paper mode uses the Chebyshev choice.
  With fewer than ``FEUSettings.cv_below_rows`` validation rows the rule reads out-of-fold decisions
  of the candidates' recipes refit on folds of train ∪ validation (:mod:`fairmon.feu._crossval`).
* **Selection in paper mode** (paper: Chebyshev ``T(x) = max_i w_i |f_i(x) - z*_i|`` with weights AUC 0.4, DP 0.3,
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
* **Reported metrics** (AUC, balanced accuracy, F1, positive rate, DP, EOD, GESD) of every Pareto candidate are on the **test** split,
  which the search never sees. The deployed model is the searched network, or with the cross-validated
  gate its recipe's fold ensemble (``cv_deploy``, :mod:`fairmon.feu._ensemble`); its saved weights are the ones measured.
* **Common random numbers.** Every GESD evaluation uses the same seed (same sampled rows, same
  perturbations), so candidates are compared on equal terms; network initialisation and batch order
  use a per-evaluation seed derived from ``random_state`` and the evaluation id.
* **Parallelism.** A generation's networks are trained together as one stack of independent MLPs
  (:func:`fairmon.feu._train.train_mlps`: batched matrix products, one Adam step for all; each network
  keeps its own initialisation, shuffles, learning rate and epoch count). ``n_jobs > 1`` then scores
  the candidates (validation metrics and GESD) in worker processes (spawned; one torch thread each);
  results equal ``n_jobs=1`` because every seed is fixed before dispatch. On a 2-core machine the
  default is sequential scoring.
* **Group thresholds (opt-in).** ``FEUSettings.group_thresholds`` adds the parity shift ``s`` as the
  last decision variable: per protected group the threshold moves from ``tau`` towards the score at
  which the group's training positive rate equals the overall one. The candidate then uses the
  protected attribute at decision time (disparate treatment; unlawful in some domains), so it is off
  by default; :mod:`fairmon.feu._group_thresholds` has the definition, sources and its GESD.
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
>>> len(res.pareto) >= 1 and (res.selected in res.pareto or res.recommendation.startswith("no candidate"))
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from fairmon.errors import ConfigError, MethodError
from fairmon.feu._baselines import _group_decoder, baseline_metrics
from fairmon.feu._budget import StepBudget, TrainingClock, reserve_termination, stopped_by_limit
from fairmon.feu._choose import _Anchor, _deployed, _production, _recommend
from fairmon.feu._crossval import use_cv
from fairmon.feu._data import _prepare
from fairmon.feu._evaluate import _Evaluator, _worker_init, _worker_score
from fairmon.feu._group_thresholds import ERR_NOT_A_FEATURE, MIN_GROUP_ROWS, check_explainer
from fairmon.feu._mitigator_constraints import compare_with_mitigators
from fairmon.feu._recommend import RULE
from fairmon.feu._result import Candidate, FEUResult, candidate_of, front_feasible, reported_front
from fairmon.feu._versus_mitigator import settle_against_mitigator
from fairmon.feu.settings import FEUSettings
from fairmon.registry.model import Model
from fairmon.registry.registry import Registry

__all__ = ["search"]  # its result types and error texts live in fairmon.feu._result and fairmon.feu._data


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
    production: Model | None = None,
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
    production
        The production model (a :class:`fairmon.registry.Model` over the raw columns; its class 1 is
        the favourable label). It anchors the constraints and is the first baseline. Without one, the
        paper's network at reference hyperparameters (lr 1e-3, 20 epochs, threshold 0.5) plays it.

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

    st = settings or FEUSettings()
    if n_jobs < 1:
        raise ConfigError(f"n_jobs must be >= 1, got {n_jobs}")
    t0 = time.perf_counter()
    prep = _prepare(data, features, sensitive, label, favorable, st.split, random_state)
    if st.group_thresholds:
        if _group_decoder(prep) is None:
            raise ConfigError(ERR_NOT_A_FEATURE.format(
                columns=[c for c in prep.summary["sensitive"] if c not in prep.schema.names]))
        bad = check_explainer(st.gesd.get("explainer", "shap+lime"))
        if bad is not None:
            raise ConfigError(bad)
    evaluator = _Evaluator(prep, st, gesd_seed=random_state + 1, device=device)
    anchor = _production(evaluator, production, random_state)
    evaluator.anchor = {"selection_rate": anchor.validation["selection_rate"], "utility": anchor.validation[st.utility]}
    # the baselines do not depend on the search: first, so that time_budget_s counts them (fairmon.feu._budget)
    t_baselines = time.perf_counter()
    baselines, note = _baselines(evaluator, anchor, random_state)
    timing: dict[str, Any] = {"baselines_s": round(time.perf_counter() - t_baselines, 3)}
    archive: list[dict[str, Any]] = []
    state = {"generation": 0}
    # time_budget_s covers the search, the out-of-fold refits and the tail after them (fairmon.feu._budget)
    pooled = len(prep.y["train"]) + len(prep.y["validation"])
    cv = not st.paper_mode and use_cv(len(prep.y["validation"]), st.cv_below_rows)
    ensemble = cv and st.cv_deploy == "ensemble"  # deployed: two more GESDs, and its nested check (_nested)
    budget = StepBudget(TrainingClock(st.batch_size), t0, st.time_budget_s, cv=cv,
                        fit_rows=pooled - pooled // st.cv_folds, folds=st.cv_folds,
                        stand_in_epochs=None if anchor.recipe is None else anchor.recipe.epochs,
                        deploy_scorings=2 if ensemble else 0,
                        nested_networks=st.cv_folds * (st.cv_folds - 1) if ensemble else 0,
                        nested_rows=pooled - 2 * (pooled // st.cv_folds))

    pool = None
    if n_jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(
            max_workers=n_jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init, initargs=(evaluator,)
        )

    def evaluate_batch(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        configs: list[tuple[float, int, int]] = []
        thresholds: list[float] = []
        weights: list[float] = []
        shifts: list[float | None] = []
        for row in np.asarray(X, dtype=float):
            lr, epochs, thr, weight = evaluator.decode(row)
            configs.append((lr, epochs, random_state * 1_000_003 + len(archive) + len(configs)))
            thresholds.append(thr)
            weights.append(weight)
            shifts.append(evaluator.shift(row))
        t_train = time.perf_counter()
        nets = evaluator.train(configs, weights)
        budget.clock.record(seconds=time.perf_counter() - t_train, networks=len(configs),
                            epochs=[c[1] for c in configs], rows=len(prep.y["train"]))
        jobs = [
            ({k: v.detach().cpu().clone() for k, v in net.state_dict().items()}, lr, ep, thr, seed, w, sh)
            for net, (lr, ep, seed), thr, w, sh in zip(nets, configs, thresholds, weights, shifts)
        ]
        if pool is not None:
            results = list(pool.map(_worker_score, jobs))
        else:
            results = [evaluator.score(*j) for j in jobs]
        budget.record_scoring([r.pop("score_s") for r in results])
        for r in results:
            r["generation"] = state["generation"]
            r["id"] = len(archive)
            archive.append(r)
        state["generation"] += 1
        if progress is not None:
            progress(state["generation"], len(archive), time.perf_counter() - t0)
        return np.asarray([r["objectives"] for r in results], dtype=float), np.asarray(
            [r["constraints"] for r in results], dtype=float
        ).reshape(len(results), evaluator.n_constraints)

    class _Problem(Problem):  # type: ignore[misc]  # pymoo ships no type hints
        def __init__(self) -> None:
            lo, hi = st.epoch_bounds
            xl = [math.log10(st.lr_bounds[0]), lo - 0.499, st.threshold_bounds[0]]
            xu = [math.log10(st.lr_bounds[1]), hi + 0.499, st.threshold_bounds[1]]
            if st.fairness_weight_bounds is not None:  # the fair-training knob
                xl.append(st.fairness_weight_bounds[0])
                xu.append(st.fairness_weight_bounds[1])
            if evaluator.shift_index is not None:  # the parity shift of group thresholds (opt-in)
                assert evaluator.shift_index == len(xl)
                xl.append(0.0)
                xu.append(1.0)
            super().__init__(n_var=len(xl), n_obj=3, n_ieq_constr=evaluator.n_constraints, xl=np.array(xl),
                             xu=np.array(xu))

        def _evaluate(self, x: np.ndarray, out: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            out["F"], G = evaluate_batch(x)
            if evaluator.n_constraints:
                out["G"] = G

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
    time_limit = None
    if st.time_budget_s is not None:  # leaves one generation's, the refits' and the tail's time (fairmon.feu._budget)
        time_limit = reserve_termination(st.time_budget_s, t0, lambda: budget.reserve_s(archive))
        limits.append(time_limit)
    try:
        # not copied: the time limit is read back below (stopped_by)
        minimize(_Problem(), algorithm, TerminateIfAny(*limits), seed=random_state, verbose=False, copy_termination=False)
    finally:
        if pool is not None:
            pool.shutdown()
    stopped_by = stopped_by_limit(st, state["generation"], len(archive),
                                  time_limit is not None and time_limit.has_terminated())

    if not archive:
        raise MethodError("FEU evaluated no candidate (time budget too small?)")
    evaluations = [candidate_of(r) for r in archive]
    F = np.asarray([c.objectives for c in evaluations])
    # the front of the feasible candidates when there are any (infeasible ones stay in ``evaluations``,
    # marked, and are never recommended); otherwise the front of all, every one marked infeasible
    front = reported_front(archive)
    if not front:
        raise MethodError(f"every FEU candidate failed to train; first error: {archive[0]['error']}")
    rec = _recommend(evaluator, anchor, archive, front, F, random_state, budget)
    t_tail = time.perf_counter()  # the tail: the front's test metrics and the deployed model (fairmon.feu._budget)
    pareto = []
    for pos, i in enumerate(front):
        r = archive[i]
        test = evaluator.test_metrics(r["state"], r["threshold"], r.get("group_thresholds"))
        pareto.append(candidate_of(r, test=test, chebyshev=rec.chebyshev.get(pos), dp_lb=rec.dp_lb.get(pos),
                                  gate=rec.gate.get(pos)))
    tail_s = time.perf_counter() - t_tail
    # withheld when fairlearn's tuned ThresholdOptimizer is better beyond noise, with group_thresholds on
    t_versus = time.perf_counter()
    rec = settle_against_mitigator(evaluator, anchor, rec, archive, front, baselines, random_state)
    timing["versus_mitigator_s"] = round(time.perf_counter() - t_versus, 3)
    t_deploy = time.perf_counter()
    # the deployed model: the searched network, or the chosen recipe's fold ensemble (FEUSettings.cv_deploy)
    selected, model = (None, None) if rec.position is None else _deployed(evaluator, rec, archive[front[rec.position]],
                                                                         pareto[rec.position])
    deployed = rec.members is not None and selected is not None
    timing.update(tail_estimate_s=round(budget.tail_s(len(front), deploy=front_feasible(archive, front)), 3),
                  tail_s=round(tail_s + time.perf_counter() - t_deploy, 3), deployed_fold_ensemble=deployed)
    rec = replace(rec, selection={**rec.selection, "timing": timing})

    snapshot = None
    if registry is not None and selected is not None and model is not None:
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
                "selection_rule": "chebyshev" if st.paper_mode else RULE,
                "weights": dict(zip(("utility", "dp", "gesd"), st.weights)),
                "utility": st.utility,
                "constraints": {"positive_rate_band": st.positive_rate_band,
                                "utility_tolerance": st.utility_tolerance,
                                "values": list(selected.constraints), "anchor": evaluator.anchor},
                "dp_improvement_lb": selected.dp_improvement_lb,
                "recommendation_gate": selected.recommendation_gate,
                "selection": rec.selection,
                "decision": _decision_record(selected, list(prep.summary["sensitive"])),
                "deployment": selected.deployment,
                "gesd_noise_floor": rec.noise_floor,
                "baselines": baselines,
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
        recommendation=rec.message + note,
        baselines=baselines,
        gesd_noise_floor=rec.noise_floor,
        selection=rec.selection,
    )


def _baselines(evaluator: _Evaluator, anchor: _Anchor, random_state: int) -> tuple[dict[str, Any], str]:
    """The baselines on FEU's split and the recommendation's sentence on the mitigators (none in paper mode)."""
    st, prep = evaluator.settings, evaluator.prep
    baselines = baseline_metrics(prep, anchor.proba, anchor.threshold, random_state=random_state,
                                 production_score=anchor.score_encoded, gesd_of=evaluator.gesd_result) if st.baselines else {
        "production": {"validation": anchor.validation, "test": anchor.test}}
    baselines["production"]["validation"]["gesd"] = anchor.gesd.get("validation")
    baselines["production"]["test"]["gesd"] = anchor.gesd.get("test")
    note = "" if st.paper_mode else compare_with_mitigators(
        baselines, prep, anchor.proba, band=st.positive_rate_band, tolerance=st.utility_tolerance, utility=st.utility,
        random_state=random_state, production_score=anchor.score_encoded, gesd_of=evaluator.gesd_result)
    return baselines, note


def _decision_record(c: Candidate, columns: list[str]) -> dict[str, Any]:
    """How the registered candidate decides: one threshold, or group-specific ones (listed)."""
    if c.group_thresholds is None:
        return {"group_specific_thresholds": False, "threshold": c.threshold}
    return {
        "group_specific_thresholds": True,
        "note": "decides with group-specific thresholds: predict reads the protected column(s) "
                f"{columns} (disparate treatment; opt-in FEU setting group_thresholds)",
        "columns": columns,
        "threshold": c.threshold,
        "parity_shift": c.parity_shift,
        "thresholds": dict(c.group_thresholds),
        "fallback": f"groups without a threshold here (unseen in training or < {MIN_GROUP_ROWS} training rows) "
                    "use threshold",
    }
