"""Import discipline of the library (issue 14): top-level imports only, no cycles, documented lazy imports.

(a) A function-local import of a ``fairmon`` module hides a dependency (and, usually, a cycle) from
    readers and from mypy: every ``fairmon`` import sits at module top level.
(b) The graph of top-level imports among ``fairmon`` modules has no cycle (``if TYPE_CHECKING:``
    imports are not edges: they never run).
(c) A function-local import of a third-party module is allowed only for the heavy libraries below,
    which would otherwise load on ``import fairmon`` or at DAG parse time.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fairmon

ROOT = Path(fairmon.__file__).resolve().parent

#: third-party libraries a function may import lazily, each for a reason:
#: - GPU runtime or seconds of import time: torch, shap, lime, sklearn, scipy, pymoo, matplotlib,
#:   great_expectations, fairlearn, mlflow, joblib (model pickles, with sklearn);
#: - the orchestrator, never a library dependency: airflow;
#: - optional extras or back ends only one command needs: pgserver (embedded Postgres), psycopg2,
#:   slack_sdk (only when a sender is built), jinja2 / markupsafe (only when a report is rendered),
#:   fsspec (remote locations), pyarrow (Parquet, probed), skops (only when an MLflow model is imported).
HEAVY = frozenset({
    "torch", "shap", "lime", "sklearn", "scipy", "pymoo", "matplotlib", "great_expectations", "fairlearn",
    "mlflow", "joblib", "airflow", "pgserver", "psycopg2", "slack_sdk", "jinja2", "markupsafe", "fsspec",
    "pyarrow", "skops",
})

KNOWN_OFFENDERS: frozenset[str] = frozenset()


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str, path: Path) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """``(top-level imported modules, function-local imported modules)`` with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    top: list[tuple[str, int]] = []
    local: list[tuple[str, int]] = []

    def names(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = _resolve(module, node, is_package)
        # ``from fairmon.pipeline import runs``: the submodule when it is one, else the package
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]

    def walk(body: list[ast.stmt], in_function: bool) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                (local if in_function else top).extend((n, node.lineno) for n in names(node))
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                walk(node.orelse, in_function)  # the TYPE_CHECKING branch never runs
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                walk(node.body, True)  # type: ignore[arg-type]
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(node, field, None)
                    if isinstance(sub, list):
                        walk([s for s in sub if isinstance(s, ast.stmt | ast.ExceptHandler)], in_function)  # type: ignore[misc]
                if isinstance(node, ast.ExceptHandler):
                    walk(node.body, in_function)

    walk(tree.body, False)
    return top, local


MODULES = _modules()


def _fairmon(name: str) -> bool:
    return name == "fairmon" or name.startswith("fairmon.")


def test_no_function_local_import_of_a_fairmon_module() -> None:
    bad = [f"{m}:{line} imports {name}" for m, path in MODULES.items() if m not in KNOWN_OFFENDERS
           for name, line in _imports(m, path)[1] if _fairmon(name)]
    assert bad == [], "\n".join(bad)


def test_function_local_third_party_imports_are_documented_heavy_libraries() -> None:
    bad = [f"{m}:{line} imports {name}" for m, path in MODULES.items() if m not in KNOWN_OFFENDERS
           for name, line in _imports(m, path)[1]
           if not _fairmon(name) and name.split(".")[0] not in HEAVY and not _stdlib(name)]
    assert bad == [], "\n".join(bad)


def _stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m, path in MODULES.items():
        for name, _ in _imports(m, path)[0]:
            if _fairmon(name) and name in MODULES and name != m:
                graph[m].add(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycle_among_fairmon_modules() -> None:
    cycles = [c for c in _cycles(_graph()) if not set(c) <= KNOWN_OFFENDERS]
    assert cycles == [], "\n".join(" ↔ ".join(c) for c in cycles)


def test_the_checks_see_what_they_check(tmp_path: Path) -> None:
    """The walker finds function-local and TYPE_CHECKING imports, and a cycle when there is one."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nimport fairmon.window\nif TYPE_CHECKING:\n    import fairmon.rules\n"
        "def f():\n    try:\n        from fairmon.pipeline import runs\n    except ImportError:\n        pass\n"
    )
    top, local = _imports("fairmon.probe", probe)
    assert [n for n, _ in top] == ["typing", "fairmon.window"]  # the TYPE_CHECKING import is no edge
    assert [n for n, _ in local] == ["fairmon.pipeline.runs"]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert "fairmon.pipeline.runner" in MODULES
