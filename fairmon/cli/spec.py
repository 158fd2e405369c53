"""``fairmon spec``: check monitor specs, show the effective spec, print its JSON Schema, build its suite.

``check`` is meant for CI on a monitors repository: every file is loaded with the same code the DAG
factory uses, and each problem is printed with its file, line and field path.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from fairmon.config import load_spec, spec_json_schema
from fairmon.errors import ConfigError
from fairmon.validation import ensure_suite

EPILOG = """examples:
  fairmon spec check monitors/                 every *.yaml in the folder (exit 2 on any problem)
  fairmon spec check monitors/demo.yaml --json
  fairmon spec show monitors/adult.yaml        the effective spec, defaults filled in (YAML)
  fairmon spec schema > monitor-spec.schema.json
  fairmon spec suite monitors/demo.yaml        build (or load) the validation suite from reference data
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "spec",
        help="check, show and document monitor specs",
        description="Validate monitor spec files, show the effective spec with every default, print the "
        "spec's JSON Schema, or build a monitor's data-validation suite from its reference data.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ssub = p.add_subparsers(dest="spec_command", metavar="ACTION", required=True)
    c = ssub.add_parser("check", help="load spec files/folders and report every problem")
    c.add_argument("paths", nargs="+", metavar="PATH", help="spec files or folders of *.yaml")
    c.add_argument("--json", action="store_true", help="machine-readable output")
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
        results.append({"file": str(f), "ok": True, "name": spec.name, "fingerprint": spec.fingerprint})
    if not results:
        results.append({"file": " ".join(args.paths), "ok": False, "error": "no monitor specs found"})
    if args.json:
        print(json.dumps({"ok": all(r["ok"] for r in results), "specs": results}, indent=1))
    else:
        for r in results:
            if r["ok"]:
                print(f"ok     {r['file']}  ({r['name']}, {r['fingerprint'][:12]})")
            else:
                print(f"error  {r['error']}", file=sys.stderr)
    return 0 if all(r["ok"] for r in results) else 2


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
