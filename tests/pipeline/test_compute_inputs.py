"""What the heavy steps are given: RUMIE's searched columns, GESD's attributes and sampling, and how
an undefined explanation disparity is recorded (NULL with a status, never zero, never a failed window)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairmon.config import MonitorSpec
from fairmon.pipeline.context import RunContext
from fairmon.pipeline.window import Window


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
def test_rumie_searches_features_and_extra_by_default(tmp_path: Path) -> None:
    from fairmon.pipeline.steps import _rumie_frame

    spec = _spec(tmp_path)
    assert spec.rumie_attributes == ("a", "b", "sex")
    assert list(_rumie_frame(_ctx(spec, _frame()))) == ["a", "b", "sex"]  # the withheld 'sex' is searched


def test_rumie_attributes_in_the_spec_win(tmp_path: Path) -> None:
    from fairmon.pipeline.steps import _rumie_frame

    spec = _spec(tmp_path, rumie={"attributes": ["b"]})
    assert list(_rumie_frame(_ctx(spec, _frame()))) == ["b"]
