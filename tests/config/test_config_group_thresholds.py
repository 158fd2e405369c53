"""The ``retraining.group_thresholds`` spec field (FEU's opt-in group-specific thresholds): default off,
reaches ``FEUSettings``, a non-boolean is refused at load naming the file and the field, JSON schema."""

from __future__ import annotations

import pytest
from config_minimal import MINIMAL

from fairmon.config import parse_spec, spec_json_schema
from fairmon.errors import ConfigError
from fairmon.feu import FEUSettings


def test_spec_field_default_value_and_bad_type() -> None:
    assert parse_spec(MINIMAL).retraining.group_thresholds is False
    rt = parse_spec(MINIMAL + "retraining: {group_thresholds: true}\n").retraining
    assert FEUSettings.from_spec(rt).group_thresholds is True
    assert FEUSettings.from_spec(parse_spec(MINIMAL).retraining).group_thresholds is False
    for bad in ("maybe", "1"):
        with pytest.raises(ConfigError) as info:
            parse_spec(MINIMAL + f"retraining: {{group_thresholds: {bad}}}\n", source="bad.yaml")
        assert "bad.yaml:11" in str(info.value) and "retraining.group_thresholds" in str(info.value), str(info.value)
    prop = spec_json_schema()["$defs"]["RetrainingSpec"]["properties"]["group_thresholds"]
    assert prop["type"] == "boolean" and prop["default"] is False
