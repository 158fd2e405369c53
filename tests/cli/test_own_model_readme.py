"""The README's "Monitor your own model" block, run verbatim on a model fairmon never saw being built.

A scikit-learn Pipeline (StandardScaler + OneHotEncoder in a ColumnTransformer + LogisticRegression)
is trained here on synthetic credit applications and saved with joblib; the README's commands then
register it, scaffold its spec, migrate a throw-away database and run the first daily window. The
window must succeed and fairmon's decisions must equal ``pipeline.predict`` on every row.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import own_model_setup as _credit
import pandas as pd
import pytest

from fairmon.config import load_spec
from fairmon.pipeline.artifacts import ArtifactStore

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def readme_block() -> str:
    """The bash block under the README's own-model marker, exactly as written."""
    text = (REPO / "README.md").read_text()
    m = re.search(r"<!-- own-model:[^>]*-->\s*```bash\n(.*?)```", text, re.S)
    assert m, "README.md lost its 'Monitor your own model' command block"
    return m.group(1)


def test_readme_names_the_four_steps() -> None:
    block = readme_block()
    steps = [line.split()[1] for line in block.splitlines() if line.startswith("fairmon ")]
    assert steps == ["model", "init", "db", "run"]


def test_readme_own_model_section_works_as_written(tmp_path: Path, fresh_database_url: str) -> None:
    reference = _credit.applications(600, seed=1)
    reference.to_csv(tmp_path / "reference.csv", index=False)
    pipeline = _credit.raw_pipeline(reference)
    joblib.dump(pipeline, tmp_path / "model.joblib")
    _credit.write_windows(tmp_path / "data", ["2026-01-01"], rows=300)

    env = {**os.environ, "DB": fresh_database_url, "PATH": f"{BIN}:{os.environ['PATH']}",
           "PYTHONPATH": str(REPO), "FAIRMON_HOME": str(tmp_path / "home")}
    env.pop("FAIRMON_DATABASE_URL", None)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_block()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "succeeded" in done.stdout, done.stdout[-3000:]
    assert "next:" in done.stdout and "fairmon run --monitor monitors/credit.yaml" in done.stdout

    spec = load_spec(tmp_path / "monitors" / "credit.yaml")
    assert spec.columns.features == tuple(_credit.FEATURES)
    assert spec.columns.extra == (_credit.SENSITIVE,)
    assert spec.rumie_attributes == (_credit.SENSITIVE,)
    window = pd.read_csv(tmp_path / "data" / "2026-01-01.csv")
    attempts = Path(spec.resolve_path(spec.execution.artifact_location)) / "credit" / "2026-01-01T000000Z"
    (attempt,) = [p.name for p in attempts.iterdir() if p.is_dir()]  # the run's one attempt (issue 15)
    store = ArtifactStore(spec.resolve_path(spec.execution.artifact_location), "credit", "2026-01-01T000000Z", attempt)
    favorable = store.get_arrays("predictions")["favorable"]
    expected = pipeline.predict(window[_credit.FEATURES])
    assert len(favorable) == len(window) == 300
    np.testing.assert_array_equal(favorable, expected.astype(float))
