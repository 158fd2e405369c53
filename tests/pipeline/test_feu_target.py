"""FEU retrains for what drifted (issue 16 req 5, "DP or the monitored metric that drifted"): the RUMIE
group the window's alert is about, drawn by its rules on the training data; the declared attribute
otherwise, with the reason recorded (found trying the demo: its alert was about region = north |
age <= 30 and FEU retrained for sex, whose DP was already 0.005)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairmon.config import MonitorSpec
from fairmon.pipeline.feu_target import MIN_SIDE_ROWS, TARGET_COLUMN, feu_target
from fairmon.pipeline.table import A_DRIFT, A_RUMIE

RULES = [[{"column": "region", "op": "=", "value": "north"}], [{"column": "age", "op": "<=", "value": 30.0}]]


class _Artifacts:
    def __init__(self, blobs: dict[str, Any]) -> None:
        self.blobs = blobs

    def exists(self, name: str) -> bool:
        return name in self.blobs

    def get_json(self, name: str) -> Any:
        return self.blobs[name]


class _Ctx:
    def __init__(self, spec: MonitorSpec, blobs: dict[str, Any]) -> None:
        self.spec, self.artifacts = spec, _Artifacts(blobs)


def _spec(**retraining: Any) -> MonitorSpec:
    return MonitorSpec.model_validate({
        "spec_version": 1, "identity": {"name": "m"}, "model": {"registry_uri": "r"},
        "data": {"files": {"pattern": "{start:%Y-%m-%d}.csv"}},
        "columns": {"features": ["age", "region", "sex"], "sensitive": ["sex"], "label": "repaid"},
        "schedule": {"start_date": "2026-01-01"},
        "retraining": {"enabled": True, "training_data": {"path": "train.csv"}, **retraining},
    })


def _training(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(18, 70, n), "region": rng.choice(["north", "south", "east"], n),
                         "sex": rng.choice(["f", "m"], n), "repaid": rng.integers(0, 2, n)})


def _blobs(kind: str = "rumie_rise", metric: str = "rumie_honest_dscore", rules: Any = RULES) -> dict[str, Any]:
    return {A_DRIFT: {"findings": [{"kind": kind, "metric": metric, "status": "open", "notify": True}]},
            A_RUMIE: {"evidence": {"rule_conditions": rules}}}


def test_a_rumie_alert_makes_feu_retrain_for_its_group() -> None:
    data = _training()
    column, frame, said = feu_target(_Ctx(_spec(), _blobs()), data)  # type: ignore[arg-type]
    inside = (data["region"] == "north") | (data["age"] <= 30)
    assert column == TARGET_COLUMN and (frame[column] == "inside").to_numpy().tolist() == inside.tolist()
    assert said == {"kind": "rumie_group", "rules": "region = north OR age <= 30", "inside_rows": int(inside.sum()),
                    "outside_rows": int((~inside).sum()), "finding": {"kind": "rumie_rise", "metric": "rumie_honest_dscore"},
                    "model_inputs": ["age", "region"]}  # the follow-up says the rules use model inputs
    assert list(data.columns) == ["age", "region", "sex", "repaid"]  # the caller's frame is not changed


@pytest.mark.parametrize(("spec_kw", "blobs", "reason"), [
    ({"target": "attribute"}, _blobs(), None),
    ({}, _blobs(kind="ci_outside_range", metric="dp_ratio"), "the window's alert is not about a RUMIE group"),
    ({}, {}, "the window's alert is not about a RUMIE group"),  # FEU requested on demand, no drift
    ({"group_thresholds": True}, _blobs(), "group_thresholds is on"),
    ({}, _blobs(rules=[[{"column": "branch", "op": "=", "value": "b1"}]]), "lacks the rules' column(s) ['branch']"),
    ({}, _blobs(rules=[[{"column": "age", "op": "<=", "value": 18.0}]]), f"(at least {MIN_SIDE_ROWS} each)"),
    # a reviewer's case: a rule whose values the training data holds differently draws a smaller group
    ({}, _blobs(rules=[[{"column": "region", "op": "=", "value": "North"}], [{"column": "age", "op": "<=", "value": 30.0}]]),
     "the rule 'region = North' matches no training row"),
    ({}, {**_blobs(), A_RUMIE: {"evidence": {"rule_conditions": RULES, "fraction": 0.2}}},
     "of the training rows against 20% of the window's"),
    ({}, {A_DRIFT: _blobs()[A_DRIFT]}, "no rules of the group in this window's RUMIE artifact"),
])
def test_otherwise_the_declared_attribute_and_why(spec_kw: dict[str, Any], blobs: dict[str, Any],
                                                   reason: str | None) -> None:
    data = _training()
    column, frame, said = feu_target(_Ctx(_spec(**spec_kw), blobs), data)  # type: ignore[arg-type]
    assert column == "sex" and frame is data and said["kind"] == "attribute" and said["attribute"] == "sex"
    assert said.get("reason") is None if reason is None else reason in said["reason"]


def test_a_training_column_with_the_targets_name_is_kept() -> None:
    data = _training().assign(**{TARGET_COLUMN: 7})
    column, frame, said = feu_target(_Ctx(_spec(), _blobs()), data)  # type: ignore[arg-type]
    assert column == "sex" and frame is data and f"already has a column {TARGET_COLUMN!r}" in said["reason"]
    assert (data[TARGET_COLUMN] == 7).all()
