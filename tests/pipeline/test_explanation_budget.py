"""The explanation and diagnose steps' cost model and compute budget (issue 21): the cost model counts
the model rows the explainers really evaluate (the explain step's, and the diagnose step's attribution
gaps), a budget shrinks the sizes until the estimate fits and logs the choice, and no budget leaves the
configured sizes alone."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairmon.config import ExplanationsSpec, MonitorSpec
from fairmon.explain.cost import BUDGET_FLOORS, estimate, fit_budget
from fairmon.pipeline.context import RunContext
from fairmon.registry.model import Model
from fairmon.window import Window

FEATURES = [f"f{i}" for i in range(8)]  # 2^8 coalitions: KernelSHAP uses all its samples
SMALL = {"background_size": 10, "kernelshap_samples": 40, "lime_samples": 120,
         "gesd": {"sample_size": 24, "n_perturbations": 3}, "openxai": {"sample_size": 20, "n_perturbations": 5}}


def _spec(tmp_path: Path, explanations: dict[str, Any]) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1,
        "identity": {"name": "m"},
        "model": {"registry_uri": str(tmp_path / "registry")},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": FEATURES, "extra": ["sex"], "sensitive": ["sex"]},
        "schedule": {"start_date": "2026-01-01"},
        "execution": {"artifact_location": str(tmp_path / "artifacts"), "device": "cpu"},
        "explanations": explanations,
    })


def _window(tmp_path: Path, spec: MonitorSpec, n: int = 300) -> RunContext:
    """A sklearn model of the features in the spec's registry; the window's data and snapshot."""
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Registry
    from fairmon.schema import FeatureSchema

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(n, len(FEATURES))), columns=FEATURES)
    frame["sex"] = rng.choice(["F", "M"], n)
    schema = FeatureSchema.fit(frame[FEATURES])
    y = frame["f0"] + frame["f1"] > 0
    model = Model(LogisticRegression().fit(schema.transform(frame[FEATURES]), y), schema, framework="sklearn")
    info = Registry(str(tmp_path / "registry")).register(model, name=spec.name)
    ctx = RunContext(spec, Window(spec.name, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)))
    ctx.artifacts.put_frame("data", frame)
    ctx.artifacts.put_json("snapshot", {"name": info.name, "version": info.version})
    return ctx


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Rows handed to every sklearn model's ``predict_proba_encoded`` (appended per call)."""
    rows: list[int] = []
    original = Model.predict_proba_encoded

    def counting(self: Model, Z: np.ndarray) -> np.ndarray:
        rows.append(len(Z))
        return original(self, Z)

    monkeypatch.setattr(Model, "predict_proba_encoded", counting)
    return rows


def test_cost_model_counts_the_rows_the_explainers_evaluate(tmp_path: Path, counted: list[int]) -> None:
    from fairmon.pipeline.compute import run_explanations

    spec = _spec(tmp_path, SMALL)
    run_explanations(_window(tmp_path, spec))
    predicted = estimate(spec.explanations, n_rows=300, n_attributes=1, seconds_per_row=1.0).evaluations_of("explain")
    # the model leaves out a few small calls (predicted labels, PGI/PGU bookkeeping): within 15 %
    assert 0.85 * predicted <= sum(counted) <= 1.15 * predicted, (sum(counted), predicted)


def test_a_budget_shrinks_the_sizes_and_logs_the_choice(
    tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from fairmon.pipeline import budget
    from fairmon.pipeline.compute import run_explanations

    price = 1e-5
    monkeypatch.setattr(budget, "seconds_per_evaluation", lambda model, Z: price)  # a fixed, known price
    # the explain step's sizes alone (the diagnose step's share: test_a_budget_shrinks_the_attribution_gaps_too)
    spec = _spec(tmp_path, {**SMALL, "budget_cpu_s": 1.0, "attribution_gap": {"enabled": False}})
    full = estimate(spec.explanations, n_rows=300, n_attributes=1, seconds_per_row=price)
    assert full.cpu_seconds > 1.0  # the configured sizes do not fit
    with caplog.at_level(logging.INFO, logger="fairmon.pipeline.budget"):
        out = run_explanations(_window(tmp_path, spec))
    lines = [r.getMessage() for r in caplog.records if "explanation budget" in r.getMessage()]
    assert len(lines) == 1 and "chosen background_size=" in lines[0] and "CPU-s per model row" in lines[0]
    assert sum(counted) * price <= 1.0 * 1.15  # what really ran fits the budget (the model's tolerance)
    chosen, fits = fit_budget(spec.explanations, budget_cpu_s=1.0, n_rows=300, n_attributes=1, seconds_per_row=price)
    assert fits
    ran = out["gesd"]["sex"]["settings"]
    assert (ran["sample_size"], ran["n_perturbations"], ran["background_size"]) == (
        chosen.gesd.sample_size, chosen.gesd.n_perturbations, chosen.background_size)
    assert chosen.background_size < SMALL["background_size"] or chosen.gesd.sample_size < SMALL["gesd"]["sample_size"]


def test_fit_budget_goes_down_to_the_floors_and_never_up() -> None:
    e = ExplanationsSpec(background_size=15, lime_samples=5000)
    small, fits = fit_budget(e, budget_cpu_s=1e-9, n_rows=None, n_attributes=2, seconds_per_row=1e-6)
    assert not fits
    assert small.background_size == BUDGET_FLOORS["background_size"]
    assert small.lime_samples == BUDGET_FLOORS["lime_samples"]
    assert small.gesd.sample_size == 2 * e.gesd.min_group_size  # enough rows for two groups
    roomy, fits = fit_budget(e, budget_cpu_s=1e6, n_rows=None, n_attributes=2, seconds_per_row=1e-6)
    assert fits and roomy == e  # a budget never raises a size
    mid, fits = fit_budget(e, budget_cpu_s=5.0, n_rows=None, n_attributes=2, seconds_per_row=1e-6)
    assert fits and estimate(mid, n_rows=None, n_attributes=2, seconds_per_row=1e-6).cpu_seconds <= 5.0
    assert estimate(e, n_rows=None, n_attributes=2, seconds_per_row=1e-6).cpu_seconds > 5.0


def test_without_a_budget_the_configured_sizes_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairmon.pipeline import budget

    def never(model: Any, Z: Any) -> float:
        raise AssertionError("no budget: the model is not timed")

    monkeypatch.setattr(budget, "seconds_per_evaluation", never)
    spec = _spec(tmp_path, SMALL)
    assert budget.explanations_within_budget(spec, None, pd.DataFrame()) is spec.explanations


def _with_groups(ctx: RunContext, monkeypatch: pytest.MonkeyPatch) -> RunContext:
    """The window's predictions, and two groups for the diagnose step (RUMIE's and a declared one)."""
    from fairmon.pipeline import diagnose

    frame = ctx.artifacts.get_frame("data")
    fav = (frame["f0"] > 0).to_numpy(dtype=float)
    ctx.artifacts.put_arrays("predictions", favorable=fav, score=fav, label_favorable=np.full(len(fav), np.nan))
    monkeypatch.setattr(diagnose, "_rumie_group", lambda c, f: ("f1 > 0.3", (f["f1"] > 0.3).to_numpy()))
    monkeypatch.setattr(diagnose, "_declared_group", lambda c, f: ("sex=F", (f["sex"] == "F").to_numpy()))
    return ctx


def test_cost_model_counts_the_rows_the_attribution_gaps_evaluate(
    tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairmon.pipeline.diagnose import attribution_gaps

    spec = _spec(tmp_path, {**SMALL, "attribution_gap": {"sample_size": 60, "bootstrap": 20}})
    gaps = attribution_gaps(_with_groups(_window(tmp_path, spec), monkeypatch))
    assert [(g.group_kind, g.n_inside, g.n_outside) for g in gaps] == [("rumie", 60, 60), ("declared", 60, 60)]
    cost = estimate(spec.explanations, n_rows=300, n_attributes=1, seconds_per_row=1.0)
    predicted = cost.evaluations_of("diagnose")
    assert predicted == cost.parts["diagnose attribution_gap"] == 2 * 120 * 40 * 10  # 2 groups x 2 s rows x K B
    assert 0.85 * predicted <= sum(counted) <= 1.15 * predicted, (sum(counted), predicted)
    with_rescore = estimate(spec.explanations, n_rows=300, n_attributes=1, seconds_per_row=1.0, rescore_rows=300)
    assert with_rescore.evaluations_of("diagnose") == predicted + 300


def test_a_budget_shrinks_the_attribution_gaps_too(
    tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairmon.pipeline import budget
    from fairmon.pipeline.diagnose import attribution_gaps

    price = 1e-5
    monkeypatch.setattr(budget, "seconds_per_evaluation", lambda model, Z: price)
    spec = _spec(tmp_path, {**SMALL, "budget_cpu_s": 1.5, "attribution_gap": {"sample_size": 60, "bootstrap": 20}})
    assert estimate(spec.explanations, n_rows=300, n_attributes=1, seconds_per_row=price).cpu_seconds > 1.5
    chosen, fits = fit_budget(spec.explanations, budget_cpu_s=1.5, n_rows=300, n_attributes=1, seconds_per_row=price)
    assert fits and chosen.attribution_gap.sample_size < 60
    gaps = attribution_gaps(_with_groups(_window(tmp_path, spec), monkeypatch))
    assert {g.n_inside for g in gaps} == {chosen.attribution_gap.sample_size}
    ran = estimate(chosen, n_rows=300, n_attributes=1, seconds_per_row=price).evaluations_of("diagnose")
    assert sum(counted) <= 1.15 * ran  # the rows that ran are the fitted sizes' (the timing call aside)
