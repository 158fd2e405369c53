"""The report in a real browser: headless Chromium loads it with no console errors and decodes every image.

Chromium is Debian's ``chromium`` package (``make test`` installs it in CI). Without it the test skips
locally and fails in CI (``CI`` set), so the check cannot silently disappear there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import report_seed
from chromium import chromium_binary, inspect_page

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = chromium_binary()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (make test installs Debian's chromium package)")
        pytest.skip("chromium is not installed")
    return exe


def test_harness_sees_broken_images_and_console_errors(chromium: str, tmp_path: Path) -> None:
    """Negative control: the checks below can fail."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><title>bad</title></head><body>'
        '<img alt="broken" src="data:image/png;base64,AAAA"><img alt="missing" src="missing.png">'
        '<script>console.error("boom")</script></body></html>'
    )
    r = inspect_page(page.as_uri(), binary=chromium)
    assert [i["width"] for i in r.images] == [0, 0]
    assert any("boom" in c for c in r.console)
    assert any("ERR_FILE_NOT_FOUND" in c for c in r.console)


def test_report_renders_cleanly_in_chromium(chromium: str, reports: tuple[Path, list[Any]]) -> None:
    from fairmon.alerts.render import report_path

    location, _ = reports
    html = location / report_path(report_seed.MONITOR, report_seed.day(report_seed.DRIFT_WINDOW))
    r = inspect_page(html.as_uri(), binary=chromium)
    assert r.title == "fairmon · credit · 2026-01-04"
    assert r.console == []
    assert len(r.images) == 5
    for img in r.images:
        assert img["complete"] and img["width"] > 0 and img["height"] > 0, img
