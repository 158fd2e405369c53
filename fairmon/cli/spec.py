"""``fairmon spec``: check monitor specs, show the effective spec, print its JSON Schema, build its suite.

``check`` is meant for CI on a monitors repository: every file is loaded with the same code the DAG
factory uses, and each problem is printed with its file, line and field path. It then looks at the
local paths the spec names (registry folder and model, window files, reference and training data):
one that does not exist is a warning (``--strict``: an error), printed ``file:line: field: problem``
like the load errors. A local reference or training data file that exists must also hold the declared
columns its step reads (its header is read, not the rows), else the same kind of note names the file,
the field and the columns it lacks, instead of the first window failing on them. A spec is often
checked in CI on a machine without the data, hence a warning by default. ``file://`` URIs are local
paths and checked as such; other URIs are not fetched ("not checked: remote") unless ``--remote``,
which asks fsspec whether each exists (an error reaching it, e.g. a missing protocol package or
credentials, is a warning naming the field and the error).

It also warns when RUMIE searches model inputs that are not sensitive attributes (``rumie.attributes``
listing features): over them the "most discriminated group" tends to be the group the model is built
to score low, a finding for a model working as intended (issue 22). That warning is about the spec's
meaning, not a missing file, so ``--strict`` does not make it an error.

Each valid spec also gets a ``cost`` line: the estimated CPU seconds of a window's explanation step
from the pipeline's cost model (:mod:`fairmon.cli._spec_cost`; the model is timed when its registry
is reachable, otherwise the line says what it assumed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from fairmon.cli._args import SubParsers, add_command
from fairmon.cli._spec_cost import window_cost
from fairmon.config import load_spec, spec_json_schema
from fairmon.config._parsers import format_duration
from fairmon.errors import ConfigError
from fairmon.sources import file_format
from fairmon.validation import ensure_suite

EPILOG = """examples:
  fairmon spec check monitors/                 every *.yaml in the folder (exit 2 on any problem)
  fairmon spec check monitors/demo.yaml --json
  fairmon spec check monitors/credit.yaml --strict   a path the spec names that does not exist is an error
  fairmon spec check monitors/adult.yaml --remote    also ask fsspec whether s3:// etc. paths exist
  fairmon spec show monitors/adult.yaml        the effective spec, defaults filled in (YAML)
  fairmon spec schema > monitor-spec.schema.json
  fairmon spec suite monitors/demo.yaml        build (or load) the validation suite from reference data
"""


def register(sub: SubParsers) -> None:
    p = add_command(
        sub,
        "spec",
        help="check, show and document monitor specs",
        description="Validate monitor spec files, show the effective spec with every default, print the "
        "spec's JSON Schema, or build a monitor's data-validation suite from its reference data.",
        epilog=EPILOG,
    )
    ssub = p.add_subparsers(dest="spec_command", metavar="ACTION", required=True)
    c = ssub.add_parser("check", help="load spec files/folders and report every problem")
    c.add_argument("paths", nargs="+", metavar="PATH", help="spec files or folders of *.yaml")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--strict", action="store_true",
                   help="a path the spec names that does not exist is an error (default: a warning)")
    c.add_argument("--remote", action="store_true",
                   help="also check the remote URIs the spec names (s3://, gs://, ...) through fsspec")
    c.set_defaults(func=run_check)
    s = ssub.add_parser("show", help="print the effective spec (defaults filled in)")
    s.add_argument("path", metavar="SPEC")
    s.add_argument("--json", action="store_true", help="JSON instead of YAML")
    s.set_defaults(func=run_show)
    j = ssub.add_parser("schema", help="print the JSON Schema of monitor specs")
    j.set_defaults(func=run_schema)
    u = ssub.add_parser("suite", help="build (or load) the monitor's validation suite and summarise it")
    u.add_argument("path", metavar="SPEC")
    u.add_argument("--rebuild", action="store_true", help="rebuild even if the stored suite matches the spec")
    u.add_argument("--json", action="store_true", help="machine-readable output")
    u.set_defaults(func=run_suite)


def _spec_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted([*p.glob("*.yaml"), *p.glob("*.yml")])
        else:
            out.append(p)
    return out


def run_check(args: argparse.Namespace) -> int:
    results: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for f in _spec_files(args.paths):
        try:
            spec = load_spec(f)
        except ConfigError as exc:
            results.append({"file": str(f), "ok": False, "error": str(exc)})
            continue
        if spec.name in names:
            msg = f"{f}: identity.name '{spec.name}' is already used by {names[spec.name]}"
            results.append({"file": str(f), "ok": False, "error": msg})
            continue
        names[spec.name] = str(f)
        notes = path_notes(spec, f, remote=args.remote)
        advice = spec_warnings(spec, f)
        problems = [n for n in notes if not n.endswith(NOT_CHECKED_REMOTE)]
        if args.strict and problems:
            results.append({"file": str(f), "ok": False, "error": "\n       ".join(problems), "paths": notes,
                            "warnings": advice})
            continue
        results.append({"file": str(f), "ok": True, "name": spec.name, "fingerprint": spec.fingerprint,
                        "paths": notes, "warnings": advice, "cost": window_cost(spec)})
    if not results:
        results.append({"file": " ".join(args.paths), "ok": False, "error": "no monitor specs found"})
    if args.json:
        print(json.dumps({"ok": all(r["ok"] for r in results), "specs": results}, indent=1))
    else:
        for r in results:
            if r["ok"]:
                print(f"ok     {r['file']}  ({r['name']}, {r['fingerprint'][:12]})")
                print(f"cost   {r['cost']['line']}")
                for note in r.get("paths", []):
                    print(f"{'note' if note.endswith(NOT_CHECKED_REMOTE) else 'warning'}  {note}", file=sys.stderr)
            else:
                print(f"error  {r['error']}", file=sys.stderr)
            for note in r.get("warnings", []):
                print(f"warning  {note}", file=sys.stderr)
    return 0 if all(r["ok"] for r in results) else 2


NOT_CHECKED_REMOTE = "not checked: remote"
ERR_PATH_MISSING = "{path} does not exist"
ERR_NO_MODEL_IN_REGISTRY = "registry {registry} has no model {name!r} (register it: fairmon model register)"
ERR_NO_WINDOW_FILES = "no file matches {glob} and its folder {folder} does not exist"
WARN_RUMIE_INPUTS = (
    "RUMIE searches model input(s) {columns} (not sensitive attributes): its most discriminated group "
    "may be the group the model is built to score low (e.g. low credit scores), a finding for a model "
    "working as intended; leave them out of rumie.attributes unless they should not drive the decision "
    "(default without rumie.attributes: the sensitive and extra columns)"
)


WARN_WINDOW_GAPS = (
    "a {window} window is shorter than the longest schedule interval of cron '{cron}' (intervals of "
    "{intervals}): the rows "
    "between the end of one interval's window and the start of the next are in no window and never "
    "monitored; use window: interval for one window per schedule interval (a monthly cron's calendar "
    "months), or a window at least as long as the longest interval for a rolling one"
)


def _line(root: Any, dotted: str) -> int | None:
    """1-based line of the deepest key of ``dotted`` in the YAML node tree ``root``."""

    node, line = root, None
    for part in dotted.split("."):
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == part:
                    nxt, line = v, k.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line


def _spec_paths(spec: Any) -> list[tuple[str, str, str]]:
    """(field, written value, kind) of every location the spec reads: ``dir``, ``file`` or ``pattern``."""
    out = [("model.registry_uri", spec.model.registry_uri, "registry")]
    if spec.model.reference is not None:
        out.append(("model.reference", spec.model.reference, "file"))
    if spec.data.files is not None:
        out.append(("data.files.pattern", spec.data.files.pattern, "pattern"))
    if spec.validation.reference_data is not None:
        out.append(("validation.reference_data", spec.validation.reference_data, "file"))
    if spec.retraining.training_data is not None:
        out.append(("retraining.training_data.path", spec.retraining.training_data.path, "file"))
    return out


ERR_URI_UNREACHABLE = "{uri} cannot be checked: {error}"


def _remote_problem(uri: str, kind: str) -> str | None:
    """Whether fsspec finds ``uri`` (a pattern: any match): None when it does, else the problem."""
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(uri)
        if kind == "pattern":
            glob = re.sub(r"\{(start|end)(:[^}]*)?\}", "*", path)
            found = bool(fs.glob(glob)) or fs.isdir(glob.split("*", 1)[0].rsplit("/", 1)[0])
        else:
            found = fs.exists(path)
    except Exception as exc:  # noqa: BLE001 - any client error (package, credentials, network) is reported
        return ERR_URI_UNREACHABLE.format(uri=uri, error=f"{type(exc).__name__}: {str(exc)[:200]}")
    return None if found else ERR_PATH_MISSING.format(path=uri)


def path_notes(spec: Any, file: Path, *, remote: bool = False) -> list[str]:
    """``file:line: field: problem`` for every local path the spec reads that does not exist, and
    ``...: not checked: remote`` for each remote URI (``remote=True``: asked through fsspec, a missing
    one or an error reaching it is a problem). ``file://`` URIs are local paths."""
    import glob
    import os

    try:
        root = yaml.compose(file.read_text(), Loader=yaml.SafeLoader)  # load_spec accepted this file
    except (OSError, yaml.YAMLError):
        root = None
    notes: list[str] = []
    for field, value, kind in _spec_paths(spec):
        line = _line(root, field)
        where = f"{file}:{line}" if line else str(file)
        try:
            resolved = spec.resolve_path(value)
        except ConfigError as exc:  # an unset ${VAR}
            notes.append(f"{where}: {field}: {str(exc).split(': ', 1)[-1]}")
            continue
        if resolved.startswith("file://"):
            resolved = resolved[len("file://"):]
        elif "://" in resolved:
            problem = _remote_problem(resolved, kind) if remote else NOT_CHECKED_REMOTE
            if problem is not None:
                notes.append(f"{where}: {field}: {problem}")
            continue
        if kind == "pattern":
            pattern = re.sub(r"\{(start|end)(:[^}]*)?\}", "*", resolved)
            folder = Path(os.path.dirname(pattern.split("*", 1)[0]))
            if not glob.glob(pattern) and not folder.is_dir():
                notes.append(f"{where}: {field}: " + ERR_NO_WINDOW_FILES.format(glob=pattern, folder=folder))
        elif not Path(resolved).exists():
            notes.append(f"{where}: {field}: " + ERR_PATH_MISSING.format(path=resolved))
        elif kind == "registry" and not (Path(resolved) / str(spec.model.name)).is_dir():
            line = _line(root, "model.name") or line
            where = f"{file}:{line}" if line else str(file)
            notes.append(f"{where}: model.name: " + ERR_NO_MODEL_IN_REGISTRY.format(registry=resolved, name=spec.model.name))
        elif field in DATA_FILES:
            problem = _missing_columns(resolved, _declared(spec, field), _format(spec, field, resolved))
            if problem is not None:
                notes.append(f"{where}: {field}: {problem}")
    return notes


#: the data files whose header must hold the declared columns (the suite's reference; FEU's training rows)
DATA_FILES = ("validation.reference_data", "retraining.training_data.path")
ERR_FILE_COLUMNS = "{path} lacks declared column(s) {cols} (declared in columns.*); it has {have}"


def _declared(spec: Any, field: str) -> list[str]:
    """The columns ``field``'s file must have: every declared one for the suite's reference; for FEU's
    training data the features, the protected attribute it compares and the label."""
    c = spec.columns
    if field == "retraining.training_data.path":
        attr = spec.explanations.gesd.attribute or c.sensitive[0]
        return list(dict.fromkeys([*c.features, attr, *([c.label] if c.label else [])]))
    return list(dict.fromkeys([*c.sensitive, *[x for x in (c.label, c.decision, c.score) if x], *c.features, *c.extra]))


def _format(spec: Any, field: str, path: str) -> str:
    """The format the run reads ``field``'s file in (:func:`fairmon.sources.file_format`; the training
    data's declared ``format`` wins)."""
    td = spec.retraining.training_data
    return file_format(path, td.format if field == "retraining.training_data.path" and td is not None else None)


def _missing_columns(path: str, declared: list[str], fmt: str) -> str | None:
    """The declared columns a local CSV/Parquet file's header lacks, said; None when all are there or the
    header cannot be read (the run reports that with its own error)."""
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            have = list(pq.read_schema(path).names)
        else:
            have = [str(c) for c in pd.read_csv(path, nrows=0).columns]
    except Exception:  # noqa: BLE001 - an unreadable file is the run's to report, with its own error
        return None
    missing = [c for c in declared if c not in have]
    shown = have if len(have) <= 30 else [*have[:30], f"... {len(have) - 30} more"]  # one readable line
    return ERR_FILE_COLUMNS.format(path=path, cols=missing, have=shown) if missing else None


def spec_warnings(spec: Any, file: Path) -> list[str]:
    """``file:line: field: advice`` for settings that load but may not mean what the team wants:
    RUMIE searching model inputs (:attr:`fairmon.config.MonitorSpec.rumie_model_inputs`), and a window
    shorter than some schedule interval (rows between two windows never monitored)."""
    try:
        root = yaml.compose(file.read_text(), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        root = None

    def at(field: str) -> str:
        line = _line(root, field)
        return f"{file}:{line}: {field}: " if line else f"{file}: {field}: "

    advice = []
    inputs = list(spec.rumie_model_inputs)
    if inputs and spec.rumie.enabled:
        advice.append(at("rumie.attributes") + WARN_RUMIE_INPUTS.format(columns=inputs))
    advice += [at("explanations.gesd.sample_size") + w for w in _gesd_share_warnings(spec)]
    shortest, longest = spec.schedule.interval_lengths
    if spec.schedule.window is not None and spec.schedule.window < longest:
        advice.append(at("schedule.window") + WARN_WINDOW_GAPS.format(
            window=spec.schedule.window_label, cron=spec.schedule.cron, intervals=_span(shortest, longest)))
    return advice


def _gesd_share_warnings(spec: Any) -> list[str]:
    """GESD attributes whose reference groups share the stratified sample below ``min_group_size`` each.

    Why: ``sample_size`` rows are shared equally among an attribute's groups, and a group with fewer than
    ``min_group_size`` sampled rows is skipped; a new user's ``race`` with 6 groups got 40 / 6 rows each and
    GESD was n/a in every window, with no word before the first run (session 23). Read from a local
    ``validation.reference_data`` (its protected columns only); nothing said when it cannot be read."""
    g = spec.explanations.gesd
    ref = spec.validation.reference_data
    if not (spec.explanations.enabled and g.enabled and g.stratify and ref):
        return []
    path = spec.resolve_path(ref)
    attrs = [g.attribute] if g.attribute else list(spec.columns.sensitive)
    try:
        if _format(spec, "validation.reference_data", path) == "parquet":
            frame = pd.read_parquet(path, columns=attrs)
        else:
            frame = pd.read_csv(path, usecols=attrs)
    except Exception:  # noqa: BLE001 - the run reports an unreadable reference with its own error
        return []
    out = []
    for a in attrs:
        k = int(frame[a].nunique(dropna=True))
        if k >= 2 and g.sample_size // k < g.min_group_size:
            out.append(WARN_GESD_SHARE.format(attr=a, k=k, n=g.sample_size, each=g.sample_size // k,
                                              min=g.min_group_size, need=k * g.min_group_size))
    return out


WARN_GESD_SHARE = (
    "{n} GESD rows shared among the {k} groups of {attr!r} in the reference data give {each} each, below "
    "explanations.gesd.min_group_size {min}: GESD for {attr!r} would be n/a in every window; raise "
    "sample_size to at least {need}, or name explanations.gesd.attribute"
)


def _span(shortest: dt.timedelta, longest: dt.timedelta) -> str:
    return format_duration(longest) if shortest == longest else f"{format_duration(shortest)} to {format_duration(longest)}"


def run_show(args: argparse.Namespace) -> int:
    spec = load_spec(args.path)
    doc = spec.model_dump(mode="json", by_alias=True)
    if args.json:
        print(json.dumps({"fingerprint": spec.fingerprint, "spec": doc}, indent=1))
    else:
        print(f"# effective spec of {args.path} (fingerprint {spec.fingerprint})")
        print(yaml.safe_dump(doc, sort_keys=False), end="")
    return 0


def run_schema(args: argparse.Namespace) -> int:
    print(json.dumps(spec_json_schema(), indent=1, sort_keys=True))
    return 0


def run_suite(args: argparse.Namespace) -> int:
    spec = load_spec(args.path)
    suite = ensure_suite(spec, rebuild=args.rebuild)
    checks: dict[str, int] = {}
    for e in suite.expectations:
        checks[e["meta"]["check"]] = checks.get(e["meta"]["check"], 0) + 1
    info = {
        "monitor": spec.name,
        "path": spec.suite_location,
        "revision": suite.revision,
        "fingerprint": suite.fingerprint,
        "expectations": len(suite.expectations),
        "checks": checks,
        "reference": suite.reference,
    }
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        print(
            f"suite of {spec.name}: {info['expectations']} expectations, revision {suite.revision}, "
            f"fingerprint {suite.fingerprint[:12]}\n  path: {info['path']}\n  reference: "
            f"{suite.reference.get('location')} ({suite.reference.get('rows')} rows)\n  checks: "
            + ", ".join(f"{k} {v}" for k, v in checks.items())
        )
    return 0
