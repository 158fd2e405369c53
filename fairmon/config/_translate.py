"""pydantic's ValidationError translated into one ConfigError that names file, line and field path.

Why: pydantic's own text speaks of its internals (``function-after[...]``, union tags) and never of
the YAML file; a spec author needs ``monitors/x.yaml:12: rumie.alpha: ...`` and, for an unknown key,
the closest allowed one.

Examples
--------
>>> from pydantic import ValidationError
>>> from fairmon.config._monitor import EXAMPLE
>>> try:
...     MonitorSpec.model_validate({**EXAMPLE, "outcome": {"bootstrap": 10**8}})
... except ValidationError as exc:
...     print(translate(exc, "credit.yaml", None))
credit.yaml: outcome.bootstrap: 100000000 is above the limit 100000 (a cost limit: see 'Limits' in monitors/README.md)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any, get_args

import yaml
from pydantic import BaseModel, ValidationError

from fairmon.config._limits import COST_LIMITS, MAX_LISTED_PROBLEMS
from fairmon.config._messages import (
    ERR_COST_LIMIT,
    ERR_FIELD,
    ERR_MANY,
    ERR_MISSING,
    ERR_MORE_PROBLEMS,
    ERR_UNKNOWN_KEY,
    excerpt,
)
from fairmon.config._monitor import MonitorSpec
from fairmon.errors import ConfigError

__all__ = ["translate"]

def _loc_to_path(loc: tuple[Any, ...]) -> list[Any]:
    path: list[Any] = []
    for i, part in enumerate(loc):
        # discriminated unions insert the tag ('trailing'/'reference') into the location
        if i > 0 and loc[i - 1] == "baseline" and part in ("reference", "trailing"):
            continue
        if isinstance(part, str) and (part.startswith("function-") or part in ("tuple[float, float]",)):
            continue
        path.append(part)
    return path


def _fmt_path(path: list[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _model_at(path: list[Any]) -> type[BaseModel] | None:
    """The spec section class at ``path`` (for 'allowed keys' hints), or None."""
    model: Any = MonitorSpec
    for part in path:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = None
        for fname, f in model.model_fields.items():
            if part in (fname, f.alias):
                field = f
                break
        if field is None:
            return None
        ann = field.annotation
        candidates: list[Any] = [
            a for a in get_args(ann) if isinstance(a, type) and issubclass(a, BaseModel)
        ] or [ann]
        model = candidates[0] if len(candidates) == 1 else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _allowed_keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


_FIELD_PREFIX_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): (.*)$", re.S)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _dotted(path: list[Any]) -> str:
    return ".".join(str(p) for p in path)


def _problem(err: Mapping[str, Any], path: list[Any]) -> tuple[list[Any], str]:
    etype = err["type"]
    msg = str(err["msg"])
    if etype == "extra_forbidden":
        key = path[-1] if path else "?"
        hint = ""
        model = _model_at(path[:-1])
        if model is not None:
            allowed = _allowed_keys(model)
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            hint += f" (allowed: {', '.join(allowed)})"
        return path, ERR_UNKNOWN_KEY.format(key=excerpt(key, 80), hint=hint)
    if etype == "missing":
        return path, ERR_MISSING
    if etype == "less_than_equal" and _dotted(path) in COST_LIMITS:
        return path, ERR_COST_LIMIT.format(value=excerpt(err.get("input")), limit=COST_LIMITS[_dotted(path)])
    if etype == "value_error":
        msg = msg.removeprefix("Value error, ")
        m = _FIELD_PREFIX_RE.match(msg)
        if m and " " not in m.group(1):
            return path + m.group(1).split("."), m.group(2)
        return path, msg
    if etype == "assertion_error":
        return path, msg.removeprefix("Assertion failed, ")
    return path, f"{msg} (got {_short(err.get('input'))})"


def _line_of(root: yaml.Node | None, path: list[Any]) -> int | None:
    """1-based line of the deepest key of ``path`` found in the YAML node tree (None if none)."""
    node = root
    line = None
    for part in path:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    nxt, line = v, k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
            line = nxt.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line


def translate(exc: ValidationError, file: str, root: yaml.Node | None) -> ConfigError:
    """One :class:`ConfigError` for pydantic's errors: file, line, field path and problem per item.

    At most :data:`MAX_LISTED_PROBLEMS` items are spelled out (each one's line is looked up in the
    YAML tree), then the count of the rest: a hostile file with thousands of bad keys gets a short
    message in short time.
    """
    items = []
    for err in exc.errors()[:MAX_LISTED_PROBLEMS]:
        loc, problem = _problem(err, _loc_to_path(tuple(err["loc"])))
        line = _line_of(root, loc) if root is not None else None
        where = f"{file}:{line}" if line else file
        items.append((where, _fmt_path(loc), problem))
    total = exc.error_count()
    if total == 1:
        where, path, problem = items[0]
        return ConfigError(ERR_FIELD.format(where=where, path=path, problem=problem))
    lines = "\n".join(f"  {w}: {p}: {pr}" for w, p, pr in items)
    if total > len(items):
        lines += "\n" + ERR_MORE_PROBLEMS.format(n=total - len(items))
    return ConfigError(ERR_MANY.format(file=file, n=total, lines=lines))
