"""Lazy package exports: a public name's module loads on first access, keeping ``import fairmon.x`` light.

A package ``__init__`` maps each lazy name to its module and forwards its module ``__getattr__`` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attribute"]


def lazy_attribute(package: str, table: Mapping[str, str], name: str) -> Any:
    """``name`` from its module in ``table``; AttributeError (as Python words it) for any other name.

    Examples
    --------
    >>> lazy_attribute("pkg", {"sqrt": "math"}, "sqrt")(9.0)
    3.0
    >>> lazy_attribute("pkg", {}, "nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'pkg' has no attribute 'nope'
    """
    if name in table:
        return getattr(import_module(table[name]), name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
