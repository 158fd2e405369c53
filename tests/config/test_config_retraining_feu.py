"""The ``retraining`` spec fields that make an FEU candidate deployable (issue 16): utility objective,
positive-rate band, utility tolerance and the fair-training weight range — defaults, nulls, bad values
refused at load naming the field, the JSON schema, and what ``FEUSettings.from_spec`` makes of them."""

from __future__ import annotations

from typing import get_args

import pytest
from config_minimal import MINIMAL

from fairmon.config import parse_spec, spec_json_schema
from fairmon.config._limits import MAX_FAIRNESS_WEIGHT
from fairmon.config._messages import ERR_ENSEMBLE_FOLDS, ERR_WEIGHT_BOUNDS
from fairmon.config._retraining import RetrainingSpec, Utility
from fairmon.errors import ConfigError
from fairmon.feu import FEUSettings
from fairmon.feu.settings import UTILITIES


def _refused(section: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_spec(MINIMAL + "retraining: " + section + "\n", source="bad.yaml")
    return str(info.value)


def test_defaults_are_feu_settings_defaults() -> None:
    spec, st = RetrainingSpec(), FEUSettings()
    assert (spec.utility, spec.positive_rate_band, spec.utility_tolerance, spec.fairness_weight_bounds) == (
        st.utility, st.positive_rate_band, st.utility_tolerance, st.fairness_weight_bounds)
    assert get_args(Utility) == UTILITIES
    assert FEUSettings.from_spec(RetrainingSpec()) == FEUSettings()


def test_spec_values_reach_feu_settings_and_null_switches_off() -> None:
    rt = parse_spec(MINIMAL + "retraining: {utility: f1, positive_rate_band: 0.05, utility_tolerance: 0.01, "
                    "fairness_weight_bounds: [0.5, 4]}\n").retraining
    st = FEUSettings.from_spec(rt)
    assert (st.utility, st.positive_rate_band, st.utility_tolerance, st.fairness_weight_bounds) == (
        "f1", 0.05, 0.01, (0.5, 4.0))
    paper = parse_spec(MINIMAL + "retraining: {utility: auc, positive_rate_band: null, utility_tolerance: null, "
                       "fairness_weight_bounds: null}\n").retraining
    st = FEUSettings.from_spec(paper)
    assert st.paper_mode and st.fairness_weight_bounds is None
    assert (st.utility, st.positive_rate_band, st.utility_tolerance) == ("auc", None, None)
    # a mapping without the keys keeps the defaults; with an explicit None switches off
    assert FEUSettings.from_spec({}).positive_rate_band == 0.10
    assert FEUSettings.from_spec({"positive_rate_band": None}).positive_rate_band is None


@pytest.mark.parametrize(
    ("section", "field", "problem"),
    [
        ("{utility: auroc}", "retraining.utility", "'balanced_accuracy', 'f1', 'accuracy' or 'auc'"),
        ("{positive_rate_band: 1.5}", "retraining.positive_rate_band", "less than or equal to 1"),
        ("{positive_rate_band: -0.1}", "retraining.positive_rate_band", "greater than or equal to 0"),
        ("{utility_tolerance: 2}", "retraining.utility_tolerance", "less than or equal to 1"),
        ("{utility_tolerance: lots}", "retraining.utility_tolerance", "lots"),
        ("{fairness_weight_bounds: [5, 1]}", "retraining.fairness_weight_bounds",
         ERR_WEIGHT_BOUNDS.format(value=[5.0, 1.0])),
        ("{fairness_weight_bounds: [-1, 1]}", "retraining.fairness_weight_bounds", "greater than or equal to 0"),
        (f"{{fairness_weight_bounds: [0, {MAX_FAIRNESS_WEIGHT + 1}]}}", "retraining.fairness_weight_bounds",
         f"less than or equal to {MAX_FAIRNESS_WEIGHT}"),
        ("{fairness_weight_bounds: [1, 2, 3]}", "retraining.fairness_weight_bounds", "bad.yaml:11"),
    ],
)
def test_bad_values_are_refused_naming_file_and_field(section: str, field: str, problem: str) -> None:
    msg = _refused(section)
    assert "bad.yaml:11" in msg and field in msg and problem in msg, msg


def test_fields_are_in_the_json_schema() -> None:
    props = spec_json_schema()["$defs"]["RetrainingSpec"]["properties"]
    assert props["utility"]["enum"] == list(UTILITIES) and props["utility"]["default"] == "balanced_accuracy"
    for name, default in (("positive_rate_band", 0.1), ("utility_tolerance", 0.02)):
        number = next(a for a in props[name]["anyOf"] if a.get("type") == "number")
        assert (number["minimum"], number["maximum"], props[name]["default"]) == (0.0, 1.0, default)
        assert {"type": "null"} in props[name]["anyOf"]
    pair = next(a for a in props["fairness_weight_bounds"]["anyOf"] if a.get("type") == "array")
    assert [i["maximum"] for i in pair["prefixItems"]] == [MAX_FAIRNESS_WEIGHT] * 2


def test_a_feu_budget_the_airflow_timeouts_would_cut_is_refused_naming_the_fields() -> None:
    """The FEU step runs as a heavy task (timeout 4 x ``execution.task_timeout_s``) inside a window's run (timeout
    90% of the window); the budget may take 80% of the lower, the rest is for what runs after it."""
    base = MINIMAL.replace("  sensitive: [sex]\n", "  sensitive: [sex]\n  label: y\n")
    feu = "retraining: {{enabled: true, training_data: {{path: t.csv}}, time_budget_s: {}}}\n"
    short_task = base + "execution: {task_timeout_s: 600}\n"
    ok = parse_spec(short_task + feu.format(1920))  # 80% of 2,400 s
    assert ok.retraining.time_budget_s == 1920 and ok.execution.heavy_timeout_s == 2400
    with pytest.raises(ConfigError) as info:
        parse_spec(short_task + feu.format(1921), source="bad.yaml")
    msg = str(info.value)
    assert "bad.yaml" in msg and "retraining.time_budget_s: 1921 s is more than 80% of the FEU step's limit of 2400 s" in msg
    assert "4 x execution.task_timeout_s 600 = 2400 s" in msg and "at most 1920" in msg
    assert "raise execution.task_timeout_s" in msg
    hourly = base.replace("  start_date: 2026-01-01\n", "  start_date: 2026-01-01\n  cron: '0 * * * *'\n  window: 1h\n")
    with pytest.raises(ConfigError) as info:  # the run's limit, 3,240 s, is below the task's 14,400 s
        parse_spec(hourly + feu.format(3000), source="hourly.yaml")
    assert "limit of 3240 s" in str(info.value) and "90% of the shortest schedule interval, 1h = 3240 s" in str(info.value)
    assert "longer schedule interval (schedule.cron)" in str(info.value)  # the binding limit's advice
    assert "raise execution.task_timeout_s" not in str(info.value)
    assert parse_spec(hourly + feu.format(2592)).retraining.time_budget_s == 2592
    # the next run is due one schedule interval later, whatever the window: a daily cron's 1h window
    # may use the daily limit, a 7d rolling window on an hourly cron only the hour's
    daily_short = base.replace("  start_date: 2026-01-01\n", "  start_date: 2026-01-01\n  window: 1h\n")
    assert parse_spec(daily_short + feu.format(3000)).retraining.time_budget_s == 3000
    rolling = hourly.replace("window: 1h", "window: 7d")
    with pytest.raises(ConfigError, match="limit of 3240 s"):
        parse_spec(rolling + feu.format(3000), source="rolling.yaml")
    # with retraining off the budget is never used
    off = "retraining: {enabled: false, time_budget_s: 9000}\n"
    assert parse_spec(short_task + off).retraining.time_budget_s == 9000


def test_two_folds_are_refused_for_the_fold_ensemble_whose_nested_check_needs_three() -> None:
    base = MINIMAL.replace("  sensitive: [sex]\n", "  sensitive: [sex]\n  label: y\n")
    feu = "retraining: {{enabled: true, training_data: {{path: t.csv}}, cv_folds: 2{}}}\n"
    with pytest.raises(ConfigError) as info:
        parse_spec(base + feu.format(""), source="two.yaml")
    msg = str(info.value)
    assert "two.yaml" in msg and "retraining.cv_folds" in msg
    assert ERR_ENSEMBLE_FOLDS.format(folds=2) in msg
    assert parse_spec(base + feu.format(", cv_deploy: searched")).retraining.cv_folds == 2
