"""Model registry: round trips (sklearn, torch), checksums, schema checks, latest vs pinned, fsspec."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairmon.errors import SnapshotError
from fairmon.registry import Model, Registry, SnapshotInfo, build_mlp
from fairmon.registry.registry import ERR_CHECKSUM
from fairmon.schema import FeatureSchema


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "z": rng.uniform(0, 10, size=n),
            "color": rng.choice(np.array(["red", "green", "blue"], dtype=object), size=n),
        }
    )
    y = ((df["x"] + 0.2 * df["z"] + (df["color"] == "red") * 1.0 + rng.normal(0, 0.5, n)) > 1.5).astype(int)
    return df, y.to_numpy()


@pytest.fixture(scope="module")
def sk_model(data) -> Model:
    from sklearn.linear_model import LogisticRegression

    df, y = data
    schema = FeatureSchema.fit(df)
    return Model(LogisticRegression().fit(schema.transform(df), y), schema, framework="sklearn")


@pytest.fixture(scope="module")
def torch_model(data) -> Model:
    import torch

    df, y = data
    schema = FeatureSchema.fit(df)
    torch.manual_seed(0)
    net = build_mlp(schema.n_encoded, (8, 4))
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    Z = torch.as_tensor(schema.transform(df), dtype=torch.float32)
    t = torch.as_tensor(y.copy(), dtype=torch.float32)
    for _ in range(50):
        opt.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(net(Z), t).backward()
        opt.step()
    return Model(net, schema, framework="torch", threshold=0.4, device="cpu")


@pytest.fixture(params=["local", "memory"])
def registry(request, tmp_path) -> Registry:
    if request.param == "local":
        return Registry(str(tmp_path / "registry"))
    return Registry(f"memory://reg-{tmp_path.name}")


def test_sklearn_round_trip(registry: Registry, sk_model: Model, data) -> None:
    df, _ = data
    info = registry.register(sk_model, name="credit", metrics={"auc": np.float64(0.8)})
    assert isinstance(info, SnapshotInfo)
    assert info.version == "v1" and info.status == "production" and info.framework == "sklearn"
    assert len(info.sha256) == 64 and info.metrics == {"auc": 0.8}
    assert info.created.endswith("+00:00")
    loaded = registry.load("credit", expected_schema=sk_model.schema)
    np.testing.assert_array_equal(loaded.predict_proba(df), sk_model.predict_proba(df))
    assert loaded.schema == sk_model.schema and loaded.input == "encoded"


def test_torch_round_trip(registry: Registry, torch_model: Model, data) -> None:
    df, _ = data
    info = registry.register(torch_model, name="mlp")
    assert info.artifact == "model.pt"
    assert info.module_config == {"builder": "build_mlp", "n_inputs": 5, "hidden": [8, 4]}
    loaded = registry.load("mlp", "v1", device="cpu")
    assert loaded.framework == "torch" and loaded.threshold == 0.4
    np.testing.assert_array_equal(loaded.predict_proba(df), torch_model.predict_proba(df))
    np.testing.assert_array_equal(loaded.predict(df), torch_model.predict(df))


def test_torch_artifact_holds_only_tensors(registry: Registry, torch_model: Model) -> None:
    import io

    import torch

    info = registry.register(torch_model, name="mlp")
    with registry.fs.open(registry.artifact_path(info), "rb") as fh:
        payload = torch.load(io.BytesIO(fh.read()), weights_only=True)
    assert set(payload) == {"state_dict"}


def test_tampered_artifact_refused(registry: Registry, sk_model: Model, data) -> None:
    from sklearn.linear_model import LogisticRegression

    df, y = data
    info = registry.register(sk_model, name="credit")
    path = registry.artifact_path(info)
    other = Model(
        LogisticRegression(C=0.01).fit(sk_model.schema.transform(df), 1 - y),
        sk_model.schema,
        framework="sklearn",
    )
    other_info = registry.register(other, name="other")
    with registry.fs.open(registry.artifact_path(other_info), "rb") as fh:
        swapped = fh.read()
    with registry.fs.open(path, "wb") as fh:
        fh.write(swapped)
    with pytest.raises(SnapshotError) as err:
        registry.load("credit")
    msg = str(err.value)
    assert msg.startswith(ERR_CHECKSUM.split("{")[0])
    assert path in msg and info.sha256 in msg and other_info.sha256 in msg


def test_schema_mismatch_names_the_difference(registry: Registry, sk_model: Model, data) -> None:
    df, _ = data
    registry.register(sk_model, name="credit")
    changed = df.copy()
    changed.loc[0, "color"] = "purple"
    with pytest.raises(SnapshotError, match=r"column 'color': categories .*purple"):
        registry.load("credit", expected_schema=FeatureSchema.fit(changed))
    with pytest.raises(SnapshotError) as err:
        registry.load("credit", expected_schema=FeatureSchema.fit(df[["x", "color"]].assign(w=1.0)))
    assert "column 'w' only in the first schema" in str(err.value)
    assert "column 'z' only in the second schema" in str(err.value)
    assert "first = expected, second = snapshot" in str(err.value)


def test_latest_vs_pinned_and_candidates(registry: Registry, sk_model: Model) -> None:
    v1 = registry.register(sk_model, name="credit")
    v2 = registry.register(sk_model, name="credit", status="candidate")
    assert (v1.version, v2.version) == ("v1", "v2")
    assert registry.resolve("credit").version == "v1"  # a candidate never becomes latest by itself
    assert registry.resolve("credit", "v2").status == "candidate"
    assert registry.resolve("credit", 2).version == registry.resolve("credit", "2").version == "v2"
    registry.promote("credit", "v2")
    assert registry.resolve("credit").version == "v2"
    v3 = registry.register(sk_model, name="credit")
    assert v3.number == 3 and registry.resolve("credit").version == "v3"
    registry.demote("credit", "v3")
    assert registry.resolve("credit").version == "v2"
    assert [i.version for i in registry.versions("credit")] == ["v1", "v2", "v3"]
    assert registry.names() == ["credit"]


def test_versions_sort_numerically(registry: Registry, sk_model: Model) -> None:
    for _ in range(11):
        last = registry.register(sk_model, name="m")
    assert last.version == "v11" and registry.resolve("m").version == "v11"


def test_resolve_errors(registry: Registry, sk_model: Model) -> None:
    with pytest.raises(SnapshotError, match="does not exist"):  # nothing registered yet: no folder
        registry.resolve("nope")
    registry.register(sk_model, name="credit", status="candidate")
    with pytest.raises(SnapshotError, match=r"no model named 'nope'; known models: \['credit'\]"):
        registry.resolve("nope")
    with pytest.raises(SnapshotError, match="no version with status 'production'"):
        registry.load("credit")
    with pytest.raises(SnapshotError, match="has no version 'v9'"):
        registry.resolve("credit", "v9")
    with pytest.raises(SnapshotError, match="bad version 'newest'"):
        registry.resolve("credit", "newest")


def test_as_of_resolution(registry: Registry, sk_model: Model) -> None:
    registry.register(sk_model, name="credit", valid_from="2026-01-01T00:00:00")
    registry.register(sk_model, name="credit", valid_from="2026-01-07T00:00:00+00:00")
    assert registry.resolve("credit", as_of="2026-01-03").version == "v1"
    assert registry.resolve("credit", as_of="2026-01-07T00:00:00Z").version == "v2"
    with pytest.raises(SnapshotError, match="valid at 2025"):
        registry.resolve("credit", as_of="2025-12-31")
    registry.register(sk_model, name="credit", status="candidate", valid_from="2026-01-02")
    assert registry.resolve("credit", as_of="2026-01-09").version == "v2"  # candidates stay out
    registry.register(sk_model, name="credit")  # no valid_from: not time-gated
    assert registry.resolve("credit", as_of="2025-12-31").version == "v4"


def test_metadata_is_plain_json(tmp_path, sk_model: Model) -> None:
    reg = Registry(str(tmp_path))
    info = reg.register(sk_model, name="credit", metrics={"dscore": 0.1})
    meta = json.loads((tmp_path / "credit" / "v1" / "metadata.json").read_text())
    assert meta["sha256"] == info.sha256 and meta["schema"] == sk_model.schema.to_dict()
    assert meta["framework"] == "sklearn" and meta["status"] == "production" and meta["threshold"] == 0.5
    assert (tmp_path / "credit" / "v1" / "model.joblib").is_file()


def test_unfinished_version_ignored(tmp_path, sk_model: Model) -> None:
    reg = Registry(str(tmp_path))
    reg.register(sk_model, name="credit")
    (tmp_path / "credit" / "v2").mkdir()  # a crashed writer: folder without metadata
    assert [i.version for i in reg.versions("credit")] == ["v1"]
    assert reg.register(sk_model, name="credit").version == "v3"


def test_bad_inputs(registry: Registry, sk_model: Model) -> None:
    import torch

    with pytest.raises(SnapshotError, match="model name"):
        registry.register(sk_model, name="../evil")
    with pytest.raises(SnapshotError, match="status must be"):
        registry.register(sk_model, name="a", status="live")  # type: ignore[arg-type]
    odd = Model(torch.nn.Linear(5, 1), sk_model.schema, framework="torch")
    with pytest.raises(SnapshotError, match="build_mlp"):
        registry.register(odd, name="a")


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda_available(), reason="needs CUDA")
def test_torch_load_on_cuda(tmp_path, torch_model: Model, data) -> None:
    df, _ = data
    reg = Registry(str(tmp_path))
    reg.register(torch_model, name="mlp")
    loaded = reg.load("mlp", device="cuda")
    assert next(loaded.estimator.parameters()).device.type == "cuda"
    np.testing.assert_allclose(loaded.predict_proba(df), torch_model.predict_proba(df), atol=1e-5)


def test_resolve_says_what_is_wrong_with_the_registry_itself(tmp_path, sk_model: Model) -> None:
    """From a bad-input audit: a missing registry folder read 'known models: []', a model folder
    without versions 'has no model named demo; known models: [demo]', a metadata.json without a
    field a dataclass TypeError, and 'promote one' hid the versions' valid_from dates."""
    with pytest.raises(SnapshotError, match=r"does not exist \(no folder .*nowhere.*\); check model.registry_uri"):
        Registry(str(tmp_path / "nowhere")).resolve("credit")
    reg = Registry(str(tmp_path / "reg"))
    (tmp_path / "reg" / "credit" / "v1").mkdir(parents=True)
    with pytest.raises(SnapshotError, match=r"'credit' .* has no complete version .*found folders: \['v1'\]"):
        reg.resolve("credit")
    info = reg.register(sk_model, name="credit", valid_from="2026-01-07")
    with pytest.raises(SnapshotError, match=r"v2:production valid from 2026-01-07"):
        reg.resolve("credit", as_of="2026-01-01")
    meta = tmp_path / "reg" / "credit" / info.version / "metadata.json"
    data = json.loads(meta.read_text())
    del data["sha256"]
    meta.write_text(json.dumps(data))
    with pytest.raises(SnapshotError, match=r"metadata\.json' is unreadable: missing field\(s\) sha256"):
        reg.resolve("credit")
