"""Serving under hostile clients: header and body read timeouts and a connection cap.

uvicorn (0.55) has a keep-alive timeout but no timeout for reading a request's headers and
no cap on open connections that acts before a request arrives (``--limit-concurrency``
answers 503 only once a request's headers are in, so slow-loris sockets that never finish
their headers hold a file descriptor each, for ever, until ``accept`` fails with EMFILE).
:class:`GuardedH11Protocol` is uvicorn's own h11 protocol with both:

- **header timeout** (``QAHWA_HEADER_TIMEOUT_SECONDS``, default 10): a connection that has
  not sent a complete request head this long after it opened, or after the first byte of
  its next request on a kept-alive connection, is answered 408 and closed;
- **connection cap** (``QAHWA_MAX_CONNECTIONS``, default 1000, and never more than the
  process's file limit less 64): a connection beyond the cap closes the oldest connection
  that is not inside a request (waiting for its headers, or idle between requests) — so a
  new client, e.g. a health check, always gets in while slow-loris sockets are the ones
  dropped; only when every connection is inside a request is the new one answered 503.

:class:`BodyTimeout` (ASGI) answers 408 when a request body has not arrived in full within
``QAHWA_BODY_TIMEOUT_SECONDS`` (default 15) of its first read.
"""

from __future__ import annotations

import asyncio
import json
import resource
from typing import ClassVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import error_body
from .settings import Settings

FD_RESERVE = 64  # descriptors kept for the database, log files and the listening socket


class _Stats:
    dropped = 0  # connections closed by the header timeout or the cap (/metrics)


STATS = _Stats()


def _raw_response(status: int, reason: str, code: str, message: str) -> bytes:
    body = json.dumps(error_body(code, message)).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def connection_cap(max_connections: int) -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(8, min(max_connections, soft - FD_RESERVE))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection cap (module doc).

    The limits come from the class attributes; when they are unset (``qahwa serve``, whose
    worker processes import this class by name) from ``Settings()`` on first use.
    """

    header_timeout: ClassVar[float | None] = None
    max_connections: ClassVar[int | None] = None

    @classmethod
    def configured(cls, settings: Settings) -> type[GuardedH11Protocol]:
        """A subclass with ``settings``' limits (in-process servers: tests, ``qahwa demo``)."""
        return type("GuardedH11", (cls,), {
            "header_timeout": settings.header_timeout_seconds,
            "max_connections": connection_cap(settings.max_connections)})

    @classmethod
    def _limits(cls) -> tuple[float, int]:
        if cls.header_timeout is None or cls.max_connections is None:
            s = Settings()
            cls.header_timeout = s.header_timeout_seconds
            cls.max_connections = connection_cap(s.max_connections)
        return cls.header_timeout, cls.max_connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._got_bytes = False
        self._idle_since = self.loop.time()
        self._header_timer: asyncio.TimerHandle | None = None
        timeout, cap = self._limits()
        self._arm(timeout)
        if len(self.connections) > cap:
            victim = self._oldest_idle()
            if victim is not None:
                STATS.dropped += 1
                victim._drop()
            else:
                transport.write(_raw_response(503, "Service Unavailable", "unavailable",
                                              "too many open connections; retry shortly"))
                transport.close()

    def _in_request(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _oldest_idle(self) -> GuardedH11Protocol | None:
        best: GuardedH11Protocol | None = None
        for conn in self.connections:
            if (conn is self or not isinstance(conn, GuardedH11Protocol)
                    or conn._in_request() or conn.transport.is_closing()):
                continue
            if best is None or conn._idle_since < best._idle_since:
                best = conn
        return best

    def _arm(self, timeout: float) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(timeout, self._header_timeout)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if not self._in_request() and not self.transport.is_closing():
            STATS.dropped += 1
            self._drop()

    def _drop(self) -> None:
        self._disarm()
        if self._got_bytes:
            self.transport.write(_raw_response(
                408, "Request Timeout", "request_timeout",
                "the request head did not arrive in time"))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._got_bytes = True
        super().data_received(data)
        if self._in_request():
            self._disarm()  # the head is in; the body has its own timeout (BodyTimeout)
        else:
            self._arm(self._limits()[0])

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._got_bytes = False
        self._idle_since = self.loop.time()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


class BodyTimeout:
    """ASGI middleware: 408 ``request_timeout`` when the body takes longer than ``seconds``."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal deadline, body_done
            if body_done:
                return await receive()
            if deadline is None:
                deadline = loop.time() + self.seconds
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise _BodyTimedOut from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, timed_receive, tracked_send)
        except _BodyTimedOut:
            if started:
                raise
            body = json.dumps(error_body(
                "request_timeout",
                f"the request body did not arrive within {self.seconds:g} s")).encode()
            await send({"type": "http.response.start", "status": 408,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode()),
                                    (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": body})


class _BodyTimedOut(Exception):
    pass


__all__ = ["STATS", "BodyTimeout", "GuardedH11Protocol", "connection_cap"]
