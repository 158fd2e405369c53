"""``time_budget_s`` over the whole FEU step: baselines, search, out-of-fold refits and what follows.

Issue 16, sessions 16-17.

A team sets ``time_budget_s`` so that the FEU step ends before its Airflow ``execution_timeout``; a
step killed there records a failed window, and its retry starts the whole search again. Session 16
brought the out-of-fold refits under the budget (with fewer than ``FEUSettings.cv_below_rows``
validation rows the gate refits every feasible front candidate's recipe on ``cv_folds`` folds,
:mod:`fairmon.feu._crossval`: 58-169 CPU-s on Adult's 6,000-row subsample at the spec's 30 x 15,
which ran after the search). What still ran after the refits, outside the budget, was the fairlearn
baselines with their GESDs, the front's test metrics (one GESD per candidate) and the deployed fold
ensemble's two GESDs: ~16 s on Adult at 300 s, so that step ended at 304.4 s
(``benchmarks/feu_paper/README.md``, "Session 16"). Now the budget counts from the step's start and
covers all of it:

0. **The baselines come first.** They do not depend on the search (production, the constant, fairlearn's
   mitigators and the tuned ThresholdOptimizer, with their GESDs), so they run before it and their
   time is simply part of the elapsed time every later check reads.
1. **The search reserves time for what follows it.** After every generation the search stops when the
   time used since the step started, plus one more generation (the last one's duration; the first's
   counts from the search's start), plus the reserve would exceed ``time_budget_s``
   (:func:`reserve_termination`). The reserve (:meth:`StepBudget.reserve_s`) is the estimated
   refits of the *current* feasible front (0 without the cross-validated gate), the deployed fold
   ensemble's nested check (since session 18, :mod:`fairmon.feu._nested`: one stack of ``k (k - 1)``
   networks, charged at the front's longest recipe since the pick is not known yet), plus the
   estimated **tail**: one scoring per candidate of the front FEU would report now (its test metrics
   and GESD) and two more when a fold ensemble is deployed (its validation and test GESDs), at the
   search's own measured seconds per scoring (:meth:`StepBudget.tail_s`). A generation is never interrupted.
   Before session 16, pymoo's ``TimeBasedTermination`` started a generation whenever any budget was
   left, so the search overran by up to a generation; and a check of time used plus the reserve
   alone fires only once less than the reserve is left.
2. **The refits take what is left after the tail and the nested check.** When the estimate for all
   feasible candidates exceeds the time left less those, the candidates are taken in order of
   **validation DP** (lowest first: the rule prefers them; ties by evaluation id): the first always (a
   search that used the whole budget still gets its most promising candidate checked, at the cost of
   ``2 x cv_folds`` networks, and of the fold ensemble's nested check, ``cv_folds x (cv_folds - 1)``
   more), then each one whose refits, with those taken so far, still fit (a recipe with many epochs
   does not block shorter ones behind it). The others are recorded as not eligible with that reason;
   the simultaneous gate then runs over the refit candidates only (its max-T holds for the set it is
   given). Ordering by validation DP reads the validation split, which the pooled rows
   contain; the front was already selected on it, so this adds no new kind of selection.

**The estimate** (:class:`TrainingClock`). A stack of ``K`` networks trained together
(:func:`fairmon.feu._train.train_mlps`) runs ``max(epochs)`` epochs of ``ceil(rows / batch_size)``
mini-batch steps, each costing ``a + b K`` (one batched product per layer plus Python overhead). The
clock measures seconds per step and network of the search's own generations, ``(a + b K) / K``, and
takes the median over generations (a load spike does not set it). A fold's refit stack of ``K'``
networks (the candidates plus FEU's production stand-in) is charged ``max(K', P)`` times that per
step, ``P`` the largest generation measured (the population): never less than a whole generation,
and for a generation of ``K <= P`` networks ``(a + b K) / K >= (a + b P) / P``, so the charge is not
below ``a + b K'`` for ``a, b >= 0`` (also after duplicate elimination shrank a generation). The refits run with at most half the cores' torch threads, the search with its own
setting; the record keeps the estimate beside the measured wall time (``refit_estimate_s``,
``cv_wall_s``) so the estimate can be checked.

**The tail's estimate.** Scoring a candidate (its metrics and its light GESD on one split) costs the
same on the test split as on validation: the GESD's sampled rows, perturbations and explainer
settings are the same. Every scoring in the search is timed where it runs (a worker process or the
step's own; a pool's start-up is not counted) and the tail charges the median per candidate
(robust to the quick scorings of candidates whose training failed, and to worker contention). A
fold ensemble's GESD calls ``cv_folds`` networks per model call and is charged as one network's
scoring: ``benchmarks/feu_paper`` records the tail's estimate beside its measured time to check it.

The spec refuses a ``time_budget_s`` the Airflow timeouts would cut (:mod:`fairmon.config`, the
``retraining`` section), and keeps a share of the limit for the estimates' error. Not reserved:
registration, the comparison with the tuned ThresholdOptimizer (``cv_folds`` ThresholdOptimizer fits,
~0.06 CPU-s each at 3,000 rows, and two bootstraps) and the group-threshold ensemble's quantiles —
bounded by the data's size, not by the search. The step records ``timing`` in its selection: the
baselines' seconds, the tail's estimate and its measured seconds, and the mitigator check's
(``versus_mitigator_s``); ``refit_seconds_left`` is what was left for the refits after the tail's estimate.

Example
-------
>>> clock = TrainingClock(batch_size=32)
>>> clock.record(seconds=2.0, networks=16, epochs=[10, 20], rows=320)  # 20 epochs x 10 steps = 200 steps
>>> clock.network_step_s  # 2 s / 200 steps / 16 networks
0.000625
>>> clock.refit_s(epochs=[20, 30], fit_rows=640, folds=5, stand_in_epochs=20)  # 5 x 30 x 20 x 0.01
30.0
>>> clock.refits_within([20, 30, 10], fit_rows=640, folds=5, stand_in_epochs=20, seconds_left=25.0)  # not 30
[0, 2]
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairmon.feu._result import front_feasible, reported_front
from fairmon.feu.settings import FEUSettings

__all__: list[str] = []

#: the reason recorded for a feasible candidate whose recipe was not refit
NOT_REFIT = ("not refit within time_budget_s: the out-of-fold refits of {m} of {n} feasible candidates (taken in "
             "order of validation DP, lowest first) were estimated to fit in the {left:.0f} s left after the front's "
             "test metrics and the fold ensemble's nested check")


@dataclass
class TrainingClock:
    """Seconds per mini-batch step and network of a generation's stack, measured during the search."""

    batch_size: int
    samples: list[float] = field(default_factory=list)  #: seconds per step and network, one per generation
    stack: int = 0  #: networks of the largest measured stack (the population)

    def record(self, *, seconds: float, networks: int, epochs: Sequence[int], rows: int) -> None:
        """Record one generation: ``networks`` trained together for ``max(epochs)`` epochs on ``rows`` rows."""
        steps = max(epochs, default=0) * math.ceil(rows / self.batch_size)
        if steps > 0 and networks > 0:
            self.samples.append(seconds / steps / networks)
            self.stack = max(self.stack, networks)

    @property
    def network_step_s(self) -> float | None:
        """Median seconds per step and network; None before the first generation."""
        return statistics.median(self.samples) if self.samples else None

    def stack_s(self, networks: int, *, epochs: int, rows: int) -> float:
        """Estimated seconds to train a stack of ``networks`` for ``epochs`` epochs on ``rows`` rows (charged
        at least a whole generation's stack); 0 before the first generation."""
        step = self.network_step_s
        if step is None or networks <= 0:
            return 0.0
        return epochs * math.ceil(rows / self.batch_size) * step * max(networks, self.stack)

    def refit_s(self, epochs: Sequence[int], *, fit_rows: int, folds: int, stand_in_epochs: int | None) -> float:
        """Estimated seconds to refit recipes with these ``epochs`` (plus the stand-in's) on every fold."""
        if not epochs:
            return 0.0
        stack = [*epochs, *([stand_in_epochs] if stand_in_epochs is not None else [])]
        return folds * self.stack_s(len(stack), epochs=max(stack), rows=fit_rows)

    def refits_within(self, epochs: Sequence[int], *, fit_rows: int, folds: int, stand_in_epochs: int | None,
                      seconds_left: float) -> list[int]:
        """Which recipes fit in ``seconds_left`` (positions in the given order): the first always, then each
        one in turn whose refits, with those taken so far, still fit (a long recipe does not block shorter
        ones behind it)."""
        chosen = [0] if epochs else []
        for i in range(1, len(epochs)):
            if self.refit_s([epochs[j] for j in [*chosen, i]], fit_rows=fit_rows, folds=folds,
                            stand_in_epochs=stand_in_epochs) <= seconds_left:
                chosen.append(i)
        return chosen


@dataclass
class StepBudget:
    """How one FEU run spends ``time_budget_s`` after its baselines: search, refits, tail (module docstring).

    Example
    -------
    >>> b = StepBudget(TrainingClock(32), time.perf_counter(), budget_s=None, cv=True, fit_rows=640, folds=5,
    ...                stand_in_epochs=20, deploy_scorings=2)
    >>> b.record_scoring([0.4, 0.5, 0.9])  # three candidates scored: 0.5 s each (the median)
    >>> b.tail_s(front_size=4)  # the 4 candidates' test metrics and the fold ensemble's 2 GESDs
    3.0
    >>> plan_refits(b, [{"id": 3, "epochs": 10, "objectives": [0.3, 0.05, 0.0]}])
    ([0], {'time_budget_s': None})
    """

    clock: TrainingClock
    started: float  #: :func:`time.perf_counter` at the step's start
    budget_s: float | None  #: ``time_budget_s``; None: unbounded
    cv: bool  #: whether the cross-validated gate applies (else nothing is refit)
    fit_rows: int  #: rows one fold's refit trains on, ``(k - 1) / k`` of train + validation
    folds: int
    stand_in_epochs: int | None  #: FEU's production stand-in is refit too; None: a given model is not
    #: scorings the deployed model adds after the search: 2 (the fold ensemble's validation and test GESDs) or 0
    deploy_scorings: int = 0
    #: networks of the deployed fold ensemble's nested check, ``k (k - 1)`` (:mod:`fairmon.feu._nested`), or 0
    nested_networks: int = 0
    nested_rows: int = 0  #: rows each nested network trains on, ``(k - 2) / k`` of train + validation
    #: seconds to score one candidate (metrics and light GESD on one split), one per candidate scored
    scoring: list[float] = field(default_factory=list)

    def _refit_s(self, epochs: Sequence[int]) -> float:
        return self.clock.refit_s(epochs, fit_rows=self.fit_rows, folds=self.folds,
                                  stand_in_epochs=self.stand_in_epochs)

    def record_scoring(self, seconds: Sequence[float]) -> None:
        """Record a generation's scorings, each timed where it ran (a worker or the step's process)."""
        self.scoring.extend(float(s) for s in seconds)

    def tail_s(self, front_size: int, *, deploy: bool = True) -> float:
        """Estimated seconds after the refits: one scoring per front candidate (its test metrics) and, when
        something can be recommended (``deploy``: the front is feasible), the deployed model's; 0 before
        the first generation."""
        if not self.scoring:
            return 0.0
        return statistics.median(self.scoring) * (front_size + (self.deploy_scorings if deploy else 0))

    def nested_s(self, epochs: Sequence[int]) -> float:
        """Estimated seconds of the fold ensemble's nested check of one of the recipes with these ``epochs`` (the
        longest: which one is chosen is not known yet); 0 when the fold ensemble is not deployed."""
        if not self.cv or not epochs:
            return 0.0
        return self.clock.stack_s(self.nested_networks, epochs=max(epochs), rows=self.nested_rows)

    def reserve_s(self, archive: Sequence[dict[str, Any]]) -> float:
        """What the search leaves for after it: the tail of the front it would report now, plus the refits
        of that front and the deployed fold ensemble's nested check when it is feasible and the
        cross-validated gate applies."""
        front = reported_front(archive)
        feasible = front_feasible(archive, front)
        refits = 0.0
        if self.cv and feasible:
            epochs = [int(archive[i]["epochs"]) for i in front]
            refits = self._refit_s(epochs) + self.nested_s(epochs)
        return self.tail_s(len(front), deploy=feasible) + refits

    def plan(self, rows: Sequence[dict[str, Any]], budget_s: float) -> tuple[list[int], dict[str, Any]]:
        """Which of the feasible candidates ``rows`` (the reported front) to refit within ``budget_s``, after
        the tail's estimate (:func:`plan_refits`)."""
        tail = self.tail_s(len(rows)) + self.nested_s([int(r["epochs"]) for r in rows])
        left = budget_s - (time.perf_counter() - self.started) - tail
        order = sorted(range(len(rows)), key=lambda i: (float(rows[i]["objectives"][1]), int(rows[i]["id"])))
        fit = self.clock.refits_within([int(rows[i]["epochs"]) for i in order], fit_rows=self.fit_rows,
                                       folds=self.folds, stand_in_epochs=self.stand_in_epochs, seconds_left=left)
        keep = sorted(order[k] for k in fit)
        record: dict[str, Any] = {
            "time_budget_s": budget_s, "refit_seconds_left": round(left, 3),
            "refit_estimate_s": round(self._refit_s([int(rows[i]["epochs"]) for i in keep]), 3),
            "nested_estimate_s": round(self.nested_s([int(r["epochs"]) for r in rows]), 3),
            "candidates_not_refit": [int(rows[i]["id"]) for i in range(len(rows)) if i not in keep],
        }
        if len(keep) < len(rows):
            record["not_refit_reason"] = NOT_REFIT.format(m=len(keep), n=len(rows), left=max(left, 0.0))
        return keep, record


def plan_refits(budget: StepBudget | None, rows: Sequence[dict[str, Any]]) -> tuple[list[int], dict[str, Any]]:
    """Which of the feasible candidates ``rows`` to refit (indices, in their order) and the record of why:
    all of them without a budget, else :meth:`StepBudget.plan`."""
    if budget is None or budget.budget_s is None:
        return list(range(len(rows))), {"time_budget_s": None}
    return budget.plan(rows, budget.budget_s)


def reserve_termination(budget_s: float, started: float, reserve: Callable[[], float],
                        clock: Callable[[], float] = time.perf_counter) -> Any:
    """A pymoo ``Termination``: stop once ``elapsed + last generation + reserve() >= budget_s``.

    ``started`` is a ``clock()`` value, the step's start, from which ``elapsed`` counts; the first
    generation's duration counts from this call (build it just before the search: the step's setup
    is not a generation). pymoo is imported here, not at module import.

    Example
    -------
    >>> t = reserve_termination(10.0, time.perf_counter(), lambda: 10.0)
    >>> t.update(None) >= 1.0  # the whole budget is reserved: stop
    True
    """
    from pymoo.core.termination import Termination

    class _Reserve(Termination):  # type: ignore[misc]  # pymoo ships no type hints
        def __init__(self) -> None:
            super().__init__()
            self.last = clock()  # when the previous generation ended (the search's start)

        def _update(self, algorithm: object) -> float:
            now = clock()
            generation_s, self.last = now - self.last, now
            return max(0.0, (now - started + generation_s + reserve()) / budget_s)

    return _Reserve()


def stopped_by_limit(st: FEUSettings, generations: int, n_eval: int, time_limited: bool) -> str:
    """Which limit stopped the search; ``time_limited``: the :func:`reserve_termination` fired."""
    if generations >= st.generations:
        return "generations"
    if st.max_evaluations is not None and n_eval >= st.max_evaluations:
        return "max_evaluations"
    if time_limited:
        return "time_budget_s"
    return "converged"
