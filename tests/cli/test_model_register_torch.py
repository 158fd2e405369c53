"""``fairmon model register --builder``: a torch module trained elsewhere, stored as state_dict + builder.

The team's network (``own_model_setup.build_net``, not fairmon's MLP) is registered from its
state_dict file; the input mode is detected (encoded by width, raw by label agreement when every
feature is numeric); the snapshot as a worker loads it decides like the original module on the
reference rows and on a fresh window; a state_dict that does not fit the builder, or an input mode
that cannot be told, is refused with a message naming what to pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import own_model_setup as credit
import pandas as pd
import pytest

from fairmon.cli import main
from fairmon.cli.model import ERR_BUILDER_KWARGS
from fairmon.registry import Registry
from fairmon.registry._torch_import import ERR_AMBIGUOUS, _own_proba
from fairmon.registry._torch_module import ERR_BUILDER_IMPORT
from fairmon.schema import FeatureSchema

torch = pytest.importorskip("torch")

BUILDER = "own_model_setup:build_net"


@pytest.fixture()
def reference() -> pd.DataFrame:
    return credit.applications(400, seed=1)


def _files(tmp_path: Path, net: Any, reference: pd.DataFrame) -> tuple[str, str]:
    torch.save(net.state_dict(), tmp_path / "net.pt")
    reference.to_csv(tmp_path / "reference.csv", index=False)
    return str(tmp_path / "net.pt"), str(tmp_path / "reference.csv")


def _register(path: str, ref_csv: str, registry: Path, *extra: str) -> list[str]:
    return ["--debug", "model", "register", path, "--name", "credit", "--reference", ref_csv, "--label",
            credit.LABEL, "--registry", str(registry), "--builder", BUILDER, *extra]


@pytest.mark.slow
def test_an_encoded_torch_module_registers_and_decides_like_itself(
    tmp_path: Path, reference: pd.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = FeatureSchema.fit(reference, columns=credit.FEATURES)
    net = credit.train_net(schema.transform(reference), reference[credit.LABEL].to_numpy())
    path, ref_csv = _files(tmp_path, net, reference)
    args = _register(path, ref_csv, tmp_path / "registry", "--features", *credit.FEATURES,
                     "--builder-kwargs", json.dumps({"n_inputs": schema.n_encoded}), "--json")
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"]["input"] == "encoded" and out["check"]["agreement"] == 1.0 and out["check"]["rows"] == 400
    info = Registry(str(tmp_path / "registry")).resolve("credit")
    assert info.framework == "torch" and info.module_config is not None
    assert info.module_config["builder"] == "import" and info.module_config["target"] == BUILDER
    rec = info.metrics["registration_check"]
    assert rec["builder"] == BUILDER and 0.7 < rec["label_agreement"] <= 1.0
    model = Registry(str(tmp_path / "registry")).load("credit", device="cpu")
    window = credit.applications(300, seed=11)
    own = (_own_proba(net, schema.transform(window[credit.FEATURES])) >= 0.5).astype(int)
    assert np.array_equal(model.predict(window[credit.FEATURES]), own)  # every row of a fresh window
    z = torch.as_tensor(schema.transform(window[credit.FEATURES])[:5], dtype=torch.float32)
    assert model.hidden(z) is not None  # the builder's first_hidden: OpenXAI's RRS is defined


@pytest.mark.slow
def test_a_raw_numeric_module_is_detected_by_its_label_agreement(tmp_path: Path, reference: pd.DataFrame) -> None:
    net = credit.train_net(reference[credit.NUMERIC].to_numpy(float), reference[credit.LABEL].to_numpy(),
                           normalize=True)  # the team standardises inside the network
    path, ref_csv = _files(tmp_path, net, reference)
    kwargs = json.dumps({"n_inputs": len(credit.NUMERIC), "normalize": True})
    assert main(_register(path, ref_csv, tmp_path / "registry", "--features", *credit.NUMERIC,
                          "--builder-kwargs", kwargs)) == 0
    model = Registry(str(tmp_path / "registry")).load("credit", device="cpu")
    window = credit.applications(300, seed=12)
    own = (_own_proba(net, window[credit.NUMERIC].to_numpy(float)) >= 0.5).astype(int)
    assert np.array_equal(model.predict(window[credit.NUMERIC]), own)
    assert Registry(str(tmp_path / "registry")).resolve("credit").module_config["input"] == "raw"
    # without the label both modes fit the width: refused, asking for --input
    no_label = reference.drop(columns=[credit.LABEL])
    no_label.to_csv(tmp_path / "nolabel.csv", index=False)
    with pytest.raises(Exception) as exc:
        main(["--debug", "model", "register", path, "--name", "other", "--reference", str(tmp_path / "nolabel.csv"),
              "--registry", str(tmp_path / "registry"), "--builder", BUILDER, "--builder-kwargs", kwargs,
              "--features", *credit.NUMERIC])
    assert str(exc.value) == ERR_AMBIGUOUS.format(detail="no --label to tell them apart")
    assert main(["model", "register", path, "--name", "other", "--reference", str(tmp_path / "nolabel.csv"),
                 "--registry", str(tmp_path / "registry"), "--builder", BUILDER, "--builder-kwargs", kwargs,
                 "--features", *credit.NUMERIC, "--input", "raw"]) == 0


def test_bad_builders_and_state_dicts_are_refused_naming_them(tmp_path: Path, reference: pd.DataFrame) -> None:
    schema = FeatureSchema.fit(reference, columns=credit.FEATURES)
    net = credit.train_net(schema.transform(reference), reference[credit.LABEL].to_numpy(), steps=20)
    path, ref_csv = _files(tmp_path, net, reference)
    reg = tmp_path / "registry"
    feats = ["--features", *credit.FEATURES]
    with pytest.raises(Exception) as exc:  # the state_dict was saved from a 13-input network
        main(_register(path, ref_csv, reg, *feats, "--builder-kwargs", '{"n_inputs": 13, "hidden": 4}'))
    assert f"the state_dict in {path!r} does not fit the module built by {BUILDER!r}" in str(exc.value)
    assert "size mismatch" in str(exc.value)
    with pytest.raises(Exception) as exc:
        main(_register(path, ref_csv, reg, *feats, "--builder-kwargs", "[13]"))
    assert str(exc.value) == ERR_BUILDER_KWARGS.format(value="[13]")
    with pytest.raises(Exception) as exc:
        main([*_register(path, ref_csv, reg, *feats, "--builder-kwargs", '{"n_inputs": 13}')[:-2],
              "--builder", "own_model_setup:no_such_builder"])
    assert str(exc.value).startswith(ERR_BUILDER_IMPORT.format(target="own_model_setup:no_such_builder", error="")[:-1])
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(Exception) as exc:
        main(_register(str(tmp_path / "junk.pt"), ref_csv, reg, *feats, "--builder-kwargs", '{"n_inputs": 13}'))
    assert "as a torch state_dict" in str(exc.value)
    assert not reg.exists() or not any(reg.iterdir())  # nothing was written
