"""Open a page in headless Chromium over the DevTools protocol; collect console errors and image state.

Why the protocol instead of ``--dump-dom``: the report's Content-Security-Policy forbids scripts, so
an injected script would not run (and must not: the test would then check a different page), while
``Runtime.evaluate`` is not subject to the page's CSP. The protocol also reports every console
message, uncaught exception and browser log entry (failed loads, CSP violations), which ``--dump-dom``
cannot see.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
)

_IMAGES_JS = """
(async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  return JSON.stringify(imgs.map(i => ({alt: i.alt, complete: i.complete,
                                        width: i.naturalWidth, height: i.naturalHeight})));
})()
"""


@dataclass
class PageReport:
    images: list[dict[str, Any]] = field(default_factory=list)
    console: list[str] = field(default_factory=list)  # console errors/warnings, exceptions, log errors
    title: str = ""


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


async def _inspect(binary: str, url: str, timeout: float) -> PageReport:
    import websockets

    profile = tempfile.mkdtemp(prefix="fairmon-chromium-")
    proc = await asyncio.create_subprocess_exec(
        binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    drain: asyncio.Task[None] | None = None
    try:
        assert proc.stderr is not None
        ws_url = None
        while ws_url is None:
            line = await asyncio.wait_for(proc.stderr.readline(), timeout)
            if not line:
                raise RuntimeError("chromium exited before opening the DevTools port")
            m = re.search(rb"DevTools listening on (ws://\S+)", line)
            if m:
                ws_url = m.group(1).decode()

        async def _drain() -> None:  # keep stderr flowing so chromium never blocks on a full pipe
            assert proc.stderr is not None
            while await proc.stderr.readline():
                pass

        drain = asyncio.ensure_future(_drain())
        report = PageReport()
        async with websockets.connect(ws_url, max_size=None) as ws:
            next_id = 0
            events: list[dict[str, Any]] = []

            async def call(method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
                nonlocal next_id
                next_id += 1
                msg: dict[str, Any] = {"id": next_id, "method": method, "params": params or {}}
                if session:
                    msg["sessionId"] = session
                await ws.send(json.dumps(msg))
                while True:
                    data = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                    if data.get("id") == next_id:
                        if "error" in data:
                            raise RuntimeError(f"{method}: {data['error']}")
                        return data.get("result", {})
                    events.append(data)

            target = (await call("Target.createTarget", {"url": "about:blank"}))["targetId"]
            session = (await call("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
            for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
                await call(domain, session=session)
            await call("Page.navigate", {"url": url}, session=session)
            while not any(e.get("method") == "Page.loadEventFired" for e in events):
                events.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
            res = await call(
                "Runtime.evaluate", {"expression": _IMAGES_JS, "awaitPromise": True, "returnByValue": True},
                session=session,
            )
            report.images = json.loads(res["result"]["value"])
            title = await call("Runtime.evaluate", {"expression": "document.title", "returnByValue": True},
                               session=session)
            report.title = str(title["result"]["value"])
            await asyncio.sleep(0.2)  # late console messages (e.g. an image that failed after load)
            try:
                while True:
                    events.append(json.loads(await asyncio.wait_for(ws.recv(), 0.2)))
            except TimeoutError:
                pass
            for e in events:
                method, p = e.get("method"), e.get("params", {})
                if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                    report.console.append(f"console.{p['type']}: {p.get('args')}")
                elif method == "Runtime.exceptionThrown":
                    report.console.append(f"exception: {p.get('exceptionDetails')}")
                elif method == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                    entry = p["entry"]
                    report.console.append(f"log.{entry['level']} [{entry.get('source')}]: {entry.get('text')}")
            await call("Browser.close")
        return report
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        if drain is not None:
            drain.cancel()
        shutil.rmtree(profile, ignore_errors=True)


def inspect_page(url: str, *, binary: str | None = None, timeout: float = 45.0) -> PageReport:
    """Load ``url`` in headless Chromium; return its images (natural sizes) and console problems."""
    exe = binary or chromium_binary()
    if exe is None:
        raise FileNotFoundError("chromium not found")
    return asyncio.run(asyncio.wait_for(_inspect(exe, url, timeout), timeout * 2))


def screenshot(url: str, out: str, *, width: int = 1280, height: int = 2400, binary: str | None = None) -> None:
    """``chromium --screenshot`` of a page at a fixed window size (for the README picture)."""
    import subprocess

    exe = binary or chromium_binary()
    if exe is None:
        raise FileNotFoundError("chromium not found")
    profile = tempfile.mkdtemp(prefix="fairmon-chromium-")
    try:
        subprocess.run(
            [exe, *FLAGS, f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={width},{height}",
             "--virtual-time-budget=5000", f"--screenshot={out}", url],
            check=True, capture_output=True, timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
