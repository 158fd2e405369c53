"""Public surface of fairmon.registry / fairmon.datasets, and that importing them stays light."""

from __future__ import annotations

import subprocess
import sys

import fairmon.datasets
import fairmon.registry


def test_public_names() -> None:
    assert set(fairmon.registry.__all__) == {"Model", "build_mlp", "Registry", "SnapshotInfo"}
    assert {"load_adult", "load_german", "load_compas", "load_gesd", "data_dir", "generate_stream"} <= set(
        fairmon.datasets.__all__
    )
    for name in fairmon.datasets.__all__ + fairmon.registry.__all__:
        assert hasattr(fairmon.datasets, name) or hasattr(fairmon.registry, name), name


def test_import_is_light() -> None:
    code = (
        "import sys, fairmon.registry, fairmon.datasets, fairmon.datasets._stream;"
        "print(','.join(m for m in ('torch','sklearn','shap','lime','fsspec','joblib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
