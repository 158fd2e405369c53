"""Data validation with Great Expectations 1.x: suites derived from reference data, window checks.

- :func:`build_suite` / :func:`suite_from_spec` derive a :class:`Suite` (columns and types, null
  rates, numeric ranges with a margin, categorical domains, every protected group present, minimum
  rows, label/decision domains) — plain JSON, no GX import;
- :func:`save_suite` / :func:`load_suite` store it as versioned JSON (format version, fingerprint,
  revision);
- :func:`validate` runs it with GX (ephemeral context, cached) and returns a
  :class:`ValidationReport`; a failing batch is a result, ``raise_for_failures()`` makes it a
  :class:`~fairmon.errors.DataValidationError`;
- :func:`ensure_suite` / :func:`validate_window` do the same for a monitor spec.
"""

from __future__ import annotations

from fairmon.validation._build import build_suite, column_kind
from fairmon.validation._monitor import ensure_suite, load_reference, suite_from_spec, validate_window
from fairmon.validation._report import ValidationReport, raise_for_failures
from fairmon.validation._runner import validate
from fairmon.validation._suite import SUITE_FORMAT, SUITE_FORMAT_VERSION, Suite
from fairmon.validation._suite_io import load_suite, save_suite

__all__ = [
    # suites: derive, store, read
    "Suite",
    "build_suite",
    "column_kind",
    "save_suite",
    "load_suite",
    "SUITE_FORMAT",
    "SUITE_FORMAT_VERSION",
    # running them
    "validate",
    "ValidationReport",
    "raise_for_failures",
    # for a monitor spec
    "suite_from_spec",
    "ensure_suite",
    "load_reference",
    "validate_window",
]
