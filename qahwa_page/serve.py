"""The verify page served from this install on 127.0.0.1 (``verify page``), stdlib only.

The same page and the same assets as the service's ``/verify`` and ``/static/…``
(:mod:`qahwa_page.pyodide` answers both): the page, its scripts, the manifest, the page's
Python zipped from the installed packages, and the pinned Pyodide runtime when it is
installed beside them (a ``qahwa-verify`` wheel carries it). ``runtime_dir=None`` serves the
page without the runtime, as a server without it does: the page then says it did not replay
the rules. The API paths (``/v1/…``, ``/log/…``) answer 404 ``not_a_qahwa_server``: the
page then asks for the operator's server. Anything else answers 404 in the service's error
format.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import STATIC_DIR, page_html
from .pyodide import PAGE_CSP, RUNTIME_DIR, asset

#: the page's files served as they are (the service's /static mount serves the same)
PLAIN_FILES: dict[str, str] = {
    "verify.html": "text/html; charset=utf-8",
    "merkle.js": "text/javascript; charset=utf-8",
    "verify.js": "text/javascript; charset=utf-8",
    # qahwa-fair/3: the verifier (with the @noble libraries it runs on) the worker loads for them
    "sealed-verify.js": "text/javascript; charset=utf-8",
}
#: the code sealed-verify.js shares with play.js (the @noble libraries, the sealed
#: cryptography): chunks of one esbuild run (clients/ts ``build:tab``), served as they are
CHUNK = re.compile(r"chunk-[A-Z0-9]+\.js")
#: the error code of an API path here (the page reads it: qahwa_page/static/verify.html)
NOT_A_SERVER = "not_a_qahwa_server"
NOT_A_SERVER_MESSAGE = (
    "this is verify page, the verify page of your own install: it holds no matches, keys or "
    "log; give the operator's server URL"
)


class PageServer(ThreadingHTTPServer):
    """An HTTP server for the page; ``url`` is its address once bound."""

    daemon_threads = True

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, runtime_dir: Path | None = RUNTIME_DIR
    ) -> None:
        self.runtime_dir = runtime_dir
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/verify"

    def start(self) -> threading.Thread:
        """Serve from a daemon thread (tests); ``shutdown()`` and ``server_close()`` stop it."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: PageServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet, like uvicorn's -q
        pass

    def _send(
        self,
        status: int,
        body: bytes,
        ctype: str,
        headers: dict[str, str] | None = None,
        *,
        head: bool = False,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _answer(self, head: bool) -> None:
        path = urlsplit(self.path).path
        if path in ("/", ""):
            self.send_response(302)
            self.send_header("Location", "/verify")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/verify":
            self._send(
                200,
                page_html(),
                PLAIN_FILES["verify.html"],
                {"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-cache"},
                head=head,
            )
            return
        if path.startswith("/static/"):
            name = path[len("/static/") :]
            # without the runtime, point asset() at a directory that never holds one
            found = asset(name, self.server.runtime_dir or STATIC_DIR / "no-runtime")
            if found is not None:
                body = found.body.read_bytes() if isinstance(found.body, Path) else found.body
                self._send(200, body, found.media_type, found.headers, head=head)
                return
            if name in PLAIN_FILES or (CHUNK.fullmatch(name) and (STATIC_DIR / name).is_file()):
                self._send(
                    200,
                    (STATIC_DIR / name).read_bytes(),
                    PLAIN_FILES.get(name, "text/javascript; charset=utf-8"),
                    {"Cache-Control": "no-cache"},
                    head=head,
                )
                return
        if path.startswith(("/v1/", "/log/")):
            # the player's own page is no qahwa server: the page says to give the operator's
            answer = {"error": {"code": NOT_A_SERVER, "message": NOT_A_SERVER_MESSAGE}}
            self._send(404, json.dumps(answer).encode(), "application/json", head=head)
            return
        message = f"no such file: {path}"
        if path.startswith("/static/pyodide/"):
            message += (
                " (served without the Pyodide runtime)"
                if self.server.runtime_dir is None
                else " (the Pyodide runtime is not installed: make pyodide)"
            )
        body = json.dumps({"error": {"code": "not_found", "message": message}}).encode()
        self._send(404, body, "application/json", head=head)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(head=True)
