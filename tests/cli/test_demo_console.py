"""The demo's live console shows Slack messages and errors verbatim (no rich markup swallowed)."""

from __future__ import annotations

from rich.console import Console

from fairmon.cli.demo import _slack_panel, _window_line


def _render(obj: object) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(obj)
    return console.export_text()


def test_slack_panel_keeps_bracketed_registry_versions() -> None:
    out = _render(_slack_panel({"channel": "#fairness", "text": "#3 [v3]: AUC 0.708 ← recommended [bold]x[/]"}))
    assert "#3 [v3]: AUC 0.708 ← recommended [bold]x[/]" in out
    assert "Slack #fairness" in out


def test_window_line_escapes_the_error_text() -> None:
    outcome = {
        "index": 4, "window": {"start": "2026-01-05T00:00:00+00:00"}, "model_version": "v1", "status": "failed",
        "steps": {"rumie": {"honest_dscore": None}}, "seconds": 1.25,
        "error": "validation: column [income] missing",
    }
    out = _render(_window_line(outcome))
    assert "window 4 2026-01-05 model v1: failed honest DScore n/a findings - (1.2s)" in out
    assert "validation: column [income] missing" in out
    done = {**outcome, "status": "succeeded", "error": None, "steps": {"rumie": {"honest_dscore": 0.05}}}
    assert "honest DScore 0.050 " in _render(_window_line(done))  # three decimals, as on every other line
    waiting = {**done, "steps": {**done["steps"], "drift": {"findings": 3, "pending": 3, "drifted": False}}}
    assert "findings 3, 3 pending persistence: no alert yet (1.2s)" in _render(_window_line(waiting))
