"""fairmon.report: the static HTML run report of one monitoring window, rebuilt from the store.

One self-contained page per (monitor, window) — summary, drift findings, outcome metrics with CIs,
the RUMIE decision tree and rules, GESD per group, the OpenXAI table, trends across windows, the FEU
Pareto front — written where the Slack alert links to it (:func:`fairmon.alerts.render.report_path`).
Everything is read from the store, so ``fairmon report`` can rebuild any report later.

Light on import: the submodules (matplotlib, jinja2) load on first attribute access.

>>> from fairmon.report import SECTIONS  # doctest: +SKIP
>>> [s for s, _ in SECTIONS][:3]  # doctest: +SKIP
['summary', 'findings', 'outcome']
"""

from __future__ import annotations

from typing import Any

from fairmon._lazy import lazy_attribute

__all__ = [
    "write_report",
    "write_window_report",
    "write_index",
    "rebuild_reports",
    "report_location",
    "WrittenReport",
    "ENV_REPORT_LOCATION",
    "load_report_data",
    "ReportData",
    "TrendPoint",
    "render_html",
    "SECTIONS",
]

_LAZY = {
    "write_report": "fairmon.report.write",
    "write_window_report": "fairmon.report.write",
    "write_index": "fairmon.report.write",
    "rebuild_reports": "fairmon.report.write",
    "report_location": "fairmon.report.write",
    "WrittenReport": "fairmon.report.write",
    "ENV_REPORT_LOCATION": "fairmon.report.write",
    "load_report_data": "fairmon.report.data",
    "ReportData": "fairmon.report.data",
    "TrendPoint": "fairmon.report.data",
    "render_html": "fairmon.report.render",
    "SECTIONS": "fairmon.report.render",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, name)
