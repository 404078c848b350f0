"""Request limits: per credential, per client address, and per rng session (docs/deploy.md
"Limits").

- Every request except creation (limited per operator key, :mod:`service.operators`),
  ``/healthz`` and ``/metrics`` counts against one token bucket holding one second's worth;
  over it: 429 ``rate_limited`` with ``Retry-After``, and nothing changes:

  - a request with a credential (``Authorization: Bearer`` — a seat or session token)
    counts against that credential: ``QAHWA_RATE_PER_SECOND_PER_TOKEN`` a second. So an
    operator's house-seat software, many seats behind one address, is limited per seat,
    not by its address; a flood with one token is stopped at that token;
  - a request without one counts against its client address:
    ``QAHWA_RATE_PER_SECOND_PER_IP`` a second;
  - a credential the server refuses (a 401 answer) is charged to its address
    afterwards, and while that address's bucket is empty its credentialed requests are
    refused too: made-up tokens cannot flood past the address limit.

  The state is per process: N processes let a client make up to N times the rate. The
  client address is the connection's, or the one the reverse proxy names in
  ``X-Forwarded-For`` when the proxy is among uvicorn's ``--forwarded-allow-ips`` (default
  127.0.0.1).

  Why a token bucket of our own rather than the ``limits`` library (which was tried
  first): the check runs on every request, and in one run on this shared machine one
  ``limits`` check cost 36 µs with its in-memory sliding-window counter and 26 µs with its
  fixed window, against 4.4 µs for this bucket (an idle run: 6.4 µs for the sliding
  window); the library takes a lock per check and runs a timer thread for expiry, which one
  dict used only by the event loop's thread does not need. The bucket has no window edges,
  and its state is one pair of floats an address.
- An rng session takes at most ``QAHWA_MAX_SESSION_DRAWS`` draws and at most
  ``QAHWA_MAX_TRANSCRIPT_BYTES`` bytes of draw results (the JSON of every ``result``, which
  is what makes a transcript large: a 1,000-card shuffle is about 3.9 kB); then 409
  ``session_full`` and nothing changes. Closing stays possible.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence

from starlette.types import Scope

from .clock import SYSTEM_CLOCK, Clock
from .errors import Conflict, error_body

#: (method, path) pairs not limited per address: creation has its own limit per key
EXEMPT = {("POST", "/v1/matches"), ("POST", "/v1/rng"), ("GET", "/healthz"), ("GET", "/metrics")}
PRUNE_AT = 50_000  # addresses remembered before idle ones are forgotten


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def bearer(scope: Scope) -> str | None:
    """The request's ``Authorization: Bearer`` credential, or None."""
    name: bytes
    value: bytes
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, cred = value.partition(b" ")
            if scheme.lower() == b"bearer" and cred.strip():
                return cred.strip().decode("latin-1")
            return None
    return None


class AddressLimit:
    """``per_second`` requests a second per client address (0: no limit), in bursts of at
    most one second's worth. Only the event loop's thread calls it."""

    def __init__(self, per_second: int, clock: Clock = SYSTEM_CLOCK) -> None:
        self.rate = float(per_second)
        self.on = per_second > 0
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)
        self.clock = clock

    def exempt(self, scope: Scope) -> bool:
        return not self.on or (scope["method"], scope["path"]) in EXEMPT

    def _tokens(self, who: str) -> tuple[float, float]:
        """``who``'s tokens now (refilled since its last request), and now."""
        now = self.clock.monotonic()
        tokens, at = self._buckets.get(who, (self.rate, now))
        return min(self.rate, tokens + (now - at) * self.rate), now

    def take(self, who: str) -> float:
        """Take one request's token: 0.0 if it may go on, else the seconds to wait."""
        tokens, now = self._tokens(who)
        if tokens >= 1.0:
            self._buckets[who] = (tokens - 1.0, now)
            if len(self._buckets) > PRUNE_AT:
                # a bucket idle for a second is full again: the same as no bucket
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < 1.0}
            return 0.0
        self._buckets[who] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def empty(self, who: str) -> float:
        """Without taking a token: 0.0 if ``who`` has one, else the seconds until it does."""
        tokens, _ = self._tokens(who)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def charge(self, who: str) -> None:
        """Take a token after the fact (a refused credential), going below zero if need be
        (at most one second's worth in debt)."""
        tokens, now = self._tokens(who)
        self._buckets[who] = (max(-self.rate, tokens - 1.0), now)

    def refusal(
        self, who: str, wait: float, limit: str = "address"
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The 429 answer: status, headers, body (``who`` as the message names it;
        ``limit``, the ``Qahwa-Limit`` header, names this limit in the answer and in
        ``qahwa_rate_limited_total{limit}``)."""
        seconds = max(1, math.ceil(wait))
        message = f"more than {self.rate:g} requests a second from {who}; retry in {seconds} s"
        body = json.dumps(error_body("rate_limited", message)).encode()
        return (
            429,
            [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(seconds).encode()),
                (b"qahwa-limit", limit.encode()),
            ],
            body,
        )


def check_session_room(draws: Sequence[object], *, max_draws: int) -> None:
    """Before a draw: 409 ``session_full`` when the session has had its ``max_draws``."""
    if len(draws) >= max_draws:
        raise Conflict(
            f"this session has had its {max_draws} draws "
            "(QAHWA_MAX_SESSION_DRAWS); close it and open a new one",
            "session_full",
        )


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

    def add(self, session_id: str, draws: Sequence[object], before: int, *, max_bytes: int) -> None:
        """After a draw (``before``: the bytes before it): 409 ``session_full`` if the
        results now pass ``max_bytes`` (the caller's transaction then rolls back)."""
        new = before + sum(
            len(json.dumps(d, separators=(",", ":"))) for d in draws[len(draws) - 1 :]
        )
        if new > max_bytes:
            self.forget(session_id)
            raise Conflict(
                f"this draw would take the session's results past {max_bytes} "
                "bytes (QAHWA_MAX_TRANSCRIPT_BYTES); close it and open a new one",
                "session_full",
            )
        self._remember(session_id, len(draws), new)

    def _remember(self, session_id: str, n: int, size: int) -> None:
        with self._guard:
            self._sizes[session_id] = (n, size)
            while len(self._sizes) > 4096:
                self._sizes.pop(next(iter(self._sizes)))

    def forget(self, session_id: str) -> None:
        with self._guard:
            self._sizes.pop(session_id, None)


class RequestLimit:
    """The per-request limit: per credential (``per_token``) or per address (``per_ip``),
    as the module says. Only the event loop's thread calls it."""

    #: an address that sent a refused credential is suspect this long (seconds)
    SUSPECT_SECONDS = 10.0

    def __init__(self, per_ip: int, per_token: int, clock: Clock = SYSTEM_CLOCK) -> None:
        self.address = AddressLimit(per_ip, clock)
        self.token = AddressLimit(per_token, clock)
        self.clock = clock
        self._suspect: dict[str, float] = {}  # address -> when it last sent a refused one

    def exempt(self, scope: Scope) -> bool:
        return (scope["method"], scope["path"]) in EXEMPT or not (self.address.on or self.token.on)

    def check(self, scope: Scope) -> tuple[float, str, str | None]:
        """Before the request: ``(wait, address, credential)``; ``wait`` 0.0 lets it go on."""
        who = client_address(scope)
        cred = bearer(scope)
        if cred is None:
            return (self.address.take(who) if self.address.on else 0.0), who, None
        if self.address.on and who in self._suspect:
            if self.clock.monotonic() - self._suspect[who] > self.SUSPECT_SECONDS:
                del self._suspect[who]
            else:
                owed = self.address.empty(who)
                if owed:
                    return owed, who, None  # refused as the address
        return (self.token.take(cred) if self.token.on else 0.0), who, cred

    def refusal(
        self, who: str, cred: str | None, wait: float
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The 429 answer for what :meth:`check` refused."""
        if cred is not None:
            return self.token.refusal("this token", wait, "token")
        return self.address.refusal(who, wait, "address")

    def refused_credential(self, who: str) -> None:
        """After a 401 answer to a credentialed request: charge its address."""
        if self.address.on:
            self.address.charge(who)
            if len(self._suspect) > PRUNE_AT:
                self._suspect.clear()
            self._suspect[who] = self.clock.monotonic()


__all__ = [
    "EXEMPT",
    "AddressLimit",
    "RequestLimit",
    "ResultBytes",
    "bearer",
    "check_session_room",
    "client_address",
]
