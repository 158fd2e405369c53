"""The alert-quality benchmark's smoke mode runs the real pipeline pieces end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "alert_quality" / "run.py"


@pytest.mark.slow
def test_alert_quality_benchmark_smoke(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "alert_quality_smoke.json").read_text())
    assert data["settings"]["smoke"] is True and data["commit"]
    assert "loadavg" in data["machine"]
    measures = {r["measure"].split(" ")[0]: r for r in data["rows"]}
    assert 0.0 <= measures["false-alarm"]["value"] <= 1.0
    windows = json.loads((tmp_path / "alert_quality_smoke_windows.json").read_text())["rows"]
    assert len(windows) == 6 and all(w["honest_dscore"] is not None for w in windows)
    trials = json.loads((tmp_path / "alert_quality_smoke_trials.json").read_text())["rows"]
    assert len(trials) == 1 and trials[0]["dscore_after"] > trials[0]["dscore_before"]
    assert {"messages_top_level", "messages_followups", "messages_resolutions", "messages_if_per_finding"} <= set(trials[0])
    assert measures["drift"]["detail"].startswith("per event: top-level messages")
    assert (tmp_path / "alert_quality_smoke.md").read_text().startswith("# alert_quality_smoke")


def test_messages_per_drift_event_are_counted_as_the_outbox_groups_them() -> None:
    """Two rules opening on the RUMIE group, an escalation, then both resolving: 2 top-level messages
    (one per window with notified findings), 1 FEU follow-up, 1 resolution; per finding it was 5."""
    import importlib.util
    from datetime import UTC, datetime, timedelta

    from fairmon.drift import Finding

    spec = importlib.util.spec_from_file_location("alert_quality_run", RUN)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def f(kind: str, day: int, status: str, notify: bool = True) -> Finding:
        return Finding(kind=kind, metric="rumie_honest_dscore", group="", severity="warning", value=0.2,
                       monitor="m", window_start=t0 + timedelta(days=day), message="", status=status,  # type: ignore[arg-type]
                       notify=notify, since=t0)

    decisions = [
        [f("rumie_dscore", 0, "open"), f("rumie_rise", 0, "open")],
        [f("rumie_dscore", 1, "ongoing", notify=False), f("rumie_rise", 1, "ongoing", notify=True)],  # escalated
        [f("rumie_dscore", 2, "ongoing", notify=False)],
        [f("rumie_dscore", 3, "resolved"), f("rumie_rise", 3, "resolved")],
    ]
    assert mod._messages(decisions) == {"top_level": 2, "resolutions": 1, "followups": 1, "per_finding": 5}
