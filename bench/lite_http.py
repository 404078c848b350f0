"""A small keep-alive HTTP/1.1 client for the load generators (stdlib ``http.client``).

The load and the servers share one 2-core machine, so the client's own CPU is taken from
the servers under test: httpx spends about 1 ms of CPU per request here, this client a
fraction of that. Only what the benchmarks use: JSON bodies, one connection per client.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit


class Response:
    def __init__(self, status: int, body: bytes) -> None:
        self.status_code = status
        self.content = body

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class LiteClient:
    """``LiteClient("http://127.0.0.1:8000").get("/healthz").status_code``."""

    def __init__(self, base_url: str, timeout: float = 60) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"only http://host:port URLs: {base_url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = None if json_body is None else json.dumps(json_body).encode()
        hdrs = {"Accept": "application/json", **(headers or {})}
        if body is not None:
            hdrs["Content-Type"] = "application/json"
        for attempt in (1, 2):  # a keep-alive connection the server closed: once more
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=hdrs)
                r = conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 2:
                    raise
                continue
            if r.will_close:
                self.close()
            return Response(r.status, data)
        raise AssertionError("unreachable")

    def get(self, path: str, *, headers: dict[str, str] | None = None) -> Response:
        return self.request("GET", path, headers=headers)

    def post(
        self,
        path: str,
        *,
        json: Any = None,  # noqa: A002 (httpx's name)
        headers: dict[str, str] | None = None,
    ) -> Response:
        return self.request("POST", path, json_body=json, headers=headers)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
