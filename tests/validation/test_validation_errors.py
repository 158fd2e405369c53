"""Great Expectations and file-system errors reach the caller as FairmonErrors, never raw."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fairmon.errors import ConfigError, DataValidationError, FairmonError, ValidationEngineError
from fairmon.validation import Suite, _runner, build_suite, load_suite, save_suite, validate
from fairmon.validation._runner import ERR_ENGINE
from fairmon.validation._suite import ERR_GX_EXPECTATION
from fairmon.validation._suite_io import ERR_SUITE_IO

REF = pd.DataFrame({"age": [20, 40, 60, 30], "sex": ["f", "m", "f", "m"]})


def _suite(*expectations: dict) -> Suite:  # type: ignore[type-arg]
    return Suite(name="bad", expectations=tuple(expectations), columns={}, params={}, reference={})


def test_unknown_expectation_type_is_a_config_error() -> None:
    from great_expectations.exceptions import GreatExpectationsError

    suite = _suite({"type": "expect_nonsense", "kwargs": {"column": "age"}, "meta": {"check": "x"}})
    with pytest.raises(ConfigError) as err:
        validate(REF, suite)
    assert str(err.value).startswith(
        ERR_GX_EXPECTATION.format(suite="bad", type="expect_nonsense", error="").rstrip()
    )
    assert isinstance(err.value.__cause__, GreatExpectationsError)


def test_kwargs_gx_rejects_are_a_config_error() -> None:
    suite = _suite(
        {"type": "expect_column_values_to_be_between", "kwargs": {"col": "age"}, "meta": {"check": "range"}}
    )
    with pytest.raises(ConfigError, match="rejects expectation 'expect_column_values_to_be_between'") as err:
        suite.to_gx()
    assert isinstance(err.value.__cause__, ValueError)  # pydantic's ValidationError


def test_gx_failing_to_run_is_an_engine_error_not_a_data_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    from great_expectations.exceptions import DataContextError

    def broken() -> None:
        raise DataContextError("ephemeral context unavailable")

    suite = build_suite(REF, features=["age"], sensitive=["sex"], min_rows=2)
    monkeypatch.setattr(_runner, "_batch_definition", broken)
    with pytest.raises(ValidationEngineError) as err:
        validate(REF, suite)
    assert str(err.value) == ERR_ENGINE.format(
        suite=suite.name, error="DataContextError: ephemeral context unavailable"
    )
    assert isinstance(err.value, FairmonError) and not isinstance(err.value, DataValidationError)
    assert isinstance(err.value.__cause__, DataContextError)


def test_unknown_url_protocol_for_a_suite_is_a_config_error(tmp_path: Path) -> None:
    suite = build_suite(REF, features=["age"], sensitive=["sex"], min_rows=2)
    url = "nosuchproto://bucket/suite.json"
    with pytest.raises(ConfigError) as err:
        save_suite(suite, url)
    assert str(err.value).startswith(ERR_SUITE_IO.format(path=url, action="write", error=""))
    assert isinstance(err.value.__cause__, ValueError)
    with pytest.raises(ConfigError) as err:
        load_suite(url)
    assert str(err.value).startswith(ERR_SUITE_IO.format(path=url, action="find", error=""))


def test_unwritable_suite_path_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    target = blocker / "suite.json"  # a path below a regular file: OSError
    with pytest.raises(ConfigError) as err:
        save_suite(build_suite(REF, features=["age"], sensitive=["sex"], min_rows=2), target)
    assert str(err.value).startswith(ERR_SUITE_IO.format(path=str(target), action="write", error=""))
    assert isinstance(err.value.__cause__, OSError)
