"""``fairmon audit``: readable and JSON output, --favorable-value, --model from a registry, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _rumie_data import planted_frame

from fairmon.cli import main
from fairmon.cli.audit import ERR_FAVORABLE_VALUE, ERR_MODEL_REF, ERR_NOT_BINARY, parse_model_ref


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    X, fav, _ = planted_frame(600)
    X["decision"] = np.where(fav, "approve", "deny")
    path = tmp_path_factory.mktemp("audit") / "rows.csv"
    X.to_csv(path, index=False)
    return path


def test_audit_json(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["audit", "--data", str(data_file), "--favorable-col", "decision", "--favorable-value",
               "approve", "--k", "3", "--iterations", "400", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["method"] == "ie-dt"
    assert "decision" not in out["settings"]["attributes"]
    assert 0.45 <= out["fraction"] <= 0.55
    assert out["p_value"] is not None and out["rule"]


def test_audit_readable(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["audit", "--data", str(data_file), "--favorable-col", "decision", "--favorable-value",
               "approve", "--attributes", "age", "colour", "--k", "2", "--iterations", "300",
               "--no-significance"])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.startswith("RUMIE ie-dt: ok") and "key attributes:" in out and "rules" in out


def test_audit_errors(data_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["audit", "--data", str(data_file), "--favorable-col", "decision", "--favorable-value", "yes"])
    assert rc == 2
    err = capsys.readouterr().err
    assert ERR_FAVORABLE_VALUE.format(value="yes", column="decision", values=["approve", "deny"]) in err
    rc = main(["audit", "--data", str(data_file), "--favorable-col", "decision"])  # not binary
    assert rc == 2
    assert ERR_NOT_BINARY.format(column="decision", file=data_file, values=["approve", "deny"],
                                 example="deny") in capsys.readouterr().err
    rc = main(["audit", "--data", str(data_file), "--favorable-col", "approved"])
    assert rc == 2 and f"--favorable-col 'approved' is not a column of {data_file}" in capsys.readouterr().err
    with pytest.raises(Exception) as e:
        parse_model_ref("reg::v1")
    assert str(e.value) == ERR_MODEL_REF.format(ref="reg::v1")


def test_audit_with_registry_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sklearn.linear_model import LogisticRegression

    from fairmon.registry import Model, Registry
    from fairmon.schema import FeatureSchema

    X, fav, _ = planted_frame(600)
    schema = FeatureSchema.fit(X)
    est = LogisticRegression().fit(schema.transform(X), fav.astype(int))
    reg = Registry(str(tmp_path / "reg"))
    reg.register(Model(est, schema, framework="sklearn", input="encoded"), name="credit")
    data = tmp_path / "rows.csv"
    X.to_csv(data, index=False)
    rc = main(["audit", "--data", str(data), "--model", f"{tmp_path / 'reg'}:credit:latest", "--k", "2",
               "--iterations", "300", "--no-significance", "--json"])
    assert rc == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["status"] == "ok" and out["within_bounds"]
    assert out["settings"]["attributes"] == ["age", "priors_count", "colour", "noise"]
    # searching the model's own inputs is said (stderr), as `spec check` says it of rumie.attributes
    assert captured.err.startswith("warning  no --attributes: RUMIE searches the model's own inputs ['age',")


def test_audit_warns_about_a_number_column_made_text_by_one_word(
    data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found trying the product: one 'abc' in a numeric column turned it into hundreds of categories
    (a rule listing every value, and a 13x slower search) without a word."""
    import pandas as pd

    frame = pd.read_csv(data_file).astype({"noise": object})
    frame.loc[5, "noise"] = "abc"
    path = tmp_path / "typo.csv"
    frame.to_csv(path, index=False)
    rc = main(["audit", "--data", str(path), "--favorable-col", "decision", "--favorable-value", "approve",
               "--attributes", "age", "colour", "noise", "--k", "2", "--iterations", "100", "--no-significance"])
    assert rc == 0
    err = capsys.readouterr().err
    assert f"column 'noise' of {path} holds numbers but for 1 value(s), e.g. ['abc']" in err
    assert "colour" not in err  # a text column of words is not warned about
