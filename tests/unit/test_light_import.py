"""``import fairmon`` (and the CLI's help) must not drag in the heavy stack."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ["torch", "shap", "lime", "pymoo", "great_expectations", "airflow", "sklearn", "matplotlib"]


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    import json

    mods = set(json.loads(out.strip().splitlines()[-1]))
    return {h for h in HEAVY if h in mods}


def test_import_fairmon_is_light() -> None:
    assert _loaded_after("import fairmon") == set()


def test_cli_parser_is_light() -> None:
    assert _loaded_after("from fairmon.cli import build_parser; build_parser()") == set()
