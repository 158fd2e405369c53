"""Package boundaries: ``fairmon`` never imports Airflow; the image ships the glue beside the DAGs."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_fairmon_never_imports_airflow_or_its_glue() -> None:
    offenders = {str(p.relative_to(REPO)): sorted(_imported_roots(p) & {"airflow", "fairmon_airflow"})
                 for p in (REPO / "fairmon").rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_dag_files_are_factory_calls() -> None:
    files = sorted((REPO / "dags").glob("*.py"))
    assert len(files) > 1  # the catch-all file and one file per shipped spec
    for dag_file in files:
        assert len(dag_file.read_text().splitlines()) <= 40
        assert _imported_roots(dag_file) <= {"__future__", "pathlib", "fairmon_airflow"}


def test_the_image_installs_the_glue_package() -> None:
    dockerfile = (REPO / "docker" / "Dockerfile").read_text()
    assert "COPY --chown=airflow:root fairmon_airflow /opt/fairmon/src/fairmon_airflow" in dockerfile
    assert dockerfile.index("fairmon_airflow /opt/fairmon/src") < dockerfile.index("pip install --no-cache-dir -c")
