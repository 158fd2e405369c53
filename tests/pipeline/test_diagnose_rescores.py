"""The diagnose step's "model or data?" (issue 19) without a whole window: fired findings only, one
computation per series, the verdict, and an earlier version that cannot be loaded (said, not guessed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairmon.config import load_spec
from fairmon.drift.findings import Finding
from fairmon.errors import SnapshotError
from fairmon.pipeline import diagnose
from fairmon.pipeline.records import RumieOutput
from fairmon.results import evidence_from_dict
from fairmon.window import Window

REPO = Path(__file__).resolve().parents[2]
WINDOW = Window("demo", datetime(2026, 1, 8, tzinfo=UTC), datetime(2026, 1, 9, tzinfo=UTC))


@dataclass
class _Artifacts:
    data: dict[str, Any] = field(default_factory=dict)

    def get_json(self, name: str) -> Any:
        return self.data[name]

    def get_frame(self, name: str) -> pd.DataFrame:
        return self.data[name]

    def get_arrays(self, name: str) -> dict[str, np.ndarray]:
        return self.data[name]

    def exists(self, name: str) -> bool:
        return name in self.data


class _OldModel:
    """An earlier version that treats everyone alike (P(approve) = 0.6 for every row, seeded draws)."""

    classes = (0, 1)
    threshold = 0.5

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        approve = (np.random.default_rng(7).random(len(X)) < 0.6).astype(float)  # its decisions, as P(class 1)
        return np.column_stack([1.0 - approve, approve])


def _finding(kind: str, status: str = "open", metric: str = "rumie_honest_dscore", group: str = "",
             baseline: float | None = None) -> Finding:
    return Finding(kind=kind, metric=metric, group=group, severity="warning", value=0.2, monitor="demo",
                   window_start=WINDOW.start, message="", status=status, baseline=baseline)  # type: ignore[arg-type]


@pytest.fixture
def ctx(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"age": rng.integers(18, 70, n), "sex": rng.choice(["female", "male"], n)})
    spec = load_spec(REPO / "monitors" / "demo.yaml")
    for col in spec.columns.features:  # the old model ignores them; scoring selects the model's columns
        if col not in frame:
            frame[col] = 0.0
    young = frame["age"].to_numpy() <= 30
    fav_new = (rng.random(n) < np.where(young, 0.35, 0.65)).astype(float)
    ev = evidence_from_dict({"method": "ie-dt", "status": "ok", "honest_dscore": 0.2, "rule": "age <= 30",
                             "rules": ["age <= 30"],
                             "rule_conditions": [[{"column": "age", "op": "<=", "value": 30}]]})
    art = _Artifacts({"snapshot": {"name": "demo", "version": "v2"}, "data": frame,
                      "predictions": {"favorable": fav_new, "label_favorable": np.full(n, np.nan)}})
    monkeypatch.setattr(diagnose, "previous_version", lambda c: SimpleNamespace(name="demo", version="v1"))
    monkeypatch.setattr(diagnose, "read_rumie", lambda c: RumieOutput(ev))
    monkeypatch.setattr(diagnose, "load_model", lambda c, name, version: _OldModel())
    return SimpleNamespace(spec=spec, window=WINDOW, artifacts=art, device="cpu", monitor="demo")


def test_fired_findings_are_rescored_once_per_series(ctx: SimpleNamespace) -> None:
    findings = [_finding("ci_outside_range"), _finding("rumie_dscore", status="ongoing", baseline=0.08),
                _finding("rumie_rise", status="pending"), _finding("gesd_rise", metric="gesd", group="sex"),
                _finding("ci_outside_range", metric="dp_difference", group="sex", status="resolved")]
    out, why = diagnose.rescores(ctx, findings)  # type: ignore[arg-type]
    assert why == ""
    by = {r.kind: r for r in out}
    assert set(by) == {"ci_outside_range", "rumie_dscore", "gesd_rise"}  # pending / resolved did not fire
    rng, thr = by["ci_outside_range"], by["rumie_dscore"]
    assert rng.value_new == thr.value_new and rng.value_old == thr.value_old  # one computation, two rows
    assert rng.value_new == pytest.approx(0.3, abs=0.05) and abs(rng.value_old) < 0.05
    assert rng.verdict == thr.verdict == "model" and (rng.old_version, rng.new_version) == ("v1", "v2")
    assert thr.baseline == 0.08 and rng.baseline is None
    assert by["gesd_rise"].status == "skipped" and "not rescored" in by["gesd_rise"].reason


def test_nothing_fired_or_no_earlier_version(ctx: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    assert diagnose.rescores(ctx, [_finding("rumie_rise", status="pending")]) == ([], "no finding fired")  # type: ignore[arg-type]
    monkeypatch.setattr(diagnose, "previous_version", lambda c: None)
    out, why = diagnose.rescores(ctx, [_finding("ci_outside_range")])  # type: ignore[arg-type]
    assert out == [] and "no earlier production version" in why


def test_an_earlier_version_that_cannot_load_is_an_error_row(ctx: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: Any, **k: Any) -> Any:
        raise SnapshotError("checksum mismatch for demo:v1")

    monkeypatch.setattr(diagnose, "load_model", broken)
    out, _ = diagnose.rescores(ctx, [_finding("ci_outside_range")])  # type: ignore[arg-type]
    assert [(r.status, r.value_old, r.verdict) for r in out] == [("error", None, "undetermined")]
    assert "checksum mismatch" in out[0].reason
