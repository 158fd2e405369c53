"""The validation suite: a plain, JSON-serialisable list of Great Expectations 1.x expectations.

A :class:`Suite` holds expectation configurations (``type`` + ``kwargs`` + ``meta``) with the column
roles and settings it was built from, a format version and a content fingerprint. Building, saving and
loading it needs no GX import (GX takes seconds to import); only :meth:`Suite.to_gx` and
:func:`fairmon.validation.validate` load GX.

>>> s = Suite(name="demo", expectations=(), columns={}, params={}, reference={})
>>> Suite.from_dict(s.to_dict()) == s
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fairmon.errors import ConfigError

__all__ = [
    "SUITE_FORMAT",
    "SUITE_FORMAT_VERSION",
    "NUMERIC_TYPES",
    "BOOL_TYPES",
    "TEXT_TYPES",
    "Suite",
    "ERR_GX_EXPECTATION",
]

SUITE_FORMAT = "fairmon.validation.suite"
SUITE_FORMAT_VERSION = 1

#: dtype names GX accepts for a numeric column (pandas nullable types included)
NUMERIC_TYPES: tuple[str, ...] = (
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "Float32",
    "Float64",
)
BOOL_TYPES: tuple[str, ...] = ("bool", "boolean")
#: text columns are validated as ``object`` columns whose non-null values are Python ``str``
TEXT_TYPES: tuple[str, ...] = ("str",)

Role = Literal["sensitive", "label", "decision", "score", "feature", "extra"]
Kind = Literal["numeric", "bool", "text", "datetime"]

ERR_EMPTY_REFERENCE = "reference data has no rows; cannot derive a validation suite"
ERR_REFERENCE_COLUMNS = "reference data lacks declared column(s) {cols}; it has {have}"
ERR_SUITE_MISSING = "{path}: validation suite file not found"
ERR_SUITE_FORMAT = "{path}: not a fairmon validation suite ({problem})"
ERR_GX_EXPECTATION = "validation suite {suite!r}: Great Expectations rejects expectation {type!r}: {error}"
ERR_SUITE_TAMPERED = (
    "{path}: suite fingerprint {stored} does not match its content ({actual}); it was edited by hand — "
    "remove the 'fingerprint' key to accept the edit"
)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


@dataclass(frozen=True)
class Suite:
    """A derived validation suite: expectations plus what they were derived from.

    ``columns`` maps each declared column to ``{"role": ..., "kind": ...}``; ``params`` holds the
    settings used; ``reference`` describes the reference data (rows, sha256); ``revision`` increases
    when a suite at the same path is rebuilt with different content. ``fingerprint`` covers everything
    except ``revision`` and ``previous``.
    """

    name: str
    expectations: tuple[dict[str, Any], ...]
    columns: dict[str, dict[str, str]]
    params: dict[str, Any]
    reference: dict[str, Any] = field(default_factory=dict)
    revision: int = 1
    previous: str | None = None
    format_version: int = SUITE_FORMAT_VERSION

    def content(self) -> dict[str, Any]:
        """The fingerprinted part of the suite."""
        return {
            "format_version": self.format_version,
            "name": self.name,
            "columns": self.columns,
            "params": self.params,
            "reference": self.reference,
            "expectations": list(self.expectations),
        }

    @property
    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of :meth:`content`."""
        return hashlib.sha256(_canonical(self.content()).encode()).hexdigest()

    @property
    def text_columns(self) -> tuple[str, ...]:
        return tuple(c for c, info in self.columns.items() if info["kind"] == "text")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (format marker, fingerprint, revision and GX version included)."""
        return {
            "format": SUITE_FORMAT,
            **self.content(),
            "fingerprint": self.fingerprint,
            "revision": self.revision,
            "previous": self.previous,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> Suite:
        """Rebuild from :meth:`to_dict` output; checks the format and the fingerprint."""
        if data.get("format") != SUITE_FORMAT:
            raise ConfigError(
                ERR_SUITE_FORMAT.format(path=source, problem=f"format is {data.get('format')!r}")
            )
        if data.get("format_version") != SUITE_FORMAT_VERSION:
            raise ConfigError(
                ERR_SUITE_FORMAT.format(
                    path=source,
                    problem=f"format_version {data.get('format_version')!r}, this fairmon reads {SUITE_FORMAT_VERSION}",
                )
            )
        try:
            suite = cls(
                name=str(data["name"]),
                expectations=tuple(dict(e) for e in data["expectations"]),
                columns={str(k): dict(v) for k, v in data["columns"].items()},
                params=dict(data["params"]),
                reference=dict(data.get("reference") or {}),
                revision=int(data.get("revision", 1)),
                previous=data.get("previous"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(ERR_SUITE_FORMAT.format(path=source, problem=f"bad field: {exc}")) from exc
        stored = data.get("fingerprint")
        if stored is not None and stored != suite.fingerprint:
            raise ConfigError(
                ERR_SUITE_TAMPERED.format(path=source, stored=stored[:12], actual=suite.fingerprint[:12])
            )
        return suite

    def to_gx(self) -> Any:
        """The suite as a ``great_expectations.ExpectationSuite`` (imports GX)."""
        # heavy: GX takes seconds to import
        import great_expectations as gx
        from great_expectations.exceptions.exceptions import GreatExpectationsError
        from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

        exps = []
        for e in self.expectations:
            try:
                exps.append(
                    ExpectationConfiguration(
                        type=e["type"], kwargs=dict(e["kwargs"]), meta=dict(e["meta"])
                    ).to_domain_obj()
                )
            except (GreatExpectationsError, ValueError, TypeError, KeyError) as exc:
                # an unknown expectation type or kwargs GX rejects: the suite's content is wrong
                raise ConfigError(
                    ERR_GX_EXPECTATION.format(suite=self.name, type=e.get("type"), error=exc)
                ) from exc
        return gx.ExpectationSuite(name=self.name, expectations=exps)
