"""Issue 21 "Defaults": a minimal spec (only the required sections) over a newcomer's scikit-learn
pipeline with 25 inputs and a 2,000-row window runs its first window to success with every default.

The speed target (about a minute) lives in ``benchmarks/explain_cost``, not here: this test asserts
that the window succeeds with its explanation results stored, and that the explanation step ran at
the spec defaults (the cost model's count of model rows, not a timing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import joblib
import own_model_setup as credit
import pytest

from fairmon.config import ExplanationsSpec, load_spec
from fairmon.explain.cost import estimate

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_minimal_spec_first_window_succeeds_over_a_25_feature_pipeline(tmp_path: Path, fresh_database_url: str) -> None:
    reference = credit.wide_applications(2000, seed=1)
    reference.to_csv(tmp_path / "reference.csv", index=False)
    joblib.dump(credit.hgb_pipeline(reference), tmp_path / "model.joblib")
    (tmp_path / "data").mkdir()
    credit.wide_applications(2000, seed=100).to_csv(tmp_path / "data" / "2026-01-01.csv", index=False)
    (tmp_path / "credit.yaml").write_text(credit.MINIMAL_SPEC.format(features=list(credit.WIDE_FEATURES)))
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAIRMON_HOME": str(tmp_path / "home")}
    env.pop("FAIRMON_DATABASE_URL", None)

    def fairmon(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(BIN / "fairmon"), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1800)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done

    fairmon("model", "register", "model.joblib", "--name", "credit", "--reference", "reference.csv", "--label",
            "approved", "--features", *credit.WIDE_FEATURES)
    check = fairmon("spec", "check", "credit.yaml")
    assert "cost   explanations" in check.stdout and "CPU-s per model row measured" in check.stdout
    fairmon("db", "upgrade", "--db", fresh_database_url)
    done = fairmon("run", "--monitor", "credit.yaml", "--logical-date", "2026-01-01", "--db", fresh_database_url)
    assert "succeeded" in done.stdout.splitlines()[0], done.stdout[-3000:]
    explain_line = next(line for line in done.stdout.splitlines() if line.strip().startswith("explain "))
    assert '"enabled": true' in explain_line and '"rows": 0' not in explain_line, explain_line
    spec = load_spec(tmp_path / "credit.yaml")
    assert spec.explanations == ExplanationsSpec()  # the minimal spec ran at every default
    cost = estimate(spec.explanations, n_rows=2000, n_attributes=1, seconds_per_row=1.0)
    # the defaults' size in model rows (monitors/README.md, "Explanation cost"): the explain step, then the
    # diagnose step's attribution gaps (two groups of 2 x 200 rows, KernelSHAP 96 x 20 each)
    assert cost.evaluations_of("explain") < 2_000_000 and cost.evaluations_of("diagnose") == 2 * 400 * 96 * 20
