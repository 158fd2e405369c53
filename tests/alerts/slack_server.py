"""A local HTTP server that plays Slack's Web API for tests (127.0.0.1, random port).

It records every request and implements what fairmon uses: ``chat.postMessage`` (stores the message
with blocks, metadata and thread), ``conversations.history`` (newest first; metadata only with
``include_all_metadata``; ``limit``/``cursor`` paging) and ``auth.test``. Failures are scripted:
``fail_next("429", retry_after=1)``, ``fail_next("500")``, ``fail_next("invalid_auth")``,
``fail_next("channel_not_found")``, ``fail_next("drop")`` (close the connection without answering),
optionally only for one method and for several calls. "Stored but reply lost" modes carry the call
out first and then lose the answer: ``fail_next("stored_drop")`` (close the connection) and
``fail_next("stored_500")`` (answer 500), as Slack can after accepting a post. ``conversations.replies``
lists a thread (parent first, like Slack; ``conversations.history`` lists only top-level messages
and broadcast replies, like Slack). Unknown channels answer ``channel_not_found`` and a wrong token
``invalid_auth``, like Slack; so does a message beyond Block Kit's limits (:func:`block_kit_error`:
``msg_too_long`` / ``invalid_blocks``).

Usage::

    with SlackTestServer() as srv:
        client = WebClient(token=srv.token, base_url=srv.base_url)
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

__all__ = ["SlackTestServer", "RecordedRequest", "block_kit_error"]


@dataclass
class RecordedRequest:
    method: str  #: Slack API method, e.g. chat.postMessage
    params: dict[str, Any]
    headers: dict[str, str]
    status: int = 200
    answer: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Failure:
    kind: str
    method: str | None
    times: int
    retry_after: int


#: Slack's Block Kit limits, enforced like Slack does: the message is refused
MAX_BLOCKS, MAX_SECTION_TEXT, MAX_HEADER_TEXT, MAX_TEXT, MAX_FIELDS = 50, 3000, 150, 40_000, 10


def block_kit_error(text: Any, blocks: Any) -> str | None:
    """The error Slack answers for a message beyond its limits (``msg_too_long``, ``invalid_blocks``), or None.

    Checked: the fallback text (40 000), the number of blocks (50), a section's text (3000) and fields
    (10, 2000 each), a header's text (150), a context's elements (10)."""
    if isinstance(text, str) and len(text) > MAX_TEXT:
        return "msg_too_long"
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return "invalid_blocks"
    for b in blocks:
        kind, t = b.get("type"), (b.get("text") or {}).get("text", "")
        if kind == "header" and (len(t) > MAX_HEADER_TEXT or b["text"].get("type") != "plain_text"):
            return "invalid_blocks"
        if kind == "section":
            if len(t) > MAX_SECTION_TEXT:
                return "invalid_blocks"
            fields = b.get("fields") or []
            if len(fields) > MAX_FIELDS or any(len(f.get("text", "")) > 2000 for f in fields):
                return "invalid_blocks"
            if not t and not fields:
                return "invalid_blocks"
        if kind == "context" and len(b.get("elements") or []) > 10:
            return "invalid_blocks"
    return None


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("1", "true")


class SlackTestServer:
    """Fake Slack Web API; ``base_url`` ends with ``/api/`` as slack-sdk expects."""

    def __init__(self, *, token: str = "xoxb-test-token", channels: tuple[str, ...] = ("#fairness", "#oncall")):
        self.token = token
        self.channels = set(channels)
        self.requests: list[RecordedRequest] = []
        self.messages: dict[str, list[dict[str, Any]]] = {c: [] for c in channels}
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self._ts = 1767225600_000000  # microseconds; ts strings look like Slack's "1767225600.000100"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # ---------------------------------------------------------------- control
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/api/"

    def start(self) -> SlackTestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SlackTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail_next(self, kind: str, *, method: str | None = None, times: int = 1, retry_after: int = 1) -> None:
        """Script the next ``times`` matching calls to fail with ``kind``."""
        with self._lock:
            self._failures.append(_Failure(kind, method, times, retry_after))

    def calls(self, method: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method]

    def posted(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Messages accepted so far (oldest first), across channels unless one is named."""
        with self._lock:
            if channel is not None:
                return list(self.messages.get(channel, []))
            return [m for msgs in self.messages.values() for m in msgs]

    # ---------------------------------------------------------------- logic
    def _take_failure(self, method: str) -> _Failure | None:
        with self._lock:
            for f in self._failures:
                if f.method is None or f.method == method:
                    f.times -= 1
                    if f.times <= 0:
                        self._failures.remove(f)
                    return f
        return None

    def _next_ts(self) -> str:
        with self._lock:
            self._ts += 100
            return f"{self._ts // 1_000_000}.{self._ts % 1_000_000:06d}"

    def _api(self, method: str, params: dict[str, Any], auth: str | None) -> tuple[int, dict[str, Any]]:
        token = (auth or "").removeprefix("Bearer ").strip() or params.get("token")
        if token != self.token:
            return 200, {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return 200, {"ok": True, "user_id": "UFAIRMON", "team": "test"}
        channel = params.get("channel")
        if channel not in self.channels:
            return 200, {"ok": False, "error": "channel_not_found"}
        if method == "chat.postMessage":
            ts = self._next_ts()
            meta = params.get("metadata")
            if isinstance(meta, str):
                meta = json.loads(meta)
            blocks = params.get("blocks")
            if isinstance(blocks, str):
                blocks = json.loads(blocks)
            refused = block_kit_error(params.get("text"), blocks)
            if refused is not None:
                return 200, {"ok": False, "error": refused}
            msg = {"type": "message", "ts": ts, "text": params.get("text"), "blocks": blocks,
                   "metadata": meta, "thread_ts": params.get("thread_ts"),
                   "reply_broadcast": params.get("reply_broadcast")}
            with self._lock:
                self.messages[channel].append(msg)
            return 200, {"ok": True, "channel": channel, "ts": ts, "message": msg}
        if method in ("conversations.history", "conversations.replies"):
            include_meta = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
            limit = int(params.get("limit") or 100)
            start = int(params.get("cursor") or 0)
            with self._lock:
                if method == "conversations.history":
                    msgs = [m for m in reversed(self.messages[channel])
                            if not m.get("thread_ts") or _truthy(m.get("reply_broadcast"))]
                else:
                    parent = params.get("ts")
                    msgs = [m for m in self.messages[channel] if parent in (m["ts"], m.get("thread_ts"))]
                    if not msgs:
                        return 200, {"ok": False, "error": "thread_not_found"}
            page = msgs[start:start + limit]
            out = []
            for m in page:
                item = {k: v for k, v in m.items() if k != "metadata" and v is not None}
                if include_meta and m.get("metadata"):
                    item["metadata"] = m["metadata"]
                out.append(item)
            more = start + limit < len(msgs)
            return 200, {"ok": True, "messages": out, "has_more": more,
                         "response_metadata": {"next_cursor": str(start + limit) if more else ""}}
        return 200, {"ok": False, "error": "unknown_method"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def do_POST(self) -> None:  # noqa: N802
                self._serve()

            def _serve(self) -> None:
                url = urlparse(self.path)
                method = url.path.rsplit("/", 1)[-1]
                params: dict[str, Any] = {k: v[0] for k, v in parse_qs(url.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                ctype = self.headers.get("Content-Type", "")
                if body and "json" in ctype:
                    params.update(json.loads(body))
                elif body:
                    params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
                rec = RecordedRequest(method, params, dict(self.headers))
                with server._lock:
                    server.requests.append(rec)
                failure = server._take_failure(method)
                if failure is not None and failure.kind.startswith("stored_"):
                    server._api(method, params, self.headers.get("Authorization"))  # done, then the reply is lost
                    failure = _Failure(failure.kind.removeprefix("stored_"), method, 1, failure.retry_after)
                if failure is not None:
                    if failure.kind == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        rec.status = -1
                        return
                    if failure.kind == "429":
                        self._reply(429, {"ok": False, "error": "ratelimited"},
                                    {"Retry-After": str(failure.retry_after)}, rec)
                        return
                    if failure.kind in ("500", "503"):
                        self._reply(int(failure.kind), {"ok": False, "error": "internal_error"}, {}, rec)
                        return
                    self._reply(200, {"ok": False, "error": failure.kind}, {}, rec)
                    return
                status, answer = server._api(method, params, self.headers.get("Authorization"))
                self._reply(status, answer, {}, rec)

            def _reply(self, status: int, answer: dict[str, Any], headers: dict[str, str],
                       rec: RecordedRequest) -> None:
                rec.status, rec.answer = status, answer
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler
