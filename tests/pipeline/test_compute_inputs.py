"""What the heavy steps are given: RUMIE's searched columns, GESD's attributes and sampling, and how
an undefined explanation disparity is recorded (NULL with a status, never zero, never a failed window)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairmon.config import MonitorSpec
from fairmon.pipeline.context import RunContext
from fairmon.window import Window


def _spec(tmp_path: Path, **sections: Any) -> MonitorSpec:
    doc: dict[str, Any] = {
        "spec_version": 1,
        "identity": {"name": "m"},
        "model": {"registry_uri": str(tmp_path / "registry")},
        "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["a", "b"], "extra": ["sex"], "sensitive": ["sex"]},
        "schedule": {"start_date": "2026-01-01"},
        "execution": {"artifact_location": str(tmp_path / "artifacts"), "device": "cpu"},
    }
    doc.update(sections)
    return MonitorSpec.model_validate(doc)


def _ctx(spec: MonitorSpec, frame: pd.DataFrame) -> RunContext:
    ctx = RunContext(spec, Window(spec.name, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)))
    ctx.artifacts.put_frame("data", frame)
    return ctx


def _frame(n: int = 50, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "sex": rng.choice(["F", "M"], n)})


# ------------------------------------------------------------------------------------------ RUMIE
def test_rumie_searches_the_sensitive_and_extra_columns_by_default(tmp_path: Path) -> None:
    """Issue 22 item 2: never the model's inputs by default (over a credit model's features the "most
    discriminated group" is the group the model is built to score low)."""
    from fairmon.pipeline.steps import _rumie_frame

    spec = _spec(tmp_path)
    assert spec.rumie_attributes == ("sex",) and spec.rumie_model_inputs == ()
    assert list(_rumie_frame(_ctx(spec, _frame()))) == ["sex"]  # the withheld 'sex', not a or b
    both = _spec(tmp_path, columns={"features": ["a", "b", "race"], "extra": ["sex", "branch"],
                                    "sensitive": ["race", "sex"]})
    assert both.rumie_attributes == ("race", "sex", "branch")  # sensitive first, then extra, once each
    assert both.rumie_model_inputs == ()  # a sensitive model input is searched, and is no warning


def test_rumie_k_is_capped_at_the_encoded_width_of_the_searched_columns() -> None:
    from fairmon.errors import MethodError
    from fairmon.fairness.rumie import mine
    from fairmon.pipeline.compute import _effective_k

    frame = _frame(400, seed=3)
    X, fav = frame[["sex"]], (frame["a"] > 0).to_numpy(dtype=int)
    with pytest.raises(MethodError, match="k must be between 1 and the number of encoded attributes"):
        mine(X, fav, k=5, iterations=20)  # what the default k did with the default columns
    assert _effective_k(5, X) == 2 and _effective_k(1, X) == 1  # sex one-hot: two encoded columns
    assert _effective_k(5, frame) == 4  # a, b and sex's two
    assert mine(X, fav, k=_effective_k(5, X), iterations=20).settings["k"] == 2


def test_rumie_attributes_in_the_spec_win(tmp_path: Path) -> None:
    from fairmon.pipeline.steps import _rumie_frame

    spec = _spec(tmp_path, rumie={"attributes": ["b"]})
    assert list(_rumie_frame(_ctx(spec, _frame()))) == ["b"]


def test_the_spec_early_stop_reaches_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rumie.early_stop`` is what IE uses: ``tol: 0`` runs every iteration, a loose one stops early."""
    from fairmon.pipeline import compute
    from fairmon.pipeline.compute import run_rumie

    monkeypatch.setattr(compute, "_previous_conditions", lambda ctx: None)  # no store: no previous window

    frame = _frame(400, seed=5)
    fav = (frame["a"] + (frame["sex"] == "F") > 0.5).to_numpy(dtype=float)
    runs = {}
    for tol in (0.0, 0.5):
        spec = _spec(tmp_path, rumie={"iterations": 400, "k": 2,
                                      "early_stop": {"tol": tol, "patience": 50, "check_every": 25}})
        runs[tol] = run_rumie(_ctx(spec, frame), frame[["sex"]], fav).evidence.search["iterations_run"]
    assert runs[0.0] == 400 and runs[0.5] < 400


# ------------------------------------------------------------------------------------------ explanations
FAST_EXPLANATIONS: dict[str, Any] = {
    "explainers": ["random"],
    "background_size": 20,
    "gesd": {"explainer": "random", "sample_size": 100, "n_perturbations": 2, "min_group_size": 10},
    "openxai": {"metrics": ["PGI"], "sample_size": 60, "n_perturbations": 5},
}


def _registered(tmp_path: Path, spec: MonitorSpec, frame: pd.DataFrame) -> RunContext:
    """A sklearn model of the spec's features in the spec's registry; the window's data and snapshot."""
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model, Registry
    from fairmon.schema import FeatureSchema

    feats = list(spec.columns.features)
    schema = FeatureSchema.fit(frame[feats])
    model = Model(LogisticRegression().fit(schema.transform(frame[feats]), frame["a"] > 0), schema,
                  framework="sklearn")
    info = Registry(str(tmp_path / "registry")).register(model, name=spec.name)
    ctx = _ctx(spec, frame)
    ctx.artifacts.put_json("snapshot", {"name": info.name, "version": info.version})
    return ctx


def _minority_frame(n: int, minority: int, seed: int = 0) -> pd.DataFrame:
    f = _frame(n, seed)
    f["sex"] = np.where(np.arange(n) < minority, "F", "M")
    return f


def test_one_group_window_stores_null_disparities_with_a_reason(tmp_path: Path) -> None:
    from fairmon.pipeline.compute import run_explanations
    from fairmon.pipeline.records import explanation_records

    spec = _spec(tmp_path, explanations=FAST_EXPLANATIONS)
    ctx = _registered(tmp_path, spec, _minority_frame(300, 0))  # every row is 'M': no disparity exists
    out = run_explanations(ctx)  # does not raise: the window keeps its other results
    assert out["gesd"]["sex"]["value"] is None and out["gesd"]["sex"]["status"].startswith("insufficient")
    recs = {(r.family, r.metric, r.group): r for r in explanation_records(out)}
    gesd_rec = recs[("gesd", "gesd", "sex")]
    assert gesd_rec.value is None and "only 1 group" in gesd_rec.details["status"]
    fair = recs[("openxai", "PGI_fairness", "sex")]
    assert fair.value is None and fair.details["status"].startswith("insufficient")
    assert recs[("openxai", "PGI", "")].value is not None  # the window-level metric is still computed


def test_rrs_of_a_sklearn_model_is_stored_null_with_the_reason(tmp_path: Path) -> None:
    """Issue 22 item 7: without internal representations RRS is undefined, never a copy of ROS."""
    from fairmon.explain.openxai import RRS_UNDEFINED_NOTE
    from fairmon.pipeline.compute import run_explanations
    from fairmon.pipeline.records import explanation_records

    expl = {**FAST_EXPLANATIONS, "gesd": {**FAST_EXPLANATIONS["gesd"], "enabled": False},
            "openxai": {"metrics": ["RRS", "ROS"], "sample_size": 20, "n_perturbations": 5}}
    spec = _spec(tmp_path, explanations=expl)
    out = run_explanations(_registered(tmp_path, spec, _minority_frame(300, 120)))
    recs = {(r.metric, r.group): r for r in explanation_records(out) if r.family == "openxai"}
    rrs, ros = recs[("RRS", "")], recs[("ROS", "")]
    assert rrs.value is None and rrs.n_nan == rrs.n == 20
    assert rrs.details["status"] == RRS_UNDEFINED_NOTE and rrs.details["status"].startswith("undefined")
    assert ros.value is not None and "status" not in ros.details
    gap = recs[("RRS_fairness", "sex")]
    assert gap.value is None and gap.details["status"] == RRS_UNDEFINED_NOTE


def test_one_percent_group_gets_a_gesd_by_default(tmp_path: Path) -> None:
    """The audit's case: a 1 % group. The spec's default stratified sample always holds it."""
    from fairmon.pipeline.compute import run_explanations

    frame = _minority_frame(2000, 20)
    for seed in range(3):
        spec = _spec(tmp_path / str(seed), explanations={**FAST_EXPLANATIONS, "random_state": seed})
        gd = run_explanations(_registered(tmp_path / str(seed), spec, frame))["gesd"]["sex"]
        assert gd["status"] == "ok" and gd["value"] is not None
        assert {g["group"]: g["size"] for g in gd["groups"]} == {"F": 20, "M": 80}


def test_gesd_for_each_sensitive_attribute_keyed_by_it(tmp_path: Path) -> None:
    from fairmon.pipeline.compute import run_explanations
    from fairmon.pipeline.records import explanation_records

    frame = _frame(400)
    frame["race"] = np.random.default_rng(1).choice(["A", "B", "C"], len(frame))
    columns = {"features": ["a", "b"], "extra": ["sex", "race"], "sensitive": ["sex", "race"]}
    spec = _spec(tmp_path, columns=columns, explanations={**FAST_EXPLANATIONS, "openxai": {"enabled": False}})
    assert spec.gesd_attributes == ("sex", "race")
    out = run_explanations(_registered(tmp_path, spec, frame))
    assert sorted(out["gesd"]) == ["race", "sex"]
    assert {g["group"] for g in out["gesd"]["race"]["groups"]} == {"A", "B", "C"}
    recs = explanation_records(out)
    assert sorted(r.group for r in recs if r.metric == "gesd") == ["race", "sex"]
    assert {r.gesd_attribute for r in recs if r.metric == "gesd"} == {"race", "sex"}
    assert {r.group.split("=")[0] for r in recs if r.metric == "stability"} == {"race", "sex"}

    one = _spec(tmp_path / "one", columns=columns,
                explanations={**FAST_EXPLANATIONS, "gesd": {**FAST_EXPLANATIONS["gesd"], "attribute": "race"}})
    assert one.gesd_attributes == ("race",)


def test_window_and_feu_gesd_share_the_spec_settings(tmp_path: Path) -> None:
    """One mapping from the spec to gesd(): FEU's objective gets the window's settings, baseline and
    stratification included."""
    import inspect

    from fairmon.explain.gesd import gesd
    from fairmon.feu.settings import FEUSettings
    from fairmon.pipeline.compute import gesd_settings

    spec = _spec(tmp_path, explanations={"gesd": {"baseline": 0.5, "stratify": False}})
    kw = gesd_settings(_ctx(spec, _frame()))
    assert set(kw) <= set(inspect.signature(gesd).parameters)
    feu = FEUSettings.from_spec(spec.retraining, gesd=kw).gesd
    assert (feu["baseline"], feu["stratify"], feu["sample_size"]) == (0.5, False, spec.explanations.gesd.sample_size)
