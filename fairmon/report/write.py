"""Write reports where the alerts link to them: the pipeline's report step and ``fairmon report``.

Location. A report lives at ``{location}/{report_path(monitor, window_start)}`` —
:func:`fairmon.alerts.render.report_path` is the one definition of that relative path, and the Slack
message links to ``{alerts.report_base_url}/{report_path(...)}`` — so serving ``location`` at the
base URL makes every link work. ``location`` is ``FAIRMON_REPORT_LOCATION`` when set, else the
``reports`` folder next to the spec's ``execution.artifact_location`` (``~/.fairmon/reports`` by
default, with or without a spec: ``FAIRMON_HOME`` moves the embedded database only;
``demo-output/reports`` for the demo). Like the artifacts, it may be any fsspec URI
(``s3://bucket/fairmon/reports``). Each monitor folder also gets an ``index.html`` listing its
windows.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fairmon.alerts.render import report_path
from fairmon.config import ENV_REPORT_LOCATION
from fairmon.errors import ConfigError
from fairmon.pipeline.runs import spec_owner_path
from fairmon.report._template import CSS, INDEX_TEMPLATE
from fairmon.report.data import DEFAULT_HISTORY, ERR_NO_RUNS, load_report_data, report_status
from fairmon.report.render import render_html

if TYPE_CHECKING:  # pragma: no cover
    from fairmon.config import MonitorSpec
    from fairmon.pipeline.context import RunContext
    from fairmon.store import Store

__all__ = [
    "ENV_REPORT_LOCATION",
    "report_location",
    "write_report",
    "write_window_report",
    "write_index",
    "rebuild_reports",
    "WrittenReport",
]


@dataclass(frozen=True)
class WrittenReport:
    """One written report: where, for which window, and its size."""

    monitor: str
    window_start: datetime
    status: str
    path: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "window_start": self.window_start.isoformat(),
            "status": self.status,
            "path": self.path,
            "bytes": self.bytes,
        }


def report_location(spec: MonitorSpec | None = None) -> str:
    """Root folder/URI of the reports (see the module docstring for the rule).

    >>> import os
    >>> os.environ.pop("FAIRMON_REPORT_LOCATION", None) and None
    >>> from fairmon.config import MonitorSpec
    >>> spec = MonitorSpec.model_validate({"spec_version": 1, "identity": {"name": "m"},
    ...     "model": {"registry_uri": "r"}, "data": {"files": {"pattern": "d/{start:%Y-%m-%d}.csv"}},
    ...     "columns": {"features": ["a"], "sensitive": ["a"]}, "schedule": {"start_date": "2026-01-01"},
    ...     "execution": {"artifact_location": "s3://bucket/fairmon/artifacts"}})
    >>> report_location(spec)
    's3://bucket/fairmon/reports'
    """
    env = os.environ.get(ENV_REPORT_LOCATION)
    if env:
        return env
    if spec is None:
        return os.path.expanduser("~/.fairmon/reports")  # beside the spec's default artifact_location
    env_art = os.environ.get("FAIRMON_ARTIFACT_LOCATION")
    art = env_art if env_art else spec.resolve_path(spec.execution.artifact_location)
    art = os.path.expanduser(str(art)).rstrip("/")
    parent = posixpath.dirname(art) if "://" in art else os.path.dirname(art)
    return (parent.rstrip("/") + "/reports") if parent else "reports"


def _write_text(location: str, relpath: str, text: str) -> str:
    import fsspec

    uri = f"{location.rstrip('/')}/{relpath}"
    fs, path = fsspec.core.url_to_fs(uri)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with fs.open(tmp, "wb") as fh:
        fh.write(text.encode("utf-8"))
    fs.mv(tmp, path)  # a reader (the web server) never sees half a report
    return uri


def _rebuild_command(monitor: str, window_start: datetime, location: str, spec_path: str | None) -> str:
    """The command that writes this report again, at this place (without ``--output`` it would go to the
    default location, which a demo's or a spec's reports are not in; without ``--spec`` the page loses the
    allowed ranges the spec declares). The store is the reader's to name: a URL may hold a password.

    >>> from datetime import datetime
    >>> _rebuild_command("demo", datetime(2026, 1, 8), "out/reports", "/m/demo.yaml")
    'fairmon report --monitor demo --window 2026-01-08 --spec /m/demo.yaml --output out/reports'
    """
    spec = f" --spec {shlex.quote(spec_path)}" if spec_path else ""
    return (f"fairmon report --monitor {shlex.quote(monitor)} --window {window_start:%Y-%m-%d}{spec} "
            f"--output {shlex.quote(location)}")


def write_window_report(
    store: Store,
    monitor: str,
    window: datetime | str | None,
    *,
    location: str,
    rumie_method: str | None = None,
    history: int | None = None,
    allowed_ranges: Mapping[str, Any] | None = None,
    spec_path: str | None = None,
) -> WrittenReport:
    """Render one window's report from the store and write it at its stable path under ``location``.

    Examples
    --------
    >>> from fairmon.store import open_store  # doctest: +SKIP
    >>> write_window_report(open_store(), "demo", "2026-01-07", location="demo-output/reports").path  # doctest: +SKIP
    'demo-output/reports/demo/2026-01-07.html'
    """

    data = load_report_data(
        store, monitor, window, rumie_method=rumie_method, history=history or DEFAULT_HISTORY,
        allowed_ranges=allowed_ranges,
    )
    html = render_html(data, rebuild_command=_rebuild_command(monitor, data.run.window_start, location, spec_path))
    uri = _write_text(location, report_path(monitor, data.run.window_start), html)
    return WrittenReport(monitor, data.run.window_start, data.status, uri, len(html.encode("utf-8")))


def write_index(store: Store, monitor: str, *, location: str) -> str:
    """``{location}/{monitor}/index.html``: every window of the monitor, newest first, with its link."""
    import fsspec
    import jinja2
    from markupsafe import Markup

    rows = []
    for run in reversed(store.runs(monitor)):
        rel = report_path(monitor, run.window_start)
        fs, path = fsspec.core.url_to_fs(f"{location.rstrip('/')}/{rel}")
        status = report_status(run.status, store.findings_of_run(int(run.run_id or 0)))
        rows.append(
            {
                "window": f"{run.window_start:%Y-%m-%d}",
                "status": status,
                "model": run.model_version or "",
                "href": posixpath.basename(rel) if fs.exists(path) else None,
            }
        )
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.from_string(INDEX_TEMPLATE).render(monitor=monitor, rows=rows, css=Markup(CSS))
    folder = posixpath.dirname(report_path(monitor, datetime(2000, 1, 1)))
    return _write_text(location, f"{folder}/index.html", html)


def rebuild_reports(
    store: Store,
    monitor: str,
    windows: Sequence[datetime | str] | None = None,
    *,
    location: str,
    rumie_method: str | None = None,
    allowed_ranges: Mapping[str, Any] | None = None,
    spec_path: str | None = None,
) -> list[WrittenReport]:
    """Rebuild reports from the store (every window of the monitor when ``windows`` is None) + index."""
    if windows is None:
        runs = store.runs(monitor)
        if not runs:
            raise ConfigError(ERR_NO_RUNS.format(monitor=monitor))
        targets: list[datetime | str] = [r.window_start for r in runs]
    else:
        targets = list(windows)
    out = [
        write_window_report(store, monitor, w, location=location, rumie_method=rumie_method,
                            allowed_ranges=allowed_ranges, spec_path=spec_path)
        for w in targets
    ]
    write_index(store, monitor, location=location)
    return out


def write_report(ctx: RunContext) -> str:
    """The pipeline's report step: this window's report (and the monitor's index) from the store.

    Returns the report's URI (a local path for a local location). Called by
    :func:`fairmon.pipeline.steps.report` after ``persist``, ``drift`` and ``feu`` wrote their rows.
    """
    location = report_location(ctx.spec)
    written = write_window_report(
        ctx.store, ctx.monitor, ctx.window.start, location=location, rumie_method=ctx.spec.rumie.method,
        allowed_ranges=ctx.spec.drift.allowed_ranges, spec_path=spec_owner_path(ctx),
    )
    write_index(ctx.store, ctx.monitor, location=location)
    return written.path
