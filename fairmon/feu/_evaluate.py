"""Scoring one FEU configuration (train an MLP, measure 1-AUC, DP and GESD), in-process or in workers."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from fairmon._device import resolve_device
from fairmon.errors import InsufficientDataError
from fairmon.explain.gesd import GESDResult, gesd
from fairmon.feu._baselines import DecisionProbability, _group_decoder
from fairmon.feu._data import _Prepared
from fairmon.feu._group_thresholds import group_thresholds, parity_quantiles, row_thresholds, shifted_score
from fairmon.feu._metrics import outcome_metrics
from fairmon.feu._result import WORST
from fairmon.feu._train import predict_proba, train_mlps
from fairmon.feu.settings import FEUSettings
from fairmon.registry.model import Model, build_mlp

__all__: list[str] = []


class _Evaluator:
    """Trains and scores one configuration; picklable so worker processes can hold a copy."""

    def __init__(self, prep: _Prepared, settings: FEUSettings, gesd_seed: int, device: str | None) -> None:
        self.prep = prep
        self.settings = settings
        self.gesd_seed = gesd_seed
        self.device = device

    #: the production model's validation selection rate and utility (the constraints' anchor)
    anchor: dict[str, float] | None = None

    def decode(self, x: np.ndarray) -> tuple[float, int, float, float]:
        """``(lr, epochs, threshold, fairness_weight)`` of a pymoo decision vector."""
        lo, hi = self.settings.epoch_bounds
        epochs = int(min(max(round(float(x[1])), lo), hi))
        weight = float(x[3]) if len(x) > 3 else 0.0
        return float(10.0 ** float(x[0])), epochs, float(x[2]), weight

    @property
    def shift_index(self) -> int | None:
        """Position of the parity shift in the decision vector (None: no group thresholds)."""
        st = self.settings
        return 3 + int(st.fairness_weight_bounds is not None) if st.group_thresholds else None

    def shift(self, x: np.ndarray) -> float | None:
        """The parity shift ``s`` of a pymoo decision vector (None without group thresholds)."""
        i = self.shift_index
        return None if i is None else min(max(float(x[i]), 0.0), 1.0)

    def group_thresholds(self, net: Any, thr: float, shift: float | None) -> dict[str, float] | None:
        """``{group: tau_g(s)}`` fit on the training scores of ``net`` (:mod:`fairmon.feu._group_thresholds`)."""
        if shift is None:
            return None
        q = parity_quantiles(predict_proba(net, self.prep.Z["train"]), self.prep.s["train"], thr)
        return group_thresholds(thr, q, shift)

    def row_thresholds(self, part: str, thr: float, gthr: dict[str, float] | None) -> float | np.ndarray:
        return thr if gthr is None else row_thresholds(self.prep.s[part], gthr, thr)

    def decisions(self, r: dict[str, Any], part: str) -> np.ndarray:
        """0/1 decisions of an archived candidate on a split (its group thresholds when it has them)."""
        p = predict_proba(self.rebuild(r["state"]), self.prep.Z[part])
        return (p >= self.row_thresholds(part, r["threshold"], r.get("group_thresholds"))).astype(int)

    def constraints(self, val: dict[str, float]) -> tuple[float, ...]:
        """pymoo inequality constraints (``<= 0`` is feasible): positive-rate band, utility floor."""
        st, a = self.settings, self.anchor
        out: list[float] = []
        if st.positive_rate_band is not None:
            assert a is not None
            out.append(abs(val["selection_rate"] - a["selection_rate"]) - st.positive_rate_band)
        if st.utility_tolerance is not None:
            assert a is not None
            out.append((a["utility"] - st.utility_tolerance) - val[st.utility])
        return tuple(out)

    @property
    def n_constraints(self) -> int:
        st = self.settings
        return int(st.positive_rate_band is not None) + int(st.utility_tolerance is not None)

    def model(self, net: Any, threshold: float, gthr: dict[str, float] | None = None) -> Model:
        """The candidate as served: raw rows in; with ``gthr`` it reads the raw sensitive column(s)."""
        if gthr is None:
            return Model(net, self.prep.schema, framework="torch", threshold=threshold, device=self.device)
        return Model(net, self.prep.schema, framework="torch", threshold=threshold, device=self.device,
                     group_thresholds=gthr, group_columns=list(self.prep.summary["sensitive"]))

    def explained(self, net: Any, thr: float, gthr: dict[str, float] | None) -> Model:
        """What GESD explains: the network's P(favourable), or with group thresholds that score shifted by
        the group's threshold, the group read from the perturbed encoded sensitive columns."""
        if gthr is None:
            return self.model(net, 0.5)
        decode = _group_decoder(self.prep)
        assert decode is not None  # search() refuses group thresholds when a sensitive column is no feature
        fn = shifted_score(lambda Z: predict_proba(net, Z), decode, gthr, thr)
        return Model(DecisionProbability(fn), self.prep.schema, framework="sklearn")

    def gesd_result(self, model: Model, part: str, *, raw: bool = False) -> GESDResult | None:
        """GESD of ``model`` on a split (the encoded rows, or the raw ones for a production model)."""
        X, X_train = (self.prep.X[part], self.prep.X["train"]) if raw else (self.prep.Z[part], self.prep.Z["train"])
        try:
            return gesd(model, X, self.prep.s[part], X_train=X_train, random_state=self.gesd_seed, device=self.device,
                        **self.settings.gesd)
        except InsufficientDataError:  # the sampled rows hold one group only: GESD undefined
            return None

    def gesd_value(self, net: Any, part: str, thr: float = 0.5,
                   gthr: dict[str, float] | None = None) -> tuple[float, float]:
        res = self.gesd_result(self.explained(net, thr, gthr), part)
        return (float("nan"), float("nan")) if res is None else (res.value, res.p_value)

    def train(self, configs: list[tuple[float, int, int]], weights: list[float] | None = None) -> list[Any]:
        """Train a generation's networks together (:func:`fairmon.feu._train.train_mlps`)."""
        st = self.settings
        return train_mlps(
            self.prep.Z["train"], self.prep.y["train"], configs, batch_size=st.batch_size, hidden=st.hidden,
            device=self.device, fairness_weights=weights, groups=self.prep.codes["train"],
        )

    def score(
        self, state: dict[str, Any], lr: float, epochs: int, thr: float, seed: int, weight: float = 0.0,
        shift: float | None = None,
    ) -> dict[str, Any]:
        """Validation metrics and objectives of one trained network (``shift``: its parity shift); ``score_s``
        is the seconds it took, in the process that scored it (:mod:`fairmon.feu._budget`)."""
        started = time.perf_counter()
        gthr = None
        try:
            net = self.rebuild(state)
            proba = predict_proba(net, self.prep.Z["validation"])
            if not np.all(np.isfinite(proba)):
                raise FloatingPointError("non-finite predictions after training")
            gthr = self.group_thresholds(net, thr, shift)
            val = outcome_metrics(self.prep.y["validation"], proba, self.prep.s["validation"],
                                  self.row_thresholds("validation", thr, gthr))
            g, p = self.gesd_value(net, "validation", thr, gthr)
            val["gesd"] = g
            val["gesd_p_value"] = p
            objectives: tuple[float, ...] = (1.0 - val[self.settings.utility], val["dp"], g if math.isfinite(g) else 1.0)
            constraints = self.constraints(val)
            error = None
        except (FloatingPointError, RuntimeError, ValueError) as exc:
            val, objectives, error = {}, WORST, f"{type(exc).__name__}: {exc}"
            constraints = (1.0,) * self.n_constraints
        return {"lr": lr, "epochs": epochs, "threshold": thr, "seed": seed, "fairness_weight": weight, "parity_shift": shift,
                "group_thresholds": gthr, "validation": val,
                "objectives": objectives, "constraints": constraints, "state": state if error is None else None,
                "error": error, "score_s": time.perf_counter() - started}

    def test_metrics(self, state: dict[str, Any], threshold: float,
                     gthr: dict[str, float] | None = None) -> dict[str, float]:
        net = self.rebuild(state)
        proba = predict_proba(net, self.prep.Z["test"])
        out = outcome_metrics(self.prep.y["test"], proba, self.prep.s["test"], self.row_thresholds("test", threshold, gthr))
        g, p = self.gesd_value(net, "test", threshold, gthr)
        out["gesd"] = g
        out["gesd_p_value"] = p
        return out

    def rebuild(self, state: dict[str, Any]) -> Any:
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


