"""MLflow Model Registry as a model source, against a real local ``mlflow server`` (issue 20 req 8).

The server runs from its own virtualenv (``scripts/ensure-mlflow.sh``: mlflow's pins conflict with
Airflow's), with a SQLite backend and the artifact proxy on 127.0.0.1. A team's scikit-learn pipeline
is logged the way teams do it (``mlflow.sklearn.log_model`` in the server's venv, so fairmon's process
never imports mlflow) and aliased ``production``; fairmon then monitors ``models:/credit@production``
end to end with ``fairmon run``, refuses the version once its artifact is overwritten in MLflow's
store, and pushes a candidate back as a new version with the candidate tag and alias.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fairmon.config import load_spec
from fairmon.errors import SnapshotError
from fairmon.pipeline.artifacts import ArtifactStore
from fairmon.registry.mlflow import CANDIDATE_ALIAS, TAG_DIGEST, TAG_STATUS, MlflowRegistry

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tests" / "cli"))
import own_model_setup as _credit  # noqa: E402 - the onboarding tests' synthetic credit model

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

MLFLOW_VENV = Path(os.environ.get("FAIRMON_TEST_MLFLOW_VENV", REPO / ".venv-mlflow"))

LOG_MODEL = textwrap.dedent("""
    import sys
    import mlflow, pandas as pd
    sys.path.insert(0, sys.argv[3])
    import own_model_setup as credit
    mlflow.set_tracking_uri(sys.argv[1])
    reference = pd.read_csv(sys.argv[2])
    pipeline = credit.raw_pipeline(reference)
    with mlflow.start_run():
        mlflow.sklearn.log_model(pipeline, name="model", input_example=reference[credit.FEATURES].head(5),
                                 registered_model_name="credit")
    mlflow.MlflowClient().set_registered_model_alias("credit", "production", 1)
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(http base URL, artifact root) of a fresh local MLflow tracking server."""
    exe = MLFLOW_VENV / "bin" / "mlflow"
    if not exe.exists():
        if os.environ.get("CI"):
            pytest.fail(f"no MLflow server at {exe}: run scripts/ensure-mlflow.sh")
        pytest.skip(f"no MLflow server at {exe} (scripts/ensure-mlflow.sh installs it)")
    root = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    log = (root / "server.log").open("w")
    proc = subprocess.Popen(
        [str(exe), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--backend-store-uri", f"sqlite:///{root}/mlflow.db", "--artifacts-destination", str(root / "artifacts")],
        stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("MLflow server did not start: " + (root / "server.log").read_text()[-2000:])
        time.sleep(1)
    yield base, root / "artifacts"
    proc.terminate()
    proc.wait(timeout=30)


def _get(base: str, endpoint: str) -> dict:  # type: ignore[type-arg]
    with urllib.request.urlopen(f"{base}/api/2.0/mlflow/{endpoint}", timeout=30) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    env.pop("FAIRMON_DATABASE_URL", None)
    return subprocess.run([str(BIN / "fairmon"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def test_an_mlflow_model_is_monitored_verified_and_gets_candidates(
        tmp_path: Path, mlflow_server: tuple[str, Path], fresh_database_url: str) -> None:
    base, artifacts = mlflow_server
    reference = _credit.applications(600, seed=1)
    reference.to_csv(tmp_path / "reference.csv", index=False)
    logged = subprocess.run([str(MLFLOW_VENV / "bin" / "python"), "-c", LOG_MODEL, base,
                             str(tmp_path / "reference.csv"), str(REPO / "tests" / "cli")],
                            capture_output=True, text=True, timeout=900)
    assert logged.returncode == 0, logged.stderr[-3000:]
    _credit.write_windows(tmp_path / "data", ["2026-01-01", "2026-01-02"], rows=300)

    # the README's own-model scaffold, reading the model's features from MLflow
    uri = base.replace("http://", "mlflow+http://")
    init = _run(["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex",
                 "--model", "credit", "--registry", uri, "--data", "data/{start:%Y-%m-%d}.csv",
                 "--start-date", "2026-01-01", "--out", "monitors/credit.yaml"], tmp_path)
    assert init.returncode == 0, init.stdout + init.stderr
    spec_file = tmp_path / "monitors" / "credit.yaml"
    doc = yaml.safe_load(spec_file.read_text())
    assert doc["model"] == {"registry_uri": uri, "name": "credit", "version": "latest",
                            "reference": "../reference.csv", "label": "approved"}
    assert doc["columns"]["features"] == _credit.FEATURES
    doc["model"].update(version="@production", cache="../cache")
    spec_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _run(["db", "upgrade", "--db", fresh_database_url], tmp_path).returncode == 0

    done = _run(["run", "--monitor", "monitors/credit.yaml", "--logical-date", "2026-01-01",
                 "--db", fresh_database_url], tmp_path)
    assert done.returncode == 0 and "succeeded" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    spec = load_spec(spec_file)
    attempts = Path(spec.resolve_path(spec.execution.artifact_location)) / "credit" / "2026-01-01T000000Z"
    (attempt,) = [p.name for p in attempts.iterdir() if p.is_dir()]  # the run's one attempt (issue 15)
    store = ArtifactStore(spec.resolve_path(spec.execution.artifact_location), "credit", "2026-01-01T000000Z", attempt)
    favorable = store.get_arrays("predictions")["favorable"]
    window = pd.read_csv(tmp_path / "data" / "2026-01-01.csv")
    expected = _credit.raw_pipeline(reference).predict(window[_credit.FEATURES])  # same data, same fit
    np.testing.assert_array_equal(favorable, expected.astype(float))

    mv = _get(base, "model-versions/get?name=credit&version=1")["model_version"]
    digests = json.loads({t["key"]: t["value"] for t in mv["tags"]}[TAG_DIGEST])
    assert "model.skops" in digests and "MLmodel" in digests  # recorded at the first pull

    # `fairmon model register models:/...` copies the verified, checked version into a folder registry
    copied = _run(["model", "register", "models:/credit@production", "--mlflow-uri", uri, "--name", "credit-copy",
                   "--reference", "reference.csv", "--label", "approved", "--registry", "folder-registry"], tmp_path)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "registered credit-copy:v1 (production)" in copied.stdout
    assert "agree with the model's own on 100.0% of the 600 reference rows" in copied.stdout

    # a model file overwritten in MLflow's store is refused by a worker that has not cached it yet
    (skops_file,) = artifacts.rglob("model.skops")
    skops_file.write_bytes(skops_file.read_bytes() + b"\0")
    doc["model"]["cache"] = "../cache-second-worker"
    spec_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    refused = _run(["run", "--monitor", "monitors/credit.yaml", "--logical-date", "2026-01-02",
                    "--db", fresh_database_url], tmp_path)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out[-3000:]
    assert "changed since fairmon first pulled it (model.skops changed)" in out, out[-3000:]

    # FEU's candidate goes back to MLflow as a new version, tagged and aliased, never production
    registry = MlflowRegistry(doc["model"]["registry_uri"], cache_uri=str(tmp_path / "cache"),
                              reference=str(tmp_path / "reference.csv"), label="approved")
    production = registry.load("credit", "v1")
    candidate = registry.register(production, name="credit", status="candidate",
                                  metrics={"source": "feu", "feu_window": "2026-01-01"})
    assert candidate.version == "v2" and candidate.status == "candidate"
    mv2 = _get(base, "model-versions/get?name=credit&version=2")["model_version"]
    assert {t["key"]: t["value"] for t in mv2["tags"]}[TAG_STATUS] == "candidate"
    assert CANDIDATE_ALIAS in mv2["aliases"] and "production" not in mv2["aliases"]
    assert registry.resolve("credit", "latest").version == "v1"
    fresh = MlflowRegistry(doc["model"]["registry_uri"], cache_uri=str(tmp_path / "cache-third"))
    again = fresh.resolve("credit", "v2")  # a fairmon snapshot: imported without a reference
    assert again.metrics["feu_window"] == "2026-01-01" and again.sha256 == candidate.sha256
    np.testing.assert_array_equal(fresh.load("credit", "v2").predict(window[_credit.FEATURES]), expected)
    with pytest.raises(SnapshotError, match=r"model\.skops changed"):
        fresh.resolve("credit", "v1")  # the library API refuses the overwritten version too
