"""Request limits: per client address, and per rng session (docs/deploy.md "Limits").

- Every request except creation (limited per operator key, :mod:`service.operators`),
  ``/healthz`` and ``/metrics`` counts against its client address:
  ``QAHWA_RATE_PER_SECOND_PER_IP`` a second (a sliding-window counter from the ``limits``
  library, in memory); over it: 429 ``rate_limited`` with ``Retry-After``. The state is
  per process: N processes let an address make up to N times the rate. The client address
  is the connection's, or the one the reverse proxy names in ``X-Forwarded-For`` when the
  proxy is among uvicorn's ``--forwarded-allow-ips`` (default 127.0.0.1).
- An rng session takes at most ``QAHWA_MAX_SESSION_DRAWS`` draws and at most
  ``QAHWA_MAX_TRANSCRIPT_BYTES`` bytes of draw results (the JSON of every ``result``, which
  is what makes a transcript large: a 1,000-card shuffle is about 3.9 kB); then 409
  ``session_full`` and nothing changes. Closing stays possible.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Sequence

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import Conflict, error_body

#: (method, path) pairs not limited per address: creation has its own limit per key
EXEMPT = {("POST", "/v1/matches"), ("POST", "/v1/rng"), ("GET", "/healthz"),
          ("GET", "/metrics")}


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class AddressLimit:
    """ASGI middleware: ``per_second`` requests a second per client address (0: none)."""

    def __init__(self, app: ASGIApp, per_second: int) -> None:
        self.app = app
        self.per_second = per_second
        self.item = RateLimitItemPerSecond(max(1, per_second))
        self.limiter = SlidingWindowCounterRateLimiter(MemoryStorage())
        self.limited = 0  # requests refused (also in /metrics)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or self.per_second <= 0
                or (scope["method"], scope["path"]) in EXEMPT):
            await self.app(scope, receive, send)
            return
        who = client_address(scope)
        if self.limiter.hit(self.item, who):
            await self.app(scope, receive, send)
            return
        self.limited += 1
        reset = self.limiter.get_window_stats(self.item, who).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        body = json.dumps(error_body(
            "rate_limited", f"more than {self.per_second} requests a second from {who}; "
                            f"retry in {wait} s")).encode()
        await send({"type": "http.response.start", "status": 429,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"retry-after", str(wait).encode())]})
        await send({"type": "http.response.body", "body": body})


def check_session_room(draws: Sequence[object], *, max_draws: int) -> None:
    """Before a draw: 409 ``session_full`` when the session has had its ``max_draws``."""
    if len(draws) >= max_draws:
        raise Conflict(f"this session has had its {max_draws} draws "
                       "(QAHWA_MAX_SESSION_DRAWS); close it and open a new one",
                       "session_full")


class ResultBytes:
    """The JSON size of each rng session's draw results, counted as draws are added (kept
    per process, recounted from the engine whenever it does not match)."""

    def __init__(self) -> None:
        self._sizes: dict[str, tuple[int, int]] = {}  # session id -> (draws, bytes)
        self._guard = threading.Lock()

    def total(self, session_id: str, draws: Sequence[object]) -> int:
        with self._guard:
            known = self._sizes.get(session_id)
        if known is not None and known[0] == len(draws):
            return known[1]
        size = sum(len(json.dumps(d, separators=(",", ":"))) for d in draws)
        self._remember(session_id, len(draws), size)
        return size

    def add(self, session_id: str, draws: Sequence[object], before: int, *,
            max_bytes: int) -> None:
        """After a draw (``before``: the bytes before it): 409 ``session_full`` if the
        results now pass ``max_bytes`` (the caller's transaction then rolls back)."""
        new = before + sum(len(json.dumps(d, separators=(",", ":")))
                           for d in draws[len(draws) - 1:])
        if new > max_bytes:
            self.forget(session_id)
            raise Conflict(f"this draw would take the session's results past {max_bytes} "
                           "bytes (QAHWA_MAX_TRANSCRIPT_BYTES); close it and open a new one",
                           "session_full")
        self._remember(session_id, len(draws), new)

    def _remember(self, session_id: str, n: int, size: int) -> None:
        with self._guard:
            self._sizes[session_id] = (n, size)
            while len(self._sizes) > 4096:
                self._sizes.pop(next(iter(self._sizes)))

    def forget(self, session_id: str) -> None:
        with self._guard:
            self._sizes.pop(session_id, None)


__all__ = ["EXEMPT", "AddressLimit", "ResultBytes", "check_session_room", "client_address"]
