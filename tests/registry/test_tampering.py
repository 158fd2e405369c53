"""A torch (or scikit-learn) artifact that passes its checksum but is not what fairmon wrote (issue 15
item 11): the metadata's sha256 was rewritten along with the file, so only the loader can notice. Every
such file is a SnapshotError naming the file and the model version, chained to the library's error."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import SnapshotError
from fairmon.registry import Model, Registry, SnapshotInfo, build_mlp
from fairmon.registry.registry import ERR_ARTIFACT_LOAD, ERR_TORCH_UNSAFE
from fairmon.schema import FeatureSchema


class _Touch:
    """Unpickling this would create ``path``: proof of whether the payload ran."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (self.path,))


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"x": rng.normal(size=40), "g": rng.choice(np.array(["a", "b"], dtype=object), size=40)})


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return Registry(str(tmp_path / "registry"))


def _torch_model(frame: pd.DataFrame) -> Model:
    schema = FeatureSchema.fit(frame)
    return Model(build_mlp(schema.n_encoded, (4,)), schema, framework="torch", device="cpu")


def _swap(registry: Registry, info: SnapshotInfo, blob: bytes) -> str:
    """Replace the artifact and rewrite its sha256 in metadata.json, as an attacker with write access would."""
    path = registry.artifact_path(info)
    with registry.fs.open(path, "wb") as fh:
        fh.write(blob)
    meta = f"{path.rsplit('/', 1)[0]}/metadata.json"
    with registry.fs.open(meta, "rb") as fh:
        data = json.loads(fh.read())
    data["sha256"] = hashlib.sha256(blob).hexdigest()
    with registry.fs.open(meta, "wb") as fh:
        fh.write(json.dumps(data).encode())
    return path


def _torch_bytes(obj: object) -> bytes:
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_torch_artifact_with_code_is_refused_naming_the_file(registry, frame, tmp_path) -> None:  # type: ignore[no-untyped-def]
    info = registry.register(_torch_model(frame), name="mlp")
    marker = tmp_path / "payload-ran"
    state = {k: v for k, v in _torch_model(frame).estimator.state_dict().items()}
    path = _swap(registry, info, _torch_bytes({"state_dict": state, "extra": _Touch(marker)}))
    with pytest.raises(SnapshotError) as ei:
        registry.load("mlp")
    msg = str(ei.value)
    assert msg.startswith(ERR_TORCH_UNSAFE.split("{path")[0].format(name="mlp", version="v1"))
    assert path in msg  # the file is named
    assert "unsupported global getattr" in msg  # what was refused (how Path.touch pickles)
    assert "weights_only" not in msg  # no advice to switch the guard off
    assert "\n" not in msg and len(msg) < 600
    assert isinstance(ei.value.__cause__, pickle.UnpicklingError)
    assert not marker.exists()  # refused before the payload ran


@pytest.mark.parametrize(
    ("case", "detail"),
    [
        ("corrupt_zip", "PytorchStreamReader"),
        ("truncated", None),
        ("no_state_dict", "no 'state_dict'"),
        ("other_architecture", "size mismatch"),
    ],
)
def test_torch_artifact_that_cannot_be_loaded_is_a_snapshot_error(registry, frame, case, detail) -> None:  # type: ignore[no-untyped-def]
    info = registry.register(_torch_model(frame), name="mlp")
    good = _torch_bytes({"state_dict": _torch_model(frame).estimator.state_dict()})
    blobs = {
        "corrupt_zip": b"PK\x03\x04" + b"\x00" * 64,
        "truncated": good[: len(good) // 2],
        "no_state_dict": _torch_bytes({"weights": {}}),
        "other_architecture": _torch_bytes({"state_dict": build_mlp(7, (3,)).state_dict()}),
    }
    path = _swap(registry, info, blobs[case])
    with pytest.raises(SnapshotError) as ei:
        registry.load("mlp")
    msg = str(ei.value)
    prefix = ERR_ARTIFACT_LOAD.split("{detail}")[0].format(name="mlp", version="v1", path=path, framework="torch")
    assert msg.startswith(prefix), msg
    assert detail is None or detail in msg
    assert "\n" not in msg and len(msg) < len(prefix) + 201
    assert ei.value.__cause__ is not None and not isinstance(ei.value.__cause__, SnapshotError)


def test_sklearn_artifact_that_cannot_be_unpickled_is_a_snapshot_error(registry, frame) -> None:  # type: ignore[no-untyped-def]
    from sklearn.linear_model import LogisticRegression

    schema = FeatureSchema.fit(frame)
    est = LogisticRegression().fit(schema.transform(frame), (frame["x"] > 0).astype(int))
    info = registry.register(Model(est, schema, framework="sklearn"), name="credit")
    with registry.fs.open(registry.artifact_path(info), "rb") as fh:
        good = fh.read()
    path = _swap(registry, info, good[: len(good) // 3])
    with pytest.raises(SnapshotError) as ei:
        registry.load("credit")
    prefix = ERR_ARTIFACT_LOAD.split("{detail}")[0].format(name="credit", version="v1", path=path,
                                                           framework="sklearn")
    assert str(ei.value).startswith(prefix)
