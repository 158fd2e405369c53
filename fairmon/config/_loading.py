"""Loading spec files: one file, a folder of them, or YAML text, into validated :class:`MonitorSpec`.

Examples
--------
>>> import json
>>> from fairmon.config._monitor import EXAMPLE
>>> parse_spec(json.dumps(EXAMPLE), source="example.yaml").rumie.k
5
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fairmon.config._limits import MAX_SPEC_BYTES
from fairmon.config._messages import (
    ERR_DUPLICATE_NAME,
    ERR_FILE_MISSING,
    ERR_FILE_TOO_LARGE,
    ERR_FILE_UNREADABLE,
    ERR_FOLDER_MISSING,
    ERR_NO_SPECS,
    ERR_NOT_MAPPING,
    excerpt,
)
from fairmon.config._monitor import SPEC_VERSION, MonitorSpec
from fairmon.config._paths import VAR_RE
from fairmon.config._translate import translate
from fairmon.config._yaml import read_yaml
from fairmon.errors import ConfigError

__all__ = ["load_spec", "load_specs", "parse_spec", "scan_specs", "spec_json_schema"]

def parse_spec(text: str, *, source: str | Path = "<string>") -> MonitorSpec:
    """Parse and validate spec YAML text; ``source`` names the file in error messages.

    Why separate from :func:`load_spec`: the DAG factory, the CLI and tests may hold the text already.

    >>> parse_spec("spec_version: 1\\nidentity: {name: x}\\n", source="x.yaml")
    Traceback (most recent call last):
    ...
    fairmon.errors.ConfigError: x.yaml: 4 problems in monitor spec:
      x.yaml: model: missing required field
      x.yaml: data: missing required field
      x.yaml: columns: missing required field
      x.yaml: schedule: missing required field
    """
    file = str(source)
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_SPEC_BYTES:
        raise ConfigError(ERR_FILE_TOO_LARGE.format(file=file, size=size, limit=MAX_SPEC_BYTES))
    root, data = read_yaml(text, file)
    if not isinstance(data, dict):
        kind = "an empty document" if data is None else f"a {type(data).__name__}"
        raise ConfigError(ERR_NOT_MAPPING.format(file=file, kind=kind))
    try:
        spec = MonitorSpec.model_validate(data)
    except ValidationError as exc:
        raise translate(exc, file, root) from None
    except ConfigError as exc:  # raised by a validator directly
        raise ConfigError(f"{file}: {exc}") from None
    if isinstance(source, Path):
        spec._source = source.resolve()
    return spec


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of a monitor spec (``monitors/monitor-spec.schema.json`` is this, for editors).

    Why: YAML editors (e.g. yaml-language-server with a ``$schema`` comment) then complete and check
    spec files while they are written; :func:`load_spec` remains the authority.

    >>> spec_json_schema()["properties"]["outcome"]["$ref"]
    '#/$defs/OutcomeSpec'
    """
    schema = MonitorSpec.model_json_schema(by_alias=True)
    schema["$id"] = "https://fairmon.dev/schemas/monitor-spec-v1.json"
    schema["title"] = f"fairmon monitor spec (spec_version {SPEC_VERSION})"
    return schema


def _environment_key(text: str) -> tuple[tuple[str, str | None], ...]:
    """The values of the environment variables a spec's paths may expand (Airflow sets its own
    ``AIRFLOW_CTX_*`` variables before a task runs: they must not make the same spec a new one)."""
    names = {m.group(1) or m.group(3) for m in VAR_RE.finditer(text)} | {"HOME"}
    return tuple((n, os.environ.get(n)) for n in sorted(names))


# parsed specs by (file, its bytes, the working directory, the environment): the same file read again
# in one process is not parsed again. Why: a spec's YAML parse and validation cost 0.02-0.04 CPU-s,
# and an Airflow task loads its spec two or three times (its DAG file, the connection lookup, the
# step), ~0.3-0.6 CPU-s per window of the fleet's 11 tasks; a preloaded Celery worker fills this
# before it forks (``fairmon_airflow.preload``). The key holds everything the result depends on (the
# text, the file's folder for relative paths, the working directory, the environment variables the
# text names for ``${VAR}`` expansion and ``HOME`` for ``~``), so an edited file or a changed variable
# is parsed anew; specs are frozen models, safe to share.
@functools.lru_cache(maxsize=1024)
def _parsed(text: str, given: str, resolved: str, cwd: str,
            environment: tuple[tuple[str, str | None], ...]) -> MonitorSpec:
    """The spec ``text`` read from ``given``; the other arguments are only the cache key (a spec that
    fails to load is not kept: it raises again, every time)."""
    return parse_spec(text, source=Path(given))


def load_spec(path: str | os.PathLike[str]) -> MonitorSpec:
    """Load one monitor spec YAML file.

    Raises :class:`~fairmon.errors.ConfigError` naming the file (and line and field path where they
    apply) for a missing file, YAML syntax errors, a non-mapping document, unknown keys, wrong types,
    and every semantic check.

    A file over :data:`MAX_SPEC_BYTES` is refused before more than that is read.

    Examples
    --------
    >>> import json, tempfile
    >>> from fairmon.config._monitor import EXAMPLE
    >>> path = Path(tempfile.mkdtemp()) / "example.yaml"
    >>> _ = path.write_text(json.dumps(EXAMPLE))  # JSON is YAML
    >>> spec = load_spec(path)
    >>> spec.name, spec.data.kind, spec.source == path.resolve()
    ('example', 'files', True)
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(ERR_FILE_MISSING.format(file=p))
    try:
        with p.open("rb") as fh:
            raw = fh.read(MAX_SPEC_BYTES + 1)
        if len(raw) > MAX_SPEC_BYTES:
            size = max(p.stat().st_size, len(raw))
            raise ConfigError(ERR_FILE_TOO_LARGE.format(file=p, size=size, limit=MAX_SPEC_BYTES))
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(ERR_FILE_UNREADABLE.format(file=p, error=excerpt(str(exc)))) from exc
    return _parsed(text, str(p), str(p.resolve()), os.getcwd(), _environment_key(text))


def _spec_files(folder: str | os.PathLike[str]) -> list[Path]:
    d = Path(folder)
    if not d.is_dir():
        raise ConfigError(ERR_FOLDER_MISSING.format(folder=d))
    return sorted([*d.glob("*.yaml"), *d.glob("*.yml")])


def scan_specs(folder: str | os.PathLike[str]) -> list[tuple[Path, MonitorSpec | ConfigError]]:
    """Load every ``*.yaml``/``*.yml`` in ``folder`` (sorted), keeping errors per file.

    Why: a DAG factory should still build the good monitors' DAGs when one spec is broken, and surface
    the broken one as an import error.

    >>> import json, tempfile
    >>> from fairmon.config._monitor import EXAMPLE
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.yaml").write_text(json.dumps(EXAMPLE))
    >>> _ = (folder / "b.yaml").write_text("spec_version: 1")
    >>> [(f.name, type(item).__name__) for f, item in scan_specs(folder)]
    [('a.yaml', 'MonitorSpec'), ('b.yaml', 'ConfigError')]
    """
    out: list[tuple[Path, MonitorSpec | ConfigError]] = []
    names: dict[str, Path] = {}
    for f in _spec_files(folder):
        try:
            spec = load_spec(f)
        except ConfigError as exc:
            out.append((f, exc))
            continue
        if spec.name in names:
            out.append(
                (f, ConfigError(ERR_DUPLICATE_NAME.format(file=f, name=spec.name, other=names[spec.name])))
            )
            continue
        names[spec.name] = f
        out.append((f, spec))
    return out


def load_specs(folder: str | os.PathLike[str]) -> list[MonitorSpec]:
    """Load every monitor spec in ``folder``; the first broken file raises its ConfigError.

    Names must be unique across the folder (they become DAG ids).

    >>> import json, tempfile
    >>> from fairmon.config._monitor import EXAMPLE
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "example.yaml").write_text(json.dumps(EXAMPLE))
    >>> [s.name for s in load_specs(folder)]
    ['example']
    """
    results = scan_specs(folder)
    if not results:
        raise ConfigError(ERR_NO_SPECS.format(folder=folder))
    specs = []
    for _, item in results:
        if isinstance(item, ConfigError):
            raise item
        specs.append(item)
    return specs
