"""A small client for the MLflow tracking server's REST API (model registry and artifact proxy).

Why not the ``mlflow`` package: fairmon needs eight endpoints of a stable, documented REST API; the
``mlflow`` client pins its own ``pyarrow`` / ``cachetools`` ranges, which conflict with Airflow's, and
imports in seconds. The server is what teams already run; it talks HTTP. Artifacts go through the
server's artifact proxy (``mlflow server`` serves ``mlflow-artifacts:/`` URIs by default since 2.0), so
fairmon needs no credentials for the artifact store behind it.

Every failure is a :class:`~fairmon.errors.SnapshotError` naming the server, the endpoint and MLflow's
own ``error_code`` / ``message`` (tokens and passwords never appear: only the base URL's host is shown).

Example
-------
>>> parse_tracking_uri("mlflow+http://127.0.0.1:5000")
'http://127.0.0.1:5000'
>>> artifact_path("mlflow-artifacts:/0/models/m-1/artifacts")
'0/models/m-1/artifacts'
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from fairmon._uris import MLFLOW_SCHEMES
from fairmon.errors import SnapshotError

__all__ = ["MlflowRest", "parse_tracking_uri", "artifact_path"]

_PROXY_PREFIX = "mlflow-artifacts:/"

ERR_SCHEME = "not an MLflow registry URI {uri!r}: use mlflow+http://HOST:PORT or mlflow+https://HOST"
ERR_HTTP = "MLflow server {host} answered {status} to {method} {endpoint}: {detail}"
ERR_UNREACHABLE = "MLflow server {host} is unreachable ({method} {endpoint}): {error}"
ERR_NOT_PROXIED = (
    "model artifacts at {uri!r} are not served by the MLflow server's artifact proxy; fairmon reads "
    "mlflow-artifacts:/ URIs only (start the server with --serve-artifacts, MLflow's default)"
)


def parse_tracking_uri(uri: str) -> str:
    """The server's HTTP base URL for a spec URI ``mlflow+http(s)://...`` (trailing slash removed)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme.lower() not in MLFLOW_SCHEMES or not rest.strip("/"):
        raise SnapshotError(ERR_SCHEME.format(uri=uri))
    return f"{scheme.lower().split('+', 1)[1]}://{rest.rstrip('/')}"


def artifact_path(uri: str) -> str:
    """The proxy path of an ``mlflow-artifacts:/...`` URI (what the artifact endpoints take)."""
    if not uri.startswith(_PROXY_PREFIX):
        raise SnapshotError(ERR_NOT_PROXIED.format(uri=uri))
    path = uri[len(_PROXY_PREFIX):].lstrip("/")
    # ``mlflow-artifacts://host:port/path`` names the server explicitly: keep the path only
    if uri.startswith(_PROXY_PREFIX + "/"):
        path = path.split("/", 1)[1] if "/" in path else ""
    return path


class MlflowRest:
    """JSON calls and artifact transfers against one MLflow server (``base_url`` = ``http://host:port``).

    ``timeout`` (seconds) bounds every call: a hung server fails the step with a clear error instead of
    holding a worker slot.
    """

    def __init__(self, base_url: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.host = urllib.parse.urlsplit(self.base_url).netloc.rpartition("@")[2]
        token = os.environ.get("MLFLOW_TRACKING_TOKEN")  # MLflow's own variable for bearer auth
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}

    def __repr__(self) -> str:
        return f"MlflowRest({self.host!r})"

    # ------------------------------------------------------------------ transport
    def _send(self, method: str, endpoint: str, *, query: dict[str, str] | None = None,
              body: bytes | None = None, content_type: str | None = None) -> bytes:
        url = f"{self.base_url}{endpoint}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - http(s) only
                data: bytes = resp.read()
                return data
        except urllib.error.HTTPError as exc:
            raw = exc.read()[:2000].decode("utf-8", "replace")
            try:
                err = json.loads(raw)
                detail = f"{err.get('error_code', '')} {err.get('message', '')}".strip()
            except ValueError:
                detail = raw[:300] or exc.reason
            raise SnapshotError(ERR_HTTP.format(host=self.host, status=exc.code, method=method,
                                                endpoint=endpoint, detail=detail)) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SnapshotError(ERR_UNREACHABLE.format(host=self.host, method=method, endpoint=endpoint,
                                                       error=reason)) from exc

    def get(self, endpoint: str, **query: str) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(self._send("GET", f"/api/2.0/mlflow/{endpoint}", query=query) or b"{}")
        return out

    def post(self, endpoint: str, payload: dict[str, Any]) -> dict[str, Any]:
        raw = self._send("POST", f"/api/2.0/mlflow/{endpoint}", body=json.dumps(payload).encode(),
                         content_type="application/json")
        out: dict[str, Any] = json.loads(raw or b"{}")
        return out

    # ------------------------------------------------------------------ artifacts (server proxy)
    def list_files(self, path: str) -> list[tuple[str, int]]:
        """Every file under the proxy ``path``, recursively, as (relative path, size), sorted."""
        out: list[tuple[str, int]] = []
        pending = [""]
        while pending:
            rel = pending.pop()
            full = f"{path}/{rel}".rstrip("/") if rel else path
            raw = self._send("GET", "/api/2.0/mlflow-artifacts/artifacts", query={"path": full})
            for entry in json.loads(raw or b"{}").get("files", []):
                child = f"{rel}/{entry['path']}".lstrip("/") if rel else str(entry["path"])
                if entry.get("is_dir"):
                    pending.append(child)
                else:
                    out.append((child, int(entry.get("file_size", 0))))
        return sorted(out)

    def download(self, path: str) -> bytes:
        return self._send("GET", "/api/2.0/mlflow-artifacts/artifacts/" + urllib.parse.quote(path))

    def upload(self, path: str, data: bytes) -> None:
        self._send("PUT", "/api/2.0/mlflow-artifacts/artifacts/" + urllib.parse.quote(path), body=data,
                   content_type="application/octet-stream")
