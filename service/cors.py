"""Cross-origin reads (docs/spec/api.md "Cross-origin reads").

The public reads a verifier needs answer any origin, so a verify page served from somewhere
else — a player's own ``verify page`` on 127.0.0.1, a saved copy opened as a file (origin
``null``) — can fetch them: ``GET``/``HEAD`` of ``/v1/keys``, a match's ``transcript`` and
``log-proof`` and ``reveal-proof``, ``/v1/log`` and everything under it, and everything under ``/log/``. Their
answers, errors included (the page shows the server's message), carry
``Access-Control-Allow-Origin: *`` and never ``Access-Control-Allow-Credentials``; a
preflight (``OPTIONS`` with ``Access-Control-Request-Method``) to them is answered 204.
Nothing else is cross-origin: every other path gets no CORS header, and a preflight to it
is not answered as one (the browser then refuses the request).

One pure ASGI middleware, outermost, so even the rate limiter's 429 carries the header.
"""

from __future__ import annotations

import re

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the paths whose GET/HEAD answer any origin
PUBLIC_READS = re.compile(
    r"^(?:/v1/keys|/v1/log(?:/.*)?|/log/.+"
    r"|/v1/matches/[^/]+/(?:transcript|log-proof|reveal-proof))$"
)
READ_METHODS = frozenset({"GET", "HEAD"})
ALLOW_ORIGIN = (b"access-control-allow-origin", b"*")
#: the headers of ours a cross-origin page may read (``/v1/log``'s, service/version.py;
#: a log-proof's missing witnesses)
EXPOSE = (
    b"access-control-expose-headers",
    b"Qahwa-Protocols, Qahwa-Version, Qahwa-Witnesses-Missing",
)
#: how long a browser may keep a preflight's answer (seconds)
MAX_AGE = "86400"


class CrossOriginReads:
    """Adds ``Access-Control-Allow-Origin: *`` to the public reads; answers their preflight."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not PUBLIC_READS.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        headers = dict(scope["headers"])
        if method == "OPTIONS" and b"access-control-request-method" in headers:
            await self._preflight(headers, send)
            return
        if method not in READ_METHODS:
            await self.app(scope, receive, send)
            return

        async def send_with_origin(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() != b"access-control-allow-origin"
                ]
                message = {**message, "headers": [*raw, ALLOW_ORIGIN, EXPOSE]}
            await send(message)

        await self.app(scope, receive, send_with_origin)

    async def _preflight(self, headers: dict[bytes, bytes], send: Send) -> None:
        wanted = headers[b"access-control-request-method"].decode("latin-1").strip().upper()
        out = [
            ALLOW_ORIGIN,
            (b"access-control-allow-methods", b"GET, HEAD"),
            (b"access-control-max-age", MAX_AGE.encode()),
            (b"content-length", b"0"),
        ]
        asked = headers.get(b"access-control-request-headers")
        if asked:  # the CORS-safelisted headers a fetch may add (e.g. Cache-Control)
            out.append((b"access-control-allow-headers", asked))
        status = 204 if wanted in READ_METHODS else 405
        if status == 405:
            out = [(b"allow", b"GET, HEAD"), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": status, "headers": out})
        await send({"type": "http.response.body", "body": b""})


def install(app: FastAPI) -> None:
    """Call after every other middleware is added: the header goes on every answer."""
    app.add_middleware(CrossOriginReads)
