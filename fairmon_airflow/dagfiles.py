"""One DAG file per monitor spec, so a broken spec is an import error of its own (issue 20).

Airflow keys import errors by DAG file, and an import error marks *every* DAG of that file stale: one
file building all monitors can either hide a broken spec (log and skip it, which then shows in every
other monitor's task log) or take all monitors down. A thin DAG file per spec,
``dags/monitor_<spec stem>.py``, gives each monitor its own parse: a spec that does not load raises
its :class:`~fairmon.errors.ConfigError` (file, line, field) from its own file, so the UI and
``airflow dags list-import-errors`` show it under that file, and the other monitors neither go stale
nor see it in their logs (a task re-parses only its own DAG file).

Every DAG file has the same three lines (:data:`DAG_FILE_TEXT`); the monitor is the file's name. Write
them for a specs folder with ``python -m fairmon_airflow.dagfiles MONITORS_DIR DAGS_DIR``; a DAG file
whose spec is gone builds no DAG (a removed monitor). Specs without a DAG file of their own are still
built by ``dags/fairmon_monitors.py`` (skipped and logged when broken).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from airflow.sdk import DAG

from fairmon.errors import ConfigError
from fairmon_airflow.dagspec import load_dag_settings
from fairmon_airflow.factory import build_dag, monitors_dir

__all__ = [
    "DAG_FILE_PREFIX",
    "DAG_FILE_TEXT",
    "SPEC_SUFFIXES",
    "dag_file_name",
    "spec_of_dag_file",
    "monitor_dag_file",
    "dedicated_stems",
    "write_dag_files",
    "main",
]

log = logging.getLogger(__name__)

DAG_FILE_PREFIX = "monitor_"
SPEC_SUFFIXES = (".yaml", ".yml")
#: the text of every per-spec DAG file (the words "airflow" and "dag" are what safe mode looks for)
DAG_FILE_TEXT = '''"""Airflow DAG of one fairmon monitor: the spec named like this file (monitor_<name>.py -> <name>.yaml).

Written by ``python -m fairmon_airflow.dagfiles``; a spec that does not load is this file's import error.
"""

from fairmon_airflow.dagfiles import monitor_dag_file

globals().update(monitor_dag_file(__file__))
'''
ERR_NO_SPECS = "{folder}: no monitor specs (*.yaml, *.yml) to write DAG files for"


def dag_file_name(spec_path: Path) -> str:
    """The DAG file of a spec: ``monitor_<stem>.py``.

    Examples
    --------
    >>> dag_file_name(Path("monitors/demo.yaml"))
    'monitor_demo.py'
    """
    return f"{DAG_FILE_PREFIX}{spec_path.stem}.py"


def spec_of_dag_file(dag_file: Path, monitors: Path) -> Path | None:
    """The spec a DAG file stands for (None when the folder has no such spec any more).

    Examples
    --------
    >>> repo = Path(__file__).resolve().parents[1]
    >>> spec_of_dag_file(Path("dags/monitor_demo.py"), repo / "monitors").name
    'demo.yaml'
    >>> spec_of_dag_file(Path("dags/monitor_gone.py"), repo / "monitors") is None
    True
    """
    stem = dag_file.stem.removeprefix(DAG_FILE_PREFIX)
    for suffix in SPEC_SUFFIXES:
        candidate = monitors / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def monitor_dag_file(dag_file: str) -> dict[str, DAG]:
    """The DAG of a per-spec DAG file (what its one line puts in its globals).

    The specs folder is ``FAIRMON_MONITORS_DIR``, else the ``monitors/`` beside the DAG folder. A spec
    that does not load raises its ``ConfigError``: the import error of this file alone.

    Examples
    --------
    >>> repo = Path(__file__).resolve().parents[1]
    >>> list(monitor_dag_file(str(repo / "dags" / "monitor_demo.py")))  # doctest: +SKIP
    ['fairmon_demo']
    """
    path = Path(dag_file).resolve()
    spec = spec_of_dag_file(path, monitors_dir(default=path.parents[1] / "monitors"))
    if spec is None:
        log.warning("fairmon: %s has no spec in the monitors folder; no DAG", path.name)
        return {}
    settings = load_dag_settings(spec)
    return {settings.dag_id: build_dag(settings)}


def dedicated_stems(dags_folder: Path) -> frozenset[str]:
    """Spec stems that have a DAG file of their own in ``dags_folder`` (the catch-all file skips them).

    Examples
    --------
    >>> sorted(dedicated_stems(Path(__file__).resolve().parents[1] / "dags"))
    ['adult', 'compas', 'demo', 'german']
    """
    return frozenset(p.stem.removeprefix(DAG_FILE_PREFIX) for p in dags_folder.glob(f"{DAG_FILE_PREFIX}*.py"))


def _specs(monitors: Path) -> list[Path]:
    return sorted(p for suffix in SPEC_SUFFIXES for p in monitors.glob(f"*{suffix}"))


def write_dag_files(monitors: Path, dags_folder: Path, *, prune: bool = False) -> list[Path]:
    """Write ``dags_folder/monitor_<stem>.py`` for every spec in ``monitors``; returns the files.

    ``prune`` removes DAG files whose spec is gone. The specs are not loaded: a broken spec still gets
    its DAG file, which is where its error will show.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> [p.name for p in write_dag_files(Path(__file__).resolve().parents[1] / "monitors", out)]
    ['monitor_adult.py', 'monitor_compas.py', 'monitor_demo.py', 'monitor_german.py']
    """
    specs = _specs(monitors)
    if not specs:
        raise ConfigError(ERR_NO_SPECS.format(folder=monitors))
    dags_folder.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in specs:
        target = dags_folder / dag_file_name(spec)
        if not target.is_file() or target.read_text() != DAG_FILE_TEXT:
            target.write_text(DAG_FILE_TEXT)
        written.append(target)
    if prune:
        for stale in set(dags_folder.glob(f"{DAG_FILE_PREFIX}*.py")) - set(written):
            stale.unlink()
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fairmon_airflow.dagfiles MONITORS_DIR DAGS_DIR [--prune]``."""
    p = argparse.ArgumentParser(prog="python -m fairmon_airflow.dagfiles", description=__doc__.splitlines()[0])
    p.add_argument("monitors", type=Path, help="folder of monitor specs")
    p.add_argument("dags", type=Path, help="Airflow DAG folder to write monitor_<name>.py files into")
    p.add_argument("--prune", action="store_true", help="remove DAG files whose spec is gone")
    args = p.parse_args(argv)
    files: Iterable[Path] = write_dag_files(args.monitors, args.dags, prune=args.prune)
    for f in files:
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
