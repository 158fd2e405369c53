"""`fairmon run` / `fairmon feu` readable output: FEU's verdict and front are printed, step lines are not
cut mid-word without saying so (found trying `fairmon feu` as a new user: only step timings, and JSON
cut at 100 characters)."""

from __future__ import annotations

from typing import Any

import pytest

from fairmon.cli.run import print_outcome


class _Outcome:
    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def to_dict(self) -> dict[str, Any]:
        return self.d


def test_feu_verdict_and_front_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    front = [{"auc": 0.713, "balanced_accuracy": 0.644, "selection_rate": 0.767, "dp": 0.003, "gesd": 0.009,
              "feasible": True, "selected": True, "registry_version": "4"},
             {"auc": 0.7, "balanced_accuracy": 0.6, "selection_rate": 0.95, "dp": 0.0, "gesd": None,
              "feasible": False, "selected": False, "registry_version": None}]
    o = _Outcome({"monitor": "demo", "window": {"start": "2026-01-08", "end": "2026-01-09"}, "status": "succeeded",
                  "seconds": 40.0, "steps": {
                      "feu": {"status": "done", "candidates": 2, "seconds": 38.0, "recommendation": "recommended #1",
                              "front": front},
                      "followup": {"status": "queued", "seconds": 1.0, "note": "x" * 200}}})
    print_outcome(o, as_json=False)
    out = capsys.readouterr().out
    assert "FEU: recommended #1" in out
    assert "#1: AUC 0.713, bal. acc. 0.644, positive rate 0.767, DP 0.003, GESD 0.009 (test)  <- recommended [4]" in out
    assert "#2: AUC 0.700, bal. acc. 0.600, positive rate 0.950, DP 0.000, GESD n/a (test)  (outside the constraints)" \
        in out
    followup = next(line for line in out.splitlines() if line.strip().startswith("followup"))
    assert followup.endswith("…") and '"front"' not in out
