"""A spec that does not fit the window's data fails the window with an error naming the field, column
and values — never a pandas traceback, never metrics that read as "perfectly fair".

Each case is one window of the small demo monitor run through :func:`fairmon.pipeline.run_window` into
a fresh Postgres database: a favorable class the model never predicts, a label class the label column
never holds, a continuous column declared protected, and (with validation off) a missing column.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS / "pipeline") not in sys.path:
    sys.path.insert(0, str(_TESTS / "pipeline"))

from pipeline_demo_setup import SMALL, demo_copy, prepare_demo  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

#: the later steps play no part here; leaving them out keeps each window to seconds
FAST = {**SMALL, "rumie.enabled": False, "explanations.enabled": False, "retraining.enabled": False}


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("mismatch") / "demo"
    _, manifest = prepare_demo(out, windows=3, drift_window=2)
    return out, manifest


def _run(template: tuple[Path, dict], tmp_path: Path, db_url: str, overrides: dict[str, Any],
         corrupt: Any = None) -> tuple[Any, Any, int, Path]:
    """Run the first window with ``overrides`` (and the partition passed through ``corrupt``); returns
    the outcome, the run row, the number of stored metric/evidence rows and the partition path."""
    from fairmon.pipeline import run_window

    src, manifest = template
    spec, w = demo_copy(src, manifest, tmp_path / "demo", {**FAST, **overrides}, db_url, corrupt)
    part = tmp_path / "demo" / "stream" / f"{w['start'][:10]}.csv"
    o = run_window(spec, w["start"], db_url=db_url, notify=False)
    eng = sa.create_engine(db_url)
    with eng.connect() as c:
        run = c.execute(sa.text("SELECT status, error FROM runs")).one()
        n = c.execute(sa.text("SELECT (SELECT count(*) FROM metrics) + (SELECT count(*) FROM evidence)")).scalar_one()
    eng.dispose()
    return o, run, int(n), part


def _assert_failed(o: Any, run: Any, n: int, step: str, error_class: str, *fragments: str) -> None:
    assert o.status == "failed" and run.status == "failed", (o.status, run.error)
    assert run.error.startswith(f"{step}: {error_class}: "), run.error
    for frag in fragments:
        assert frag in run.error, run.error
    assert "Traceback" not in run.error
    assert n == 0  # nothing stored as if it were a result


@pytest.mark.parametrize("value", ["yes", 2])
def test_a_favorable_class_the_model_never_predicts_fails_the_window(
    value: Any, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    o, run, n, _ = _run(demo_template, tmp_path, fresh_database_url,
                        {"favorable.class": value, "favorable.label_class": 1})
    _assert_failed(o, run, n, "predict", "ConfigError",
                   f"favorable.class {value!r} is not a class of model demo:", "(classes [0, 1])")


def test_a_label_class_absent_from_the_label_column_fails_the_window(
    demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    o, run, n, _ = _run(demo_template, tmp_path, fresh_database_url, {"favorable.label_class": "yes"})
    _assert_failed(o, run, n, "predict", "ConfigError",
                   "label column 'repaid' has no value equal to favorable.label_class 'yes' (values [0, 1])")


def test_a_window_whose_labels_are_all_unfavorable_is_computed_with_undefined_tpr(
    demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    """Everyone unfavorable is real data: FPR is the selection rate, TPR/FNR/EOP are NULL (undefined)."""
    o, run, n, _ = _run(demo_template, tmp_path, fresh_database_url, {}, corrupt=lambda df: df.assign(repaid=0))
    assert o.status == "succeeded" and run.error is None, run.error
    eng = sa.create_engine(fresh_database_url)
    with eng.connect() as c:
        rows = c.execute(sa.text(
            "SELECT metric, attribute, group_key AS grp, value FROM metrics WHERE attribute = 'sex' AND metric IN "
            "('selection_rate', 'tpr', 'fpr', 'fnr', 'eop_difference')")).all()
    eng.dispose()
    by = {(r.metric, r.grp): r.value for r in rows}
    for g in ("female", "male"):
        assert by[("fpr", g)] == pytest.approx(by[("selection_rate", g)])
        assert by[("tpr", g)] is None and by[("fnr", g)] is None
    assert by[("eop_difference", "")] is None


@pytest.mark.parametrize("validation", [True, False])
def test_a_continuous_sensitive_column_fails_the_window(
    validation: bool, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    o, run, n, _ = _run(demo_template, tmp_path, fresh_database_url,
                        {"columns.sensitive": ["sex", "income"], "validation.enabled": validation})
    _assert_failed(o, run, n, "validate", "ConfigError", "sensitive column 'income' has ",
                   "distinct numeric values", "protected attributes must be categorical")


@pytest.mark.parametrize(("column", "fields"), [("income", "(columns.features)"),
                                                ("sex", "(columns.extra, columns.sensitive)")])
def test_a_missing_column_without_validation_names_the_partition_and_the_column(
    column: str, fields: str, demo_template: tuple[Path, dict], tmp_path: Path, fresh_database_url: str,
) -> None:
    o, run, n, part = _run(demo_template, tmp_path, fresh_database_url, {"validation.enabled": False},
                           corrupt=lambda df: df.drop(columns=[column]))
    _assert_failed(o, run, n, "validate", "SchemaError", f"lacks column(s) '{column}' {fields}", str(part),
                   "window data for demo 20")
