"""``fairmon init`` scaffolds a loadable spec; ``fairmon spec check`` names the paths that are missing."""

from __future__ import annotations

from pathlib import Path

import own_model_setup as credit
import pytest

from fairmon.cli import main
from fairmon.cli.init import ERR_EXISTS, ERR_FAVORABLE_NEEDED, ERR_LABEL_VALUES, ERR_NO_COLUMN, FIRST_RUN
from fairmon.cli.spec import (
    ERR_FILE_COLUMNS,
    ERR_NO_MODEL_IN_REGISTRY,
    ERR_NO_WINDOW_FILES,
    ERR_PATH_MISSING,
    NOT_CHECKED_REMOTE,
)
from fairmon.config import load_spec
from fairmon.errors import DatasetError
from fairmon.registry import Registry
from fairmon.registry._import import register_estimator
from fairmon.sources import ERR_NOT_FOUND


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    ref = credit.applications(300, seed=1)
    ref.to_csv("reference.csv", index=False)
    return tmp_path


def _line(path: Path, key: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith(key))


def test_init_with_a_registered_model(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = credit.applications(300, seed=1)
    register_estimator(credit.raw_pipeline(ref), registry=Registry("registry"), name="credit", reference=ref,
                       label=credit.LABEL)
    ref.assign(applicant_id=range(300)).to_csv("reference.csv", index=False)
    assert main(["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex",
                 "--model", "credit", "--start-date", "2026-01-01"]) == 0
    out = capsys.readouterr().out
    spec = load_spec(workdir / "monitors" / "credit.yaml")
    assert spec.columns.features == tuple(credit.FEATURES)
    assert spec.columns.extra == ("sex", "applicant_id")
    assert spec.rumie_attributes == ("sex", "applicant_id")  # never the model's inputs
    assert spec.rumie.k == 2 and spec.retraining.enabled is False
    assert spec.explanations.gesd.sample_size == FIRST_RUN["gesd_sample_size"]
    assert spec.explanations.openxai.sample_size == FIRST_RUN["openxai_sample_size"]
    assert spec.resolve_path(spec.model.registry_uri) == str(workdir / "registry")
    assert spec.resolve_path(spec.validation.reference_data or "") == str(workdir / "reference.csv")
    text = (workdir / "monitors" / "credit.yaml").read_text()
    assert "#   numeric (4): age, income, debt_ratio, bureau_score" in text
    assert "#   categorical (2): region, employment" in text
    assert f"sample_size: {FIRST_RUN['gesd_sample_size']}" in text
    for cmd in ("fairmon db upgrade", "fairmon run --monitor monitors/credit.yaml", "fairmon report --monitor credit"):
        assert cmd in out
    # the spec it wrote passes `spec check`; its window files do not exist yet, a warning names the field
    assert main(["spec", "check", "monitors/credit.yaml"]) == 0
    err = capsys.readouterr().err
    line = _line(workdir / "monitors" / "credit.yaml", "pattern:")
    expected = ERR_NO_WINDOW_FILES.format(glob=workdir / "data" / "*.csv", folder=workdir / "data")
    assert f"warning  monitors/credit.yaml:{line}: data.files.pattern: {expected}" in err
    assert err.count("warning") == 1
    assert main(["spec", "check", "monitors/credit.yaml", "--strict"]) == 2
    (workdir / "data").mkdir()
    assert main(["spec", "check", "monitors/credit.yaml", "--strict"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_init_maps_the_favorable_label_onto_the_models_classes(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Session 23 (a new user with German credit, labels 1 good / 2 bad): init wrote ``class: 1`` — the
    model's predict_proba[:, 1], P(label 2), bad credit — beside the favorable label 1, so every metric and
    RUMIE's group read backwards. The favorable label is now said (or 0/1), and its position among the
    estimator's classes_ (recorded by model register) is the favorable decision."""
    ref = credit.applications(300, seed=1)
    ref[credit.LABEL] = ref[credit.LABEL].map({1: 1, 0: 2})  # 1 = approved (good), 2 = refused
    register_estimator(credit.raw_pipeline(ref), registry=Registry("registry"), name="credit", reference=ref,
                       label=credit.LABEL)
    ref.to_csv("reference.csv", index=False)
    args = ["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex", "--model", "credit",
            "--start-date", "2026-01-01"]
    with pytest.raises(Exception, match="which one is the favorable outcome") as info:
        main(["--debug", *args])
    assert str(info.value) == ERR_FAVORABLE_NEEDED.format(label="approved", values=[1, 2])
    assert main([*args, "--favorable", "1"]) == 0
    assert "favorable: label approved = 1, the model's class 1: check" in capsys.readouterr().out
    spec = load_spec(workdir / "monitors" / "credit.yaml")
    assert (spec.favorable.class_, spec.favorable.label_value) == (0, 1)  # predict_proba[:, 0] is P(label 1)
    assert Registry("registry").resolve("credit").metrics["classes"] == [1, 2]
    # words: approved / denied sorted made "denied" favorable
    ref[credit.LABEL] = ref[credit.LABEL].map({1: "yes", 2: "no"})
    register_estimator(credit.raw_pipeline(ref), registry=Registry("registry"), name="words", reference=ref,
                       label=credit.LABEL)
    ref.to_csv("reference.csv", index=False)
    assert main(["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex", "region",
                 "--sensitive", "employment", "--model", "words", "--favorable", "yes", "--force"]) == 0
    spec = load_spec(workdir / "monitors" / "words.yaml")
    assert (spec.favorable.class_, spec.favorable.label_value) == (1, "yes")  # classes_ ['no', 'yes']
    assert spec.columns.sensitive == ("sex", "region", "employment")  # a repeated --sensitive adds, not replaces
    # labels the model never predicts (trained on 0/1, the reference says yes/no): refused, not guessed
    zero_one = credit.applications(300, seed=1)
    register_estimator(credit.raw_pipeline(zero_one), registry=Registry("registry"), name="zo", reference=zero_one,
                       label=credit.LABEL)
    with pytest.raises(Exception, match="is not one of the model's classes"):
        main(["--debug", "init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex",
              "--model", "zo", "--favorable", "yes", "--force"])


def test_init_without_a_model_guesses_inputs_and_refuses_bad_columns(workdir: Path) -> None:
    assert main(["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex",
                 "--name", "Credit Risk", "--out", "credit.yaml"]) == 0
    spec = load_spec(workdir / "credit.yaml")
    assert spec.name == "credit-risk"
    assert spec.columns.features == tuple(credit.FEATURES) and spec.columns.extra == ("sex",)
    assert "CHECK these are the model's inputs" in (workdir / "credit.yaml").read_text()
    with pytest.raises(Exception) as exc:
        main(["--debug", "init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex",
              "--out", "credit.yaml"])
    assert str(exc.value) == ERR_EXISTS.format(path="credit.yaml")
    with pytest.raises(Exception) as exc:
        main(["--debug", "init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "gender",
              "--out", "x.yaml"])
    assert str(exc.value) == ERR_NO_COLUMN.format(option="sensitive", missing=["gender"],
                                                  columns=[*credit.FEATURES, "sex", "approved"])
    with pytest.raises(Exception) as exc:
        main(["--debug", "init", "--reference", "reference.csv", "--label", "region", "--sensitive", "sex",
              "--out", "x.yaml"])
    assert str(exc.value) == ERR_LABEL_VALUES.format(label="region", n=4, values=["east", "north", "south", "west"])
    assert not (workdir / "x.yaml").exists()
    with pytest.raises(DatasetError) as missing:  # was a bare FileNotFoundError traceback
        main(["--debug", "init", "--reference", "nosuch.csv", "--label", "approved", "--sensitive", "sex",
              "--out", "x.yaml"])
    assert str(missing.value) == ERR_NOT_FOUND.format(path="nosuch.csv")
    assert main(["init", "--reference", "nosuch.csv", "--label", "approved", "--sensitive", "sex",
                 "--out", "x.yaml"]) == 2


def test_spec_check_names_each_missing_path(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = workdir / "m.yaml"
    spec.write_text(
        "spec_version: 1\nidentity: {name: m}\nmodel:\n  registry_uri: registry\n  name: credit\n"
        "data:\n  files: {pattern: 'in/{start:%Y-%m-%d}.csv'}\n"
        "columns: {features: [age], sensitive: [sex], extra: [sex], label: approved}\n"
        "schedule: {start_date: 2026-01-01}\n"
        "validation:\n  reference_data: s3://bucket/ref.csv\n"
        "retraining:\n  enabled: true\n  training_data: {path: train.csv}\n"
    )
    assert main(["spec", "check", str(spec)]) == 0
    err = capsys.readouterr().err
    assert f"warning  {spec}:4: model.registry_uri: " + ERR_PATH_MISSING.format(path=workdir / "registry") in err
    assert f"note  {spec}:11: validation.reference_data: {NOT_CHECKED_REMOTE}" in err
    assert f"warning  {spec}:14: retraining.training_data.path: " + ERR_PATH_MISSING.format(path=workdir / "train.csv") in err
    (workdir / "registry").mkdir()
    (workdir / "in").mkdir()
    (workdir / "train.csv").write_text("age\n1\n")
    assert main(["spec", "check", str(spec), "--strict"]) == 2
    err = capsys.readouterr().err
    msg = ERR_NO_MODEL_IN_REGISTRY.format(registry=workdir / "registry", name="credit")
    assert f"error  {spec}:5: model.name: {msg}" in err
    (workdir / "registry" / "credit").mkdir()
    # the training data's header lacks declared columns: said with the file, line, field and columns
    assert main(["spec", "check", str(spec), "--strict"]) == 2
    msg = ERR_FILE_COLUMNS.format(path=workdir / "train.csv", cols=["sex", "approved"], have=["age"])
    assert f"error  {spec}:14: retraining.training_data.path: {msg}" in capsys.readouterr().err
    (workdir / "train.csv").write_text("age,sex,approved\n1,F,1\n")
    assert main(["spec", "check", str(spec), "--strict"]) == 0
    # Parquet is read as the run reads it: by the declared format, else by the ending in any case
    import pandas as pd

    pd.DataFrame({"age": [1], "sex": ["F"], "approved": [1]}).to_parquet(workdir / "train.data")
    text = spec.read_text()
    spec.write_text(text.replace("training_data: {path: train.csv}", "training_data: {path: train.data, format: parquet}"))
    assert main(["spec", "check", str(spec), "--strict"]) == 0
    pd.DataFrame({"age": [1]}).to_parquet(workdir / "TRAIN.PARQUET")
    spec.write_text(text.replace("training_data: {path: train.csv}", "training_data: {path: TRAIN.PARQUET}"))
    assert main(["spec", "check", str(spec), "--strict"]) == 2
    msg = ERR_FILE_COLUMNS.format(path=workdir / "TRAIN.PARQUET", cols=["sex", "approved"], have=["age"])
    assert msg in capsys.readouterr().err


_SPEC_HEAD = ("spec_version: 1\nidentity: {name: m}\nmodel:\n  registry_uri: registry\n  name: credit\n"
              "data:\n  files: {pattern: 'data/{start:%Y-%m-%d}.csv'}\n")


def _checked_spec(workdir: Path) -> Path:
    """Where a spec-check test writes its spec, beside the registry folder and data folder it names."""
    (workdir / "registry" / "credit").mkdir(parents=True)
    (workdir / "data").mkdir()
    return workdir / "m.yaml"


def test_spec_check_warns_when_rumie_searches_model_inputs(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22 item 2: listing non-sensitive model inputs in rumie.attributes is a warning (never with
    --strict an error: it is a choice, demo.yaml makes it), naming the file, line, field and columns."""
    from fairmon.cli.spec import WARN_RUMIE_INPUTS

    spec = _checked_spec(workdir)
    head = _SPEC_HEAD + "columns: {features: [age, bureau_score, sex], extra: [region], sensitive: [sex]}\n" + (
        "schedule: {start_date: 2026-01-01}\n")
    spec.write_text(head)  # the default: sex and region only
    assert main(["spec", "check", str(spec), "--strict"]) == 0
    assert "warning" not in capsys.readouterr().err
    spec.write_text(head + "rumie:\n  k: 2\n  attributes: [bureau_score, sex, region]\n")
    assert main(["spec", "check", str(spec), "--strict"]) == 0
    err = capsys.readouterr().err
    assert f"warning  {spec}:12: rumie.attributes: " + WARN_RUMIE_INPUTS.format(columns=["bureau_score"]) in err
    assert main(["spec", "check", str(spec), "--json"]) == 0
    assert "rumie.attributes" in capsys.readouterr().out


def test_spec_check_warns_when_windows_leave_rows_unmonitored(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fixed window shorter than some schedule interval (30d on a monthly cron) leaves rows in no window:
    a warning naming the line and the fix; ``interval`` and a rolling window longer than every interval
    are quiet."""
    from fairmon.cli.spec import WARN_WINDOW_GAPS

    spec = _checked_spec(workdir)
    head = _SPEC_HEAD + (
        "columns: {features: [age, sex], sensitive: [sex]}\n"
        "schedule:\n  start_date: 2026-01-01\n  cron: '0 0 1 * *'\n  window: {}\n"
    )
    spec.write_text(head.replace("{}", "30d"))
    assert main(["spec", "check", str(spec), "--strict"]) == 0  # a choice a team may make: not an error
    err = capsys.readouterr().err
    assert f"warning  {spec}:12: schedule.window: " + WARN_WINDOW_GAPS.format(
        window="30d", cron="0 0 1 * *", intervals="28d to 31d") in err
    for quiet in ("interval", "31d"):
        spec.write_text(head.replace("{}", quiet))
        assert main(["spec", "check", str(spec)]) == 0
        assert "schedule.window" not in capsys.readouterr().err


def test_gesd_sample_covers_every_group_of_a_many_group_attribute(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Session 23: GESD shares its sample equally among an attribute's groups and skips groups below
    min_group_size; a new user's race (6 groups) got 40 / 6 rows each and GESD was n/a in every window.
    init now sizes the sample for the attribute with the most groups, and spec check warns about a spec
    whose sample cannot cover them."""
    from fairmon.cli.spec import WARN_GESD_SHARE

    ref = credit.applications(300, seed=1)
    ref["race"] = [f"r{i % 6}" for i in range(300)]
    ref.to_csv("reference.csv", index=False)
    assert main(["init", "--reference", "reference.csv", "--label", "approved", "--sensitive", "sex", "race",
                 "--start-date", "2026-01-01"]) == 0
    spec_path = workdir / "monitors" / "reference.yaml"
    assert load_spec(spec_path).explanations.gesd.sample_size == 60  # 6 groups x min_group_size 10
    capsys.readouterr()
    assert main(["spec", "check", str(spec_path)]) == 0
    assert "explanations.gesd.sample_size" not in capsys.readouterr().err
    spec_path.write_text(spec_path.read_text().replace("sample_size: 60 ", "sample_size: 40 "))
    assert main(["spec", "check", str(spec_path)]) == 0
    err = capsys.readouterr().err
    assert "explanations.gesd.sample_size: " + WARN_GESD_SHARE.format(
        attr="race", k=6, n=40, each=6, min=10, need=60) in err
    assert "'sex'" not in err.split("explanations.gesd.sample_size")[1]  # 40 / 2 is enough for sex


def test_spec_check_reaches_file_and_remote_uris(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 item 8: a file:// URI is a local path (checked), a remote one is checked with --remote
    (memory:// stands in for s3://), and each problem names the field that is wrong."""
    import fsspec

    from fairmon.cli.spec import ERR_URI_UNREACHABLE

    (workdir / "registry" / "credit").mkdir(parents=True)
    fs = fsspec.filesystem("memory")
    fs.pipe("/spec-check-22/windows/2026-01-01.csv", b"age\n1\n")
    spec = workdir / "m.yaml"
    spec.write_text(
        "spec_version: 1\nidentity: {name: m}\nmodel:\n  registry_uri: file://" + str(workdir / "registry")
        + "\n  name: credit\n"
        "data:\n  files: {pattern: 'memory://spec-check-22/windows/{start:%Y-%m-%d}.csv'}\n"
        "columns: {features: [age], sensitive: [sex], extra: [sex], label: approved}\n"
        "schedule: {start_date: 2026-01-01}\n"
        "validation:\n  reference_data: memory://spec-check-22/missing.csv\n"
        "retraining:\n  enabled: true\n  training_data: {path: 'file://" + str(workdir / "train.csv") + "'}\n"
    )
    assert main(["spec", "check", str(spec)]) == 0
    err = capsys.readouterr().err
    assert f"warning  {spec}:14: retraining.training_data.path: " + ERR_PATH_MISSING.format(path=workdir / "train.csv") in err
    assert "model.registry_uri" not in err and "model.name" not in err  # file:// registry found, model too
    assert f"note  {spec}:7: data.files.pattern: {NOT_CHECKED_REMOTE}" in err
    assert main(["spec", "check", str(spec), "--remote"]) == 0
    err = capsys.readouterr().err
    assert "data.files.pattern" not in err  # the memory:// window file exists
    missing = ERR_PATH_MISSING.format(path="memory://spec-check-22/missing.csv")
    assert f"warning  {spec}:11: validation.reference_data: {missing}" in err
    (workdir / "train.csv").write_text("age,sex,approved\n1,F,1\n")
    assert main(["spec", "check", str(spec), "--remote", "--strict"]) == 2
    assert f"error  {spec}:11: validation.reference_data: {missing}" in capsys.readouterr().err
    fs.pipe("/spec-check-22/missing.csv", b"age\n1\n")
    assert main(["spec", "check", str(spec), "--remote", "--strict"]) == 0
    # a store it cannot reach (no credentials here; the client's error stands in) is named, not passed
    spec.write_text(spec.read_text().replace("memory://spec-check-22/missing.csv", "s3://bucket/ref.csv"))

    def no_credentials(uri: str, **kw: object) -> object:
        if uri.startswith("s3://"):
            raise PermissionError("no AWS credentials")
        return real(uri, **kw)

    real = fsspec.core.url_to_fs
    monkeypatch.setattr(fsspec.core, "url_to_fs", no_credentials)
    assert main(["spec", "check", str(spec), "--remote", "--strict"]) == 2
    msg = ERR_URI_UNREACHABLE.format(uri="s3://bucket/ref.csv", error="PermissionError: no AWS credentials")
    assert f"error  {spec}:11: validation.reference_data: {msg}" in capsys.readouterr().err
