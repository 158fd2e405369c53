"""The stream on disk: one CSV per day, a reference file and a manifest, and reading a day back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairmon.datasets._deploy import DeployedModels
from fairmon.datasets._stream_spec import (
    CATEGORICAL_COLUMNS,
    FEATURE_COLUMNS,
    TIME_COLUMN,
    SyntheticStream,
)

__all__ = ["write_partitions", "read_partition"]


# ---------------------------------------------------------------------- files
def write_partitions(
    stream: SyntheticStream,
    folder: str | Path,
    *,
    deployed: DeployedModels | None = None,
    reference_windows: int = 2,
    decision_column: str = "decision",
    score_column: str = "score",
) -> dict[str, Any]:
    """Write one CSV per day (``{folder}/{YYYY-MM-DD}.csv``) plus reference data and a manifest.

    With ``deployed`` the rows also carry the logged ``decision`` (0/1) and ``score`` (P(class 1)) of
    the model version serving that window. ``{folder}/reference.csv`` holds the first
    ``reference_windows`` windows (the production model's training data) for validation suites, and
    ``{folder}/stream.json`` the planted rule, column roles and per-file row counts. Returns the
    manifest. A file-pattern data source reads ``{folder}/{start:%Y-%m-%d}.csv``.

    Examples
    --------
    >>> import tempfile
    >>> from fairmon.datasets import generate_stream
    >>> s = generate_stream(n_windows=2, rows_per_window=100, drift_window=1, train_windows=1)
    >>> manifest = write_partitions(s, tempfile.mkdtemp(), reference_windows=1)
    >>> sorted(manifest["files"]) == [w.day for w in s.windows], manifest["planted_rule"] == s.planted_rule
    (True, True)
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict[str, Any]] = {}
    for w in stream.windows:
        frame = w.frame.copy()
        if deployed is not None:
            model = deployed.model_for_window(w.index)
            proba = model.predict_proba(frame[list(FEATURE_COLUMNS)])[:, 1]
            frame[decision_column] = (proba >= model.threshold).astype(np.int64)
            frame[score_column] = np.round(proba, 6)
        path = out / f"{w.day}.csv"
        frame.to_csv(path, index=False, date_format="%Y-%m-%dT%H:%M:%S")
        files[w.day] = {"path": str(path), "rows": len(frame), "window": w.index}
    ref = stream.frame(list(range(min(reference_windows, len(stream.windows))))).drop(columns=["window"])
    ref_path = out / "reference.csv"
    ref.to_csv(ref_path, index=False, date_format="%Y-%m-%dT%H:%M:%S")
    manifest: dict[str, Any] = {
        "pattern": str(out / "{start:%Y-%m-%d}.csv"),
        "reference": str(ref_path),
        "planted_rule": stream.planted_rule,
        "planted_query": stream.planted_query,
        "planted_attributes": list(stream.planted_attributes),
        "decoy_columns": list(stream.decoy_columns),
        "feature_columns": list(stream.feature_columns),
        "sensitive_columns": list(stream.sensitive_columns),
        "label_column": stream.label_column,
        "decision_column": decision_column if deployed is not None else None,
        "score_column": score_column if deployed is not None else None,
        "drift_window": stream.drift_window,
        "files": files,
    }
    if deployed is not None:
        manifest["model"] = {
            "registry_uri": deployed.registry_uri,
            "name": deployed.name,
            "window_versions": deployed.window_versions,
            "dscore_before": deployed.dscore_before,
            "dscore_after": deployed.dscore_after,
        }
    (out / "stream.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def read_partition(path: str | Path) -> pd.DataFrame:
    """Read a partition written by :func:`write_partitions` with the stream's dtypes restored.

    Examples
    --------
    >>> import tempfile
    >>> from fairmon.datasets import generate_stream
    >>> s = generate_stream(n_windows=2, rows_per_window=100, drift_window=1, train_windows=1)
    >>> files = write_partitions(s, tempfile.mkdtemp())["files"]
    >>> frame = read_partition(files[s.windows[0].day]["path"])
    >>> len(frame), str(frame["event_time"].dtype).startswith("datetime64"), frame["region"].dtype == object
    (100, True, True)
    """
    frame = pd.read_csv(path, parse_dates=[TIME_COLUMN])
    for c in CATEGORICAL_COLUMNS:
        if c in frame.columns:
            frame[c] = frame[c].astype(object)
    return frame
