"""Hostile and oversized specs (issue 15, items 9 and 10): cost limits, YAML budgets, metric domains and
URI schemes, each refused at load with the file and field named and a bounded message."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path
from typing import Any

import pytest
from config_minimal import MINIMAL
from config_minimal import spec_error as _error

from fairmon.config import (
    COST_LIMITS,
    DRIFT_METRICS,
    ERR_COST_LIMIT,
    ERR_FILE_TOO_LARGE,
    ERR_RANGE_DOMAIN,
    KNOWN_URI_SCHEMES,
    MAX_SPEC_BYTES,
    MAX_YAML_NODES,
    METRIC_DOMAINS,
    MonitorSpec,
    load_spec,
    load_specs,
    parse_spec,
    spec_json_schema,
)
from fairmon.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def _nested(path: str, value: Any) -> str:
    """YAML flow mapping setting ``path`` (dotted) to ``value`` (a trailing baseline where needed)."""
    parts = path.split(".")
    text = repr(value) if not isinstance(value, tuple) else str(list(value))
    for part in reversed(parts):
        extra = {"n_windows": "kind: trailing, ", "max_categories": "enabled: false, "}.get(part, "")
        text = f"{{{extra}{part}: {text}}}"
    return text[1:-1].replace(": ", ":\n  ", 1) + "\n"


def _spec_with(path: str, value: Any) -> str:
    """MINIMAL with ``path`` set; a ``data.*`` field joins MINIMAL's own data section."""
    if path.startswith("data."):
        files = '  files: {pattern: "data/{start:%Y-%m-%d}.csv"}\n'
        return MINIMAL.replace(files, files + f"  {path.split('.', 1)[1]}: {value!r}\n")
    return MINIMAL + _nested(path, value)


def _limit_value(path: str, value: int) -> Any:
    return (5, value) if path == "retraining.bounds.epochs" else value


# ---- item 9: cost limits ---------------------------------------------------------------------------------
def test_huge_bootstrap_is_refused_naming_file_field_value_and_limit(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    msg = _error(tmp_path, MINIMAL + "outcome: {bootstrap: 100000000}\n")
    assert time.perf_counter() - t0 < 1.0
    assert msg.startswith("bad.yaml:11: outcome.bootstrap: ") or f"{tmp_path}" in msg
    assert "outcome.bootstrap" in msg and "bad.yaml:11" in msg
    assert ERR_COST_LIMIT.format(value=100000000, limit=COST_LIMITS["outcome.bootstrap"]) in msg


@pytest.mark.parametrize("path", sorted(COST_LIMITS))
def test_every_cost_limit_is_enforced_at_load(path: str) -> None:
    limit = COST_LIMITS[path]
    with pytest.raises(ConfigError) as info:
        parse_spec(_spec_with(path, _limit_value(path, limit + 1)), source="limits.yaml")
    msg = str(info.value)
    assert path in msg and "limits.yaml" in msg
    assert ERR_COST_LIMIT.format(value=limit + 1, limit=limit) in msg
    # the limit itself is allowed
    parse_spec(_spec_with(path, _limit_value(path, limit)), source="limits.yaml")


def test_cost_limits_sit_well_above_defaults_and_examples() -> None:
    specs = [MonitorSpec.model_validate(parse_spec(MINIMAL).model_dump(by_alias=True)),
             *load_specs(REPO / "monitors")]
    for path, limit in COST_LIMITS.items():
        for spec in specs:
            value: Any = spec
            for part in path.split("."):
                value = getattr(value, part, None)  # a reference baseline has no n_windows
            if isinstance(value, tuple):
                value = value[1]
            if value is not None:
                assert value * 10 <= limit, (spec.name, path, value, limit)


def test_cost_limits_are_in_the_json_schema() -> None:
    schema = spec_json_schema()
    for path, limit in COST_LIMITS.items():
        if path == "retraining.bounds.epochs":
            continue  # a [low, high] pair: checked by its validator
        node: dict[str, Any] = schema
        for part in path.split("."):
            ref = node.get("$ref") or next(
                (a["$ref"] for a in node.get("anyOf", node.get("oneOf", [])) if "$ref" in a), None
            )
            if part == "n_windows":
                ref = "#/$defs/TrailingBaseline"
            if ref is not None:
                node = schema["$defs"][ref.rsplit("/", 1)[1]]
            node = node["properties"][part]
        maxima = [node.get("maximum")] + [a.get("maximum") for a in node.get("anyOf", [])]
        assert limit in maxima, (path, node)


def test_readme_limits_table_lists_every_limit() -> None:
    readme = (REPO / "monitors" / "README.md").read_text()
    section = readme.split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\|\s*`([a-z_.]+)`\s*\|\s*([^|]+)\|\s*([\d,]+)\s*\|", line)
        if m:
            rows[m.group(1)] = int(m.group(3).replace(",", ""))
    assert {k: v for k, v in rows.items() if k in COST_LIMITS} == COST_LIMITS
    assert f"{MAX_SPEC_BYTES:,}" in section and f"{MAX_YAML_NODES:,}" in section


# ---- item 9: YAML size, aliases, depth, bounded messages ------------------------------------------------
def _alias_bomb() -> str:
    """'Billion laughs': 15 levels of 14 aliases each, 14**15 leaves in about 2.5 KB."""
    lines = ["laughs_00: &laughs_00 [" + ", ".join(["lol"] * 14) + "]"]
    for i in range(1, 15):
        lines.append(f"laughs_{i:02d}: &laughs_{i:02d} [" + ", ".join([f"*laughs_{i - 1:02d}"] * 14) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["top", "tags"])
def test_yaml_alias_bomb_is_refused_within_a_second(tmp_path: Path, where: str) -> None:
    bomb = _alias_bomb()
    if where == "top":
        text = MINIMAL + bomb
    else:  # the bomb under a field pydantic would walk
        text = "bombs:\n" + "".join(f"  {line}\n" for line in bomb.splitlines()) + MINIMAL.replace(
            "identity: {name: credit}", "identity: {name: credit, tags: *laughs_14}"
        )
    assert 2000 < len(bomb) < 3000  # the 2.5 KB bomb of the issue
    t0 = time.perf_counter()
    msg = _error(tmp_path, text)
    assert time.perf_counter() - t0 < 1.0
    assert "bad.yaml:" in msg and "aliases expand to more than" in msg and len(msg) < 300


def test_yaml_aliases_within_budget_still_work() -> None:
    text = MINIMAL.replace("columns:\n  features: [age, sex, income]", "columns:\n  features: &f [age, sex, income]")
    spec = parse_spec(text + "rumie: {attributes: *f}\n")
    assert spec.rumie.attributes == ("age", "sex", "income")


def test_recursive_alias_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="x.yaml:1:.*invalid YAML: recursive alias"):
        parse_spec("a: &a [*a]\n", source="x.yaml")


def test_spec_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(MINIMAL + "#" + "x" * MAX_SPEC_BYTES + "\n")
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert time.perf_counter() - t0 < 1.0
    size = path.stat().st_size
    assert str(info.value) == ERR_FILE_TOO_LARGE.format(file=path, size=size, limit=MAX_SPEC_BYTES)
    with pytest.raises(ConfigError, match="big-text: monitor spec is .* bytes; the limit is"):
        parse_spec(path.read_text(), source="big-text")


def test_deep_nesting_is_a_config_error_not_a_recursion_error() -> None:
    with pytest.raises(ConfigError, match=r"deep\.yaml:1:\d+: invalid YAML: collections nested more than 64 deep"):
        parse_spec("a: " + "[" * 3000 + "]" * 3000 + "\n", source="deep.yaml")


def test_overlong_integer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="n.yaml:0:0: invalid YAML: Exceeds the limit"):
        parse_spec(MINIMAL + "outcome: {bootstrap: " + "9" * 5000 + "}\n", source="n.yaml")


def test_messages_quote_a_bounded_excerpt(tmp_path: Path) -> None:
    name = "X" * 100_000
    msg = _error(tmp_path, MINIMAL.replace("name: credit", f"name: '{name}'"))
    assert "identity.name" in msg and "XXXX" in msg and len(msg) < 500
    channel = "#" + "a b" * 50_000
    msg = _error(tmp_path, MINIMAL + f"alerts: {{slack_channel: '{channel}'}}\n")
    assert "alerts.slack_channel" in msg and len(msg) < 500


def test_thousands_of_problems_list_a_few_and_count_the_rest(tmp_path: Path) -> None:
    msg = _error(tmp_path, MINIMAL + "".join(f"k{i}: 1\n" for i in range(300)))
    assert msg.startswith(f"{tmp_path / 'bad.yaml'}: 300 problems in monitor spec:")
    assert "unknown key 'k19'" in msg and "unknown key 'k20'" not in msg
    assert msg.endswith("  ... and 280 more")


# ---- item 10: allowed ranges in the metric's domain ---------------------------------------------------------
@pytest.mark.parametrize(
    ("metric", "bounds"),
    [("dp_ratio", "[-1, -0.5]"), ("dp_ratio", "[0.8, 1.25]"), ("dp_difference", "[0, 2]"),
     ("rumie_honest_dscore", "[-2, 0.3]"), ("gesd", "[0, .inf]"), ("tpr", "[.nan, .nan]")],
)
def test_allowed_range_outside_the_metric_domain_is_refused(tmp_path: Path, metric: str, bounds: str) -> None:
    msg = _error(tmp_path, MINIMAL + f"drift:\n  allowed_ranges: {{{metric}: {bounds}}}\n")
    low, high = METRIC_DOMAINS[metric]
    assert f"bad.yaml:12: drift.allowed_ranges.{metric}: " in msg
    assert f"for '{metric}' lies outside the metric's domain [{low}, {high}]" in msg


def test_dp_ratio_minus_one_message_is_exact() -> None:
    with pytest.raises(ConfigError) as info:
        parse_spec(MINIMAL + "drift:\n  allowed_ranges: {dp_ratio: [-1, -0.5]}\n", source="d.yaml")
    assert str(info.value) == "d.yaml:12: drift.allowed_ranges.dp_ratio: " + ERR_RANGE_DOMAIN.format(
        value=[-1.0, -0.5], metric="dp_ratio", low=0.0, high=1.0
    )


def test_ranges_inside_the_domain_are_accepted() -> None:
    spec = parse_spec(MINIMAL + "drift:\n  allowed_ranges: {dp_ratio: [0.8, 1], rumie_dscore: [-0.1, 0.2], gesd: [0, 0.05]}\n")
    assert spec.drift.allowed_ranges["rumie_dscore"].range == (-0.1, 0.2)


def test_every_drift_metric_has_a_domain() -> None:
    assert set(METRIC_DOMAINS) == set(DRIFT_METRICS)


# ---- item 10: URI schemes ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new", "field", "line"),
    [
        ("registry_uri: registry", "registry_uri: 'foo://bucket/models'", "model.registry_uri", 3),
        ('pattern: "data/', 'pattern: "bogus://data/', "data.files.pattern", 5),
        ("schedule:\n", "execution: {artifact_location: 'nope://x'}\nschedule:\n", "execution.artifact_location", 9),
    ],
)
def test_unknown_uri_scheme_names_file_and_field(tmp_path: Path, old: str, new: str, field: str, line: int) -> None:
    msg = _error(tmp_path, MINIMAL.replace(old, new))
    assert f"bad.yaml:{line}: {field}: unknown URI scheme" in msg
    assert "use a local path or one of:" in msg and "s3" in msg


def test_unknown_scheme_in_reference_and_training_paths(tmp_path: Path) -> None:
    text = MINIMAL.replace("features: [age, sex, income]", "features: [age, sex, income]\n  label: y")
    msg = _error(tmp_path, text + "validation: {reference_data: 'x1://r.csv'}\n")
    assert "validation.reference_data: unknown URI scheme 'x1'" in msg
    msg = _error(tmp_path, text + "retraining: {enabled: true, training_data: {path: 'x2://t.csv'}}\n")
    assert "retraining.training_data.path: unknown URI scheme 'x2'" in msg


def test_known_schemes_and_variables_load() -> None:
    spec = parse_spec(MINIMAL.replace("registry_uri: registry", "registry_uri: 's3://bucket/models'"))
    assert spec.model.registry_uri == "s3://bucket/models"
    spec = parse_spec(MINIMAL.replace("registry_uri: registry", "registry_uri: 'simplecache::gs://b/m'"))
    assert spec.model.registry_uri == "simplecache::gs://b/m"
    spec = parse_spec(MINIMAL.replace("registry_uri: registry", "registry_uri: '${ROOT}/models'"), source=Path("m.yaml"))
    assert spec.resolve_path(spec.model.registry_uri, env={"ROOT": "memory://r"}) == "memory://r/models"
    with pytest.raises(ConfigError, match=r"m\.yaml: unknown URI scheme 'foo' in 'foo://r/models'"):
        spec.resolve_path(spec.model.registry_uri, env={"ROOT": "foo://r"})


def test_known_schemes_are_fsspec_protocols() -> None:
    from fsspec.registry import known_implementations  # heavy-ish; only this test needs it

    assert KNOWN_URI_SCHEMES <= set(known_implementations)


# ---- layering --------------------------------------------------------------------------------------------------
def test_config_does_not_import_feu_and_feu_uses_the_config_bounds() -> None:
    import subprocess
    import sys

    code = "import fairmon.config, sys; print(sorted(m for m in sys.modules if m.startswith('fairmon.feu')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    import fairmon.config as config
    from fairmon.feu import settings

    assert settings.FEUSettings().lr_bounds is config.LR_BOUNDS
    assert settings.FEUSettings().epoch_bounds is config.EPOCH_BOUNDS
    assert settings.FEUSettings().threshold_bounds is config.THRESHOLD_BOUNDS


def test_env_var_names_are_defined_once() -> None:
    defined: dict[str, list[str]] = {}
    for path in [*(REPO / "fairmon").rglob("*.py"), *(REPO / "dags").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str) and re.fullmatch(r"FAIRMON_[A-Z_]+", node.value.value)):
                defined.setdefault(node.value.value, []).append(str(path.relative_to(REPO)))
    elsewhere = {name: files for name, files in defined.items() if files != ["fairmon/config/_env.py"]}
    assert elsewhere == {}
    assert "FAIRMON_DATABASE_URL" in defined and "FAIRMON_SLACK_TOKEN" in defined


def test_an_openxai_min_group_size_no_sample_can_meet_is_refused(tmp_path: Path) -> None:
    """Session 24 review: with sample_size 5 and min_group_size 10 every OpenXAI gap is NULL, silently."""
    msg = _error(tmp_path, MINIMAL + "explanations: {openxai: {sample_size: 8, min_group_size: 5}}\n")
    assert "bad.yaml:11: explanations.openxai: min_group_size 5 needs at least two groups of that size among " \
           "sample_size 8 rows (2 x 5 > 8)" in msg and "lower min_group_size or raise sample_size" in msg
