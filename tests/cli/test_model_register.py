"""``fairmon model register``: a model trained elsewhere is checked against its own predict (issue 22).

The acceptance pair: a raw Pipeline registered with the wrong input mode is refused with the agreement
rate; registered right, the check is recorded, and a window run on it matches ``pipeline.predict`` on
every row (the window part: tests/cli/test_own_model_readme.py).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import joblib
import numpy as np
import own_model_setup as credit
import pandas as pd
import pytest

from fairmon.cli import main
from fairmon.registry import Registry
from fairmon.registry._import import (
    ERR_DISAGREE,
    ERR_ENCODED_WIDTH,
    ERR_NOT_BINARY,
    register_estimator,
)
from fairmon.schema import FeatureSchema


@pytest.fixture()
def reference() -> pd.DataFrame:
    return credit.applications(400, seed=1)


def _save(tmp_path: Path, model: object, reference: pd.DataFrame) -> tuple[str, str]:
    joblib.dump(model, tmp_path / "model.joblib")
    reference.to_csv(tmp_path / "reference.csv", index=False)
    return str(tmp_path / "model.joblib"), str(tmp_path / "reference.csv")


def test_wrong_input_mode_is_refused_with_the_agreement_rate(tmp_path: Path, reference: pd.DataFrame,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    ref = reference[[*credit.NUMERIC, credit.LABEL]]
    pipe = credit.numeric_pipeline(ref)
    model, csv = _save(tmp_path, pipe, ref)
    registry = str(tmp_path / "registry")
    with warnings.catch_warnings():  # the pipeline was fitted with feature names; the matrix has none
        warnings.simplefilter("ignore")
        encoded = FeatureSchema.fit(ref[credit.NUMERIC]).transform(ref[credit.NUMERIC])
        rate = float(np.mean(pipe.predict(encoded) == pipe.predict(ref[credit.NUMERIC])))
    assert 0.2 < rate < 0.9  # the silent trap: it scores the encoded matrix, just wrongly

    rc = main(["model", "register", model, "--name", "credit", "--reference", csv, "--label", credit.LABEL,
               "--registry", registry, "--input", "encoded"])
    err = capsys.readouterr().err
    assert rc == 2
    assert ERR_DISAGREE.format(rate=rate, rows=400, tol=0.0, mode="encoded", other="raw") in err
    assert "try --input raw" in err
    assert Registry(registry).names() == []  # nothing written

    assert main(["model", "register", model, "--name", "credit", "--reference", csv, "--label", credit.LABEL,
                 "--registry", registry, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"]["input"] == "raw" and out["check"]["agreement"] == 1.0
    info = Registry(registry).resolve("credit")
    assert info.input == "raw" and info.status == "production"
    assert info.metrics["registration_check"] == {"input": "raw", "own_input": "raw", "rows": 400,
                                                  "agreeing": 400, "tolerance": 0.0, "agreement": 1.0,
                                                  "compared_with": "estimator.predict"}
    loaded = Registry(registry).load("credit")
    fresh = credit.applications(200, seed=7)
    np.testing.assert_array_equal(loaded.predict(fresh[credit.NUMERIC]), pipe.predict(fresh[credit.NUMERIC]))
    assert "warning" not in capsys.readouterr().err

    # a misspelt --label is allowed (a reference may lack the labels) but said (found trying the product)
    assert main(["model", "register", model, "--name", "credit2", "--reference", csv, "--label", "aproved",
                 "--registry", registry, "--features", *credit.NUMERIC, "--json"]) == 0
    assert f"warning  --label 'aproved' is not a column of {csv}" in capsys.readouterr().err


def test_column_transformer_pipeline_as_encoded_is_refused(tmp_path: Path, reference: pd.DataFrame) -> None:
    pipe = credit.raw_pipeline(reference)
    reg = Registry(str(tmp_path / "registry"))
    with pytest.raises(Exception) as exc:
        register_estimator(pipe, registry=reg, name="c", reference=reference, label=credit.LABEL, input="encoded")
    assert str(exc.value) == ERR_DISAGREE.format(rate=0.0, rows=400, tol=0.0, mode="encoded", other="raw")
    info, check = register_estimator(pipe, registry=reg, name="c", reference=reference, label=credit.LABEL)
    assert (info.input, check.agreement, info.feature_schema.names) == ("raw", 1.0, credit.FEATURES)


def test_estimator_fitted_on_fairmons_encoding_is_encoded(tmp_path: Path, reference: pd.DataFrame) -> None:
    from sklearn.linear_model import LogisticRegression

    schema = FeatureSchema.fit(reference[credit.FEATURES])
    est = LogisticRegression(max_iter=500).fit(schema.transform(reference[credit.FEATURES]), reference[credit.LABEL])
    reg = Registry(str(tmp_path / "registry"))
    feats = list(credit.FEATURES)
    info, check = register_estimator(est, registry=reg, name="e", reference=reference, features=feats)
    assert (info.input, check.own_input, check.agreement) == ("encoded", "encoded", 1.0)
    with pytest.raises(Exception) as exc:
        register_estimator(est, registry=reg, name="e", reference=reference, features=feats[:4])
    assert str(exc.value) == ERR_ENCODED_WIDTH.format(n_in=11, features=feats[:4], n_enc=4)


class CutOff:
    """A raw pipeline whose own decisions cut P(class 1) at 0.7, as some credit teams deploy."""

    def __init__(self, pipe: object) -> None:
        self.pipe = pipe
        self.classes_ = np.array([0, 1])
        self.feature_names_in_ = np.array(credit.FEATURES, dtype=object)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.pipe.predict_proba(X))  # type: ignore[attr-defined]

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return (self.predict_proba(X)[:, 1] >= 0.7).astype(int)


def test_tolerance_threshold_and_neither_mode(tmp_path: Path, reference: pd.DataFrame) -> None:
    ref = reference[[*credit.NUMERIC, credit.LABEL]]
    reg = Registry(str(tmp_path / "registry"))
    _, check = register_estimator(credit.numeric_pipeline(ref), registry=reg, name="t", reference=ref,
                                  label=credit.LABEL, input="encoded", tolerance=1.0)
    assert check.input == "encoded" and check.agreement < 0.9  # accepted: the user allowed it

    model = CutOff(credit.raw_pipeline(reference))
    with pytest.raises(Exception) as exc:  # neither input mode reproduces a 0.7 cut-off at 0.5
        register_estimator(model, registry=reg, name="cut", reference=reference, label=credit.LABEL)
    assert "check --features, --threshold" in str(exc.value) and "with input mode 'raw'" in str(exc.value)
    info, check = register_estimator(model, registry=reg, name="cut", reference=reference, label=credit.LABEL,
                                     threshold=0.7)
    assert (info.threshold, check.agreement) == (0.7, 1.0)


def test_multiclass_is_refused(tmp_path: Path, reference: pd.DataFrame) -> None:
    from sklearn.linear_model import LogisticRegression

    y = np.arange(len(reference)) % 3
    est = LogisticRegression(max_iter=200).fit(reference[credit.NUMERIC], y)
    with pytest.raises(Exception) as exc:
        register_estimator(est, registry=Registry(str(tmp_path / "r")), name="m", reference=reference)
    assert str(exc.value) == ERR_NOT_BINARY.format(cls="LogisticRegression", classes=[0, 1, 2])


def test_a_forest_whose_votes_tie_registers_with_scikit_learns_rule(tmp_path: Path, reference: pd.DataFrame) -> None:
    """Session 23 (a new user's 50-tree forest): rows with P(class 1) exactly 0.5 are class 0 for scikit-learn
    (argmax takes the first class) and were class 1 for fairmon (P >= 0.5), so registration was refused at
    99.6% agreement. The next float above 0.5 is scikit-learn's own rule: registered, every row agreeing."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    pre = ColumnTransformer([("num", "passthrough", credit.NUMERIC), ("cat", OneHotEncoder(), credit.CATEGORICAL)])
    forest = Pipeline([("pre", pre), ("rf", RandomForestClassifier(n_estimators=4, random_state=0))])
    forest.fit(reference[credit.FEATURES], reference[credit.LABEL])
    ties = int((forest.predict_proba(reference[credit.FEATURES])[:, 1] == 0.5).sum())
    assert ties > 0  # the case under test
    info, check = register_estimator(forest, registry=Registry(str(tmp_path / "registry")), name="rf",
                                     reference=reference, label=credit.LABEL)
    assert check.agreement == 1.0
    model = Registry(str(tmp_path / "registry")).load("rf", info.version)
    assert model.threshold > 0.5 and model.threshold == np.nextafter(0.5, 1.0)
    own = (forest.predict(reference[credit.FEATURES]) == 1).astype(int)
    assert (model.predict(reference) == own).all()
