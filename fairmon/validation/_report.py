"""The outcome of validating one window: :class:`ValidationReport`, and :func:`raise_for_failures`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairmon.errors import DataValidationError

__all__ = ["ValidationReport", "raise_for_failures", "ERR_INVALID"]

ERR_INVALID = "data validation failed ({n} of {total} expectations): {messages}"


def _json(value: Any) -> Any:
    """Plain JSON-able Python (numpy scalars, NaN → None, containers recursively)."""
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of validating one window against a suite.

    ``failed`` holds one plain dict per failed expectation: ``expectation_type`` (GX name; also as
    ``expectation``), ``check``
    (``min_rows``/``column``/``type``/``nulls``/``range``/``domain``/``groups``), ``column``, ``role``,
    ``observed``, ``expected`` and ``message``. When a column is missing, only its ``column`` failure
    is listed (the expectations that depend on it cannot say anything more); likewise a column of the
    wrong type lists its ``type`` failure, not the range check that could not be evaluated. ``results`` lists every
    expectation with its success flag.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairmon.validation import build_suite, validate
    >>> ref = pd.DataFrame({"age": [20, 40, 60, 30], "sex": ["f", "m", "f", "m"]})
    >>> report = validate(ref.assign(sex="f"), build_suite(ref, features=["age"], sensitive=["sex"], min_rows=2))
    >>> report.success, report.failed_checks, report.to_dict()["failed"][0]["check"]
    (False, [('groups', 'sex')], 'groups')
    """

    success: bool
    n_rows: int
    failed: list[dict[str, Any]]
    results: list[dict[str, Any]]
    suite_name: str
    suite_fingerprint: str
    suite_revision: int = 1
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_expectations(self) -> int:
        return len(self.results)

    @property
    def failed_checks(self) -> list[tuple[str, str | None]]:
        """``(check, column)`` of every failure, e.g. ``[("nulls", "sex")]``."""
        return [(f["check"], f["column"]) for f in self.failed]

    def summary(self) -> str:
        """One line: ``ok`` or the failure messages joined by ``; ``."""
        if self.success:
            return f"ok ({self.n_expectations} expectations, {self.n_rows} rows)"
        return "; ".join(f["message"] for f in self.failed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (stored with a ``data_invalid`` run and used by the data alert)."""
        out: dict[str, Any] = _json(
            {
                "success": self.success,
                "n_rows": self.n_rows,
                "n_expectations": self.n_expectations,
                "failed": self.failed,
                "results": self.results,
                "suite_name": self.suite_name,
                "suite_fingerprint": self.suite_fingerprint,
                "suite_revision": self.suite_revision,
                "seconds": round(self.seconds, 4),
                **({"meta": self.meta} if self.meta else {}),
            }
        )
        return out

    def raise_for_failures(self) -> ValidationReport:
        """Raise :class:`DataValidationError` (carrying :attr:`failed`) unless the window passed.

        Examples
        --------
        >>> import pandas as pd
        >>> from fairmon.validation import build_suite, validate
        >>> ref = pd.DataFrame({"age": [20, 40, 60, 30], "sex": ["f", "m", "f", "m"]})
        >>> suite = build_suite(ref, features=["age"], sensitive=["sex"], min_rows=2)
        >>> raise_for_failures(validate(ref, suite)).success
        True
        >>> raise_for_failures(validate(ref.assign(sex="f"), suite))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fairmon.errors.DataValidationError: data validation failed (1 of ... expectations): column 'sex' is missing ...
        """
        if not self.success:
            messages = "; ".join(f["message"] for f in self.failed[:5])
            if len(self.failed) > 5:
                messages += f"; ... {len(self.failed) - 5} more"
            raise DataValidationError(
                ERR_INVALID.format(n=len(self.failed), total=self.n_expectations, messages=messages),
                self.failed,
            )
        return self


def raise_for_failures(report: ValidationReport) -> ValidationReport:
    """Function form of :meth:`ValidationReport.raise_for_failures`."""
    return report.raise_for_failures()
