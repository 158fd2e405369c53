"""Monitor spec loading: malformed specs give messages naming file, line, field path and problem."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from config_minimal import MINIMAL
from config_minimal import spec_error as _error

from fairmon.config import (
    ERR_ALPHA_BETA,
    ERR_DUPLICATE_NAME,
    ERR_EXACTLY_ONE_SOURCE,
    ERR_FILE_MISSING,
    ERR_MISSING,
    ERR_NOT_MAPPING,
    ERR_SPEC_VERSION,
    MonitorSpec,
    load_spec,
    load_specs,
    parse_duration,
    parse_spec,
    scan_specs,
    validate_cron,
)
from fairmon.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def test_minimal_spec_loads_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "credit.yaml"
    path.write_text(MINIMAL)
    spec = load_spec(path)
    assert spec.name == "credit"
    assert spec.model.name == "credit"  # defaults to identity.name
    assert spec.model.version == "latest"
    assert spec.data.kind == "files" and spec.data.files is not None and spec.data.files.format == "csv"
    assert spec.schedule.window == dt.timedelta(days=1) and spec.schedule.cron == "0 0 * * *"
    assert (spec.rumie.k, spec.rumie.alpha, spec.rumie.beta, spec.rumie.method) == (5, 0.45, 0.55, "ie-dt")
    assert spec.favorable.class_ == 1
    assert spec.validation.enabled is False  # omitted section: no validation
    assert "tpr" not in (spec.outcome.metrics or ())  # no label column → no label metrics
    assert spec.explanations.openxai.metrics == ("PGI", "PGU", "RIS", "RRS", "ROS")
    assert spec.source == path.resolve()


# (case id, YAML text, substrings the message must contain: file, field path, problem)
MALFORMED = [
    (
        "unknown-key",
        MINIMAL + "rumie:\n  kk: 3\n",
        ["bad.yaml:12", "rumie.kk", "unknown key 'kk'", "did you mean 'k'"],
    ),
    ("wrong-type", MINIMAL + "rumie:\n  k: five\n", ["bad.yaml:12", "rumie.k", "valid integer", "'five'"]),
    (
        "alpha-above-beta",
        MINIMAL + "rumie:\n  alpha: 0.6\n  beta: 0.5\n",
        ["bad.yaml:12", "rumie.alpha", ERR_ALPHA_BETA.format(alpha=0.6, beta=0.5)],
    ),
    (
        "missing-required",
        MINIMAL.replace("model: {registry_uri: registry}\n", ""),
        ["bad.yaml", "model", ERR_MISSING],
    ),
    (
        "sql-and-files",
        MINIMAL.replace(
            "  files:", '  sql: {query: "select * from t where ts >= :start and ts < :end"}\n  files:'
        ),
        ["bad.yaml:4", "data", ERR_EXACTLY_ONE_SOURCE.format(got=["sql", "files"])],
    ),
    (
        "sql-without-start",
        MINIMAL.replace(
            '  files: {pattern: "data/{start:%Y-%m-%d}.csv"}',
            '  sql: {query: "select * from t where ts < :end"}',
        ),
        ["bad.yaml:5", "data.sql.query", "must contain the bind parameter :start"],
    ),
    (
        "bad-cron",
        MINIMAL.replace("schedule:\n", "schedule:\n  cron: '61 * * * *'\n"),
        ["bad.yaml:10", "schedule.cron", "invalid cron expression '61 * * * *'", "61 is outside 0-59"],
    ),
    (
        "unknown-spec-version",
        MINIMAL.replace("spec_version: 1", "spec_version: 2"),
        ["bad.yaml:1", "spec_version", ERR_SPEC_VERSION.format(value=2, supported=[1])],
    ),
    (
        "k-below-one",
        MINIMAL + "rumie: {k: 0}\n",
        ["bad.yaml:11", "rumie.k", "greater than or equal to 1", "(got 0)"],
    ),
    ("yaml-syntax", MINIMAL + "rumie: {k: 3\n", ["bad.yaml:12:1", "invalid YAML", "expected ',' or '}'"]),
    ("non-mapping", "- a\n- b\n", [ERR_NOT_MAPPING.format(file="{file}", kind="a list")]),
    ("empty-file", "", ["bad.yaml", "got an empty document"]),
    (
        "unknown-severity",
        MINIMAL + "alerts: {min_severity: urgent}\n",
        ["bad.yaml:11", "alerts.min_severity", "'info', 'warning' or 'critical'", "'urgent'"],
    ),
    (
        "sensitive-not-a-column",
        MINIMAL.replace("sensitive: [sex]", "sensitive: [sex, race]"),
        ["bad.yaml:8", "columns.sensitive", "['race'] not among the columns"],
    ),
    (
        "duplicate-yaml-key",
        MINIMAL + "rumie: {k: 3}\nrumie: {k: 4}\n",
        ["bad.yaml:12", "duplicate key 'rumie' (first at line 11)"],
    ),
    (
        "pattern-without-window",
        MINIMAL.replace("{start:%Y-%m-%d}", "fixed"),
        ["bad.yaml:5", "data.files.pattern", "must contain the window"],
    ),
    (
        "pattern-unknown-placeholder",
        MINIMAL.replace("{start:%Y-%m-%d}", "{day}"),
        ["data.files.pattern", "only use the placeholders {start} and {end}, got {day}"],
    ),
    (
        "baseline-n-zero",
        MINIMAL + "drift:\n  baseline: {kind: trailing, n_windows: 1}\n",
        ["bad.yaml:12", "drift.baseline.n_windows", "greater than or equal to 2"],
    ),
    (
        "range-reversed",
        MINIMAL + "drift:\n  allowed_ranges: {dp_ratio: [1.0, 0.8]}\n",
        ["drift.allowed_ranges.dp_ratio", "low <= high"],
    ),
    (
        "range-unknown-metric",
        MINIMAL + "drift:\n  allowed_ranges: {disparate_impact: [0.8, 1.0]}\n",
        ["drift.allowed_ranges.disparate_impact", "unknown metric 'disparate_impact'"],
    ),
    (
        "duplicate-feature",
        MINIMAL.replace("[age, sex, income]", "[age, sex, age]"),
        ["columns.features", "duplicate column(s) ['age']"],
    ),
    (
        "bad-timezone",
        MINIMAL.replace("schedule:\n", "schedule:\n  timezone: Mars/Base\n"),
        ["schedule.timezone", "unknown timezone 'Mars/Base'"],
    ),
    (
        "bad-window",
        MINIMAL.replace("schedule:\n", "schedule:\n  window: 1 day\n"),
        ["schedule.window", "invalid duration '1 day'"],
    ),
    (
        "unsafe-name",
        MINIMAL.replace("name: credit", "name: ../etc"),
        ["bad.yaml:2", "identity.name", "safe identifier"],
    ),
    (
        "label-metric-without-label",
        MINIMAL + "outcome: {metrics: [dp_ratio, tpr]}\n",
        ["outcome.metrics", "['tpr'] need columns.label"],
    ),
    (
        "validation-without-reference",
        MINIMAL + "validation: {min_rows: 10}\n",
        ["validation.reference_data", "neither reference_data nor reference_window"],
    ),
    (
        "persistence-m-above-n",
        MINIMAL + "drift: {persistence: {m: 3, n: 2}}\n",
        ["drift.persistence.m", "m (3) must be <= n (2)"],
    ),
    (
        "label-is-feature",
        MINIMAL.replace("sensitive: [sex]", "sensitive: [sex]\n  label: income"),
        ["columns.label", "'income' is used as both feature and label"],
    ),
    (
        "unknown-gesd-explainer",
        MINIMAL + "explanations: {gesd: {explainer: shap+foo}}\n",
        ["explanations.gesd.explainer", "unknown GESD explainer component(s) ['foo']"],
    ),
    (
        "misspelled-version-policy",
        MINIMAL.replace("{registry_uri: registry}", "{registry_uri: registry, version: lastest}"),
        ["bad.yaml:3", "model.version", "must be 'latest', a pinned version", "'lastest'"],
    ),
    ("bad-device", MINIMAL + "execution: {device: tpu}\n", ["execution.device", "'auto', 'cpu' or 'cuda'"]),
    (
        "retraining-without-data",
        MINIMAL + "retraining: {enabled: true}\n",
        ["retraining.training_data", "training_data is not set"],
    ),
    (
        "openxai-ground-truth-metric",
        MINIMAL + "explanations: {openxai: {metrics: [PGI, FA, SRA]}}\n",
        ["bad.yaml:11", "explanations.openxai.metrics", "['FA', 'SRA'] need ground-truth feature importances",
         "every window would fail"],
    ),
    (
        "training-data-by-window",
        MINIMAL.replace("sensitive: [sex]", "sensitive: [sex]\n  label: repaid")
        + "retraining:\n  enabled: true\n  training_data: {window: {start: 2025-01-01, end: 2025-07-01}}\n",
        ["bad.yaml:14", "retraining.training_data.window", "training data by window is not supported",
         "set training_data.path"],
    ),
    (
        "retraining-without-label",
        MINIMAL + "retraining: {enabled: true, training_data: {path: train.csv}}\n",
        ["retraining.enabled", "columns.label is not set: FEU trains on labelled rows"],
    ),
    (
        "rumie-significance-alpha-removed",
        MINIMAL + "rumie:\n  significance: {honest_fraction: 0.5, alpha: 0.01}\n",
        ["bad.yaml:12", "rumie.significance.alpha", "'alpha' is no longer a setting here",
         "judged at drift.significance_level"],
    ),
    (
        "rumie-significance-random-state-removed",
        MINIMAL + "rumie:\n  significance:\n    random_state: 3\n",
        ["rumie.significance.random_state", "seeded by rumie.random_state"],
    ),
    (
        "bad-channel",
        MINIMAL + "alerts: {slack_channel: 'Fair Ness'}\n",
        ["alerts.slack_channel", "Slack channel"],
    ),
]


@pytest.mark.parametrize(
    ("text", "needles"), [(t, n) for _, t, n in MALFORMED], ids=[c for c, _, _ in MALFORMED]
)
def test_malformed_spec_message(tmp_path: Path, text: str, needles: list[str]) -> None:
    message = _error(tmp_path, text)
    for needle in needles:
        needle = needle.replace("{file}", str(tmp_path / "bad.yaml"))
        assert needle in message, f"{needle!r} not in {message!r}"
    assert "bad.yaml" in message


def test_several_problems_are_all_listed(tmp_path: Path) -> None:
    message = _error(tmp_path, MINIMAL + "rumie: {k: 0, alpha: 2}\n")
    assert "2 problems" in message
    assert "rumie.k" in message and "rumie.alpha" in message


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.yaml: monitor spec file not found"):
        load_spec(tmp_path / "nope.yaml")
    assert ERR_FILE_MISSING.startswith("{file}")


def test_spec_is_frozen(tmp_path: Path) -> None:
    spec = parse_spec(MINIMAL)
    with pytest.raises(Exception, match="frozen"):
        spec.rumie.k = 3  # type: ignore[misc]


def test_fingerprint_is_content_based(tmp_path: Path) -> None:
    a = parse_spec(MINIMAL)
    # same content, different formatting and key order → same fingerprint
    reordered = MINIMAL.replace(
        "  features: [age, sex, income]\n  sensitive: [sex]",
        "  sensitive: [sex]\n  features: [age, sex, income]",
    )
    b = parse_spec(reordered + "# comment\n")
    assert a.fingerprint == b.fingerprint and len(a.fingerprint) == 64
    # explicit defaults are the same spec
    assert parse_spec(MINIMAL + "rumie: {k: 5}\n").fingerprint == a.fingerprint
    assert parse_spec(MINIMAL + "rumie: {k: 4}\n").fingerprint != a.fingerprint
    steps = parse_spec(MINIMAL + "execution: {layout: steps}\n")  # how a window runs, not what it stores
    assert steps.fingerprint == a.fingerprint and steps != a
    sql = MINIMAL.replace('  files: {pattern: "data/{start:%Y-%m-%d}.csv"}',
                          '  sql: {query: "SELECT * FROM t WHERE ts >= :start AND ts < :end"}')
    assert sql != MINIMAL  # the spec above reads files
    ready = sql.replace(':end"}', ':end", ready_query: "SELECT true WHERE :end < now()"}')
    assert parse_spec(ready).fingerprint == parse_spec(sql).fingerprint  # when a window runs, not what it stores
    assert hash(a) == hash(b) and len({a, b}) == 1  # hashable by content (usable as a cache key)
    # canonical JSON round trip gives an equal spec
    again = MonitorSpec.model_validate_json(a.canonical_json())
    assert again == a and again.fingerprint == a.fingerprint


def test_paths_resolve_against_spec_folder_and_env(tmp_path: Path) -> None:
    folder = tmp_path / "monitors"
    folder.mkdir()
    (folder / "credit.yaml").write_text(MINIMAL.replace("data/{start", "${DATA_ROOT:-../data}/{start"))
    spec = load_spec(folder / "credit.yaml")
    files = spec.data.files
    assert files is not None
    raw = files.path_for(dt.datetime(2026, 1, 5), dt.datetime(2026, 1, 6))
    assert raw == "${DATA_ROOT:-../data}/2026-01-05.csv"
    assert spec.resolve_path(raw, env={}) == str(tmp_path / "data" / "2026-01-05.csv")
    assert spec.resolve_path(raw, env={"DATA_ROOT": "/srv/x"}) == "/srv/x/2026-01-05.csv"
    assert spec.resolve_path("s3://bucket/registry") == "s3://bucket/registry"
    assert spec.resolve_path("registry") == str(folder / "registry")
    assert spec.suite_location == str(Path.home() / ".fairmon" / "artifacts" / "credit" / "suite.json")
    with pytest.raises(ConfigError, match="environment variable NOPE is not set") as info:
        spec.resolve_path("${NOPE}/x", env={})
    assert "credit.yaml" in str(info.value)


def test_example_specs_all_load() -> None:
    specs = load_specs(REPO / "monitors")
    names = sorted(s.name for s in specs)
    assert names == ["adult", "compas", "demo", "german"]
    by = {s.name: s for s in specs}
    assert by["adult"].data.kind == "sql" and by["adult"].drift.baseline.kind == "reference"
    assert by["german"].model.version == "v3" and by["german"].favorable.score_threshold == 0.5
    assert by["compas"].favorable.class_ == "Low" and by["compas"].favorable.label_value == 0
    assert by["demo"].validation.enabled and by["demo"].retraining.enabled


def test_demo_spec_matches_the_stream_columns() -> None:
    from fairmon import datasets as stream

    spec = load_spec(REPO / "monitors" / "demo.yaml")
    assert spec.columns.features == tuple(stream.FEATURE_COLUMNS)
    assert spec.columns.sensitive == tuple(stream.SENSITIVE_COLUMNS)
    assert spec.columns.label == stream.LABEL_COLUMN


def test_load_specs_rejects_duplicate_names(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(MINIMAL)
    (tmp_path / "b.yaml").write_text(MINIMAL)
    (tmp_path / "c.yaml").write_text("spec_version: 1\n")
    results = scan_specs(tmp_path)
    assert [type(r).__name__ for _, r in results] == ["MonitorSpec", "ConfigError", "ConfigError"]
    assert str(results[1][1]) == ERR_DUPLICATE_NAME.format(
        file=tmp_path / "b.yaml", name="credit", other=tmp_path / "a.yaml"
    )
    with pytest.raises(ConfigError, match="b.yaml: identity.name 'credit' is already used"):
        load_specs(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no monitor specs"):
        load_specs(tmp_path / "empty")
    with pytest.raises(ConfigError, match="folder not found"):
        load_specs(tmp_path / "missing")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1d", dt.timedelta(days=1)),
        ("12h", dt.timedelta(hours=12)),
        ("1w", dt.timedelta(weeks=1)),
        ("P1DT6H", dt.timedelta(days=1, hours=6)),
    ],
)
def test_parse_duration(text: str, expected: dt.timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("expr", ["0 0 * * *", "*/15 2-4 1,15 jan-mar mon-fri", "@daily", "30 6 * * 0"])
def test_valid_cron(expr: str) -> None:
    assert validate_cron(expr) == expr


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("0 0 * *", "expected 5 fields"),
        ("0 25 * * *", "hour field"),
        ("*/0 * * * *", "bad step"),
        ("@once", "unknown preset"),
        ("0 0 * foo *", "month field"),
    ],
)
def test_invalid_cron(expr: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        validate_cron(expr)


def test_pinned_version_accepts_an_integer() -> None:
    spec = parse_spec(MINIMAL.replace("{registry_uri: registry}", "{registry_uri: registry, version: 3}"))
    assert spec.model.version == "3"


def test_score_threshold_and_class_are_exclusive(tmp_path: Path) -> None:
    msg = _error(tmp_path, MINIMAL + "favorable: {class: 1, score_threshold: 0.5}\n")
    assert "favorable" in msg and "either 'class' or 'score_threshold'" in msg


def test_committed_json_schema_is_current() -> None:
    import json

    from fairmon.config import spec_json_schema

    committed = json.loads((REPO / "monitors" / "monitor-spec.schema.json").read_text())
    assert committed == json.loads(json.dumps(spec_json_schema())), (
        'regenerate: python -c "import json; from fairmon.config import spec_json_schema; '
        "open('monitors/monitor-spec.schema.json','w').write(json.dumps(spec_json_schema(), indent=1, sort_keys=True)+'\\n')\""
    )


def test_yaml_merge_keys_work() -> None:
    text = MINIMAL.replace(
        "schedule:\n  start_date: 2026-01-01",
        "schedule:\n  <<: {cron: '0 1 * * *', start_date: 2025-01-01}\n  start_date: 2026-01-01",
    )
    spec = parse_spec(text)
    assert spec.schedule.cron == "0 1 * * *" and spec.schedule.start_date == dt.date(2026, 1, 1)


def test_a_file_read_again_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load_spec keeps parsed specs by file, text, working directory and the variables the text names:
    the same file gives the same (frozen) object; an edit, a named variable's change or another
    working directory parse anew; a broken file raises every time."""
    import fairmon.config._loading as loading

    calls: list[str] = []
    real = loading.parse_spec

    def counting(text: str, *, source: str | Path = "<string>") -> MonitorSpec:
        calls.append(str(source))
        return real(text, source=source)

    monkeypatch.setattr(loading, "parse_spec", counting)
    path = tmp_path / "credit.yaml"
    path.write_text(MINIMAL.replace("data/{start", "${DATA_ROOT:-../data}/{start"))
    first = load_spec(path)
    assert load_spec(str(path)) is first and len(calls) == 1
    monkeypatch.setenv("AIRFLOW_CTX_DAG_ID", "fairmon_credit")  # a variable the spec does not name
    assert load_spec(path) is first and len(calls) == 1
    monkeypatch.setenv("DATA_ROOT", "/srv/data")
    assert load_spec(path) is not first and len(calls) == 2
    path.write_text(MINIMAL.replace("credit", "credit2"))  # same file, new text
    assert load_spec(path).name == "credit2" and len(calls) == 3
    monkeypatch.chdir(tmp_path)
    load_spec(path)
    assert len(calls) == 4
    path.write_text("spec_version: 1\n")
    for _ in range(2):
        with pytest.raises(ConfigError):
            load_spec(path)
    assert len(calls) == 6
