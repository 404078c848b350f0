"""Serving under hostile clients: header and body read timeouts and a connection cap.

uvicorn (0.55) has a keep-alive timeout but no timeout for reading a request's headers and
no cap on open connections that acts before a request arrives (``--limit-concurrency``
answers 503 only once a request's headers are in, so slow-loris sockets that never finish
their headers hold a file descriptor each, for ever, until ``accept`` fails with EMFILE).
:class:`GuardedHttpToolsProtocol` (what ``qahwa serve`` runs) is uvicorn's httptools
protocol with both, and :class:`GuardedH11Protocol` uvicorn's h11 protocol with the same
guard (the one uvicorn falls back to without httptools; tests/service/test_serving_parser.py
holds the two to the same bytes). httptools parses a request in C (llhttp), where h11's
pure-Python parser and header checks were ~0.25 ms of an action:

- **head size** (httptools only; h11 has its own, 16 KiB): llhttp has no limit on a
  request head, so a head still incomplete after 16 KiB is answered 400 and closed, as h11
  answers it;

- **header timeout** (``QAHWA_HEADER_TIMEOUT_SECONDS``, default 10): a connection that has
  not sent a complete request head this long after it opened, or after the first byte of
  its next request on a kept-alive connection, is answered 408 and closed;
- **connection cap** (``QAHWA_MAX_CONNECTIONS``, default 10,000, and never more than the
  process's file limit less 64): a connection beyond the cap closes the oldest connection
  that is not inside a request (waiting for its headers, or idle between requests) — so a
  new client, e.g. a health check, always gets in while slow-loris sockets are the ones
  dropped; only when every connection is inside a request is the new one answered 503.

- **body timeout** (``QAHWA_BODY_TIMEOUT_SECONDS``, default 15): a request whose body has
  not arrived in full this long after its head is answered 408 ``request_timeout`` and
  closed. It is armed only while a body is still incoming (a read ended before its end), so
  it costs nothing for requests without a body or whose body came with the head.

These live in the protocol, not in ASGI middleware, because they cost per connection and
per slow body rather than per request (an ASGI timeout around each ``receive`` measured
~10 µs a request).

- **one write per answer**: uvicorn writes an answer's head and its body to the socket
  apart, and on loopback or a LAN each ``send`` costs the server a system call and the
  kernel's delivery of a packet. :class:`JoinedWrites` holds the head until the body
  follows (in the same turn of the event loop for an ordinary answer) and sends both as
  one; a head whose body does not follow at once (an event stream's) goes out on the next
  turn. The bytes on the wire are the same.
"""

from __future__ import annotations

import asyncio
import json
import resource
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar, cast

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .errors import error_body
from .settings import Settings

FD_RESERVE = 64  # descriptors kept for the database, log files and the listening socket
MAX_HEAD_BYTES = 16 * 1024  # h11's own limit on an incomplete request head


class _Stats:
    dropped = 0  # connections closed by the header timeout or the cap (/metrics)


STATS = _Stats()


def _raw_response(status: int, code: str, message: str) -> bytes:
    body = json.dumps(error_body(code, message)).encode()
    return (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


def connection_cap(max_connections: int) -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(8, min(max_connections, soft - FD_RESERVE))


# The framing lines uvicorn's httptools protocol adds to an answer head, as h11 writes them
# (the app never sends either header itself): the same bytes whichever parser serves.
_H11_TAILS = (
    (
        b"\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n",
        b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    ),
    (b"\r\nconnection: close\r\n\r\n", b"\r\nConnection: close\r\n\r\n"),
    (b"\r\ntransfer-encoding: chunked\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n"),
)


def as_h11_head(head: bytes) -> bytes:
    """An answer head from uvicorn's httptools protocol with its framing lines as h11's."""
    for tail, h11 in _H11_TAILS:
        if head.endswith(tail):
            return head[: -len(tail)] + h11
    return head


class JoinedWrites:
    """A connection's transport whose answer head waits for the body to go out with it
    (module doc); every other call is the transport's own. ``h11_heads``: heads from the
    httptools protocol, whose framing lines are written as h11 writes them."""

    __slots__ = ("_h11_heads", "_head", "_loop", "_transport")

    def __init__(
        self,
        transport: asyncio.Transport,
        loop: asyncio.AbstractEventLoop,
        *,
        h11_heads: bool = False,
    ) -> None:
        self._transport = transport
        self._loop = loop
        self._head: bytes | None = None
        self._h11_heads = h11_heads

    def write(self, data: bytes) -> None:
        head = self._head
        if data.startswith(b"HTTP/"):  # an answer head: status line and headers
            if self._h11_heads:
                data = as_h11_head(data)
            if head is None:
                self._loop.call_soon(self.flush)
                self._head = data
            else:  # after a "100 Continue"
                self._head = head + data
        elif head is not None:
            self._head = None
            self._transport.write(head + data)
        elif data:
            self._transport.write(data)

    def flush(self) -> None:
        """Send a head still held (no body followed it in its turn)."""
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


if TYPE_CHECKING:  # the attributes and methods both of uvicorn's protocols have
    _Protocol = H11Protocol
else:
    _Protocol = object


class _Guard(_Protocol):
    """A header and a body timeout and a connection cap (module doc), for either of
    uvicorn's HTTP/1.1 protocols.

    The limits come from the class attributes; when they are unset (``qahwa serve``, whose
    worker processes import this class by name) from ``Settings()`` on first use.
    """

    header_timeout: ClassVar[float | None] = None
    body_timeout: ClassVar[float | None] = None
    max_connections: ClassVar[int | None] = None
    h11_heads: ClassVar[bool] = False  # answer heads' framing lines rewritten as h11's

    @classmethod
    def configured(cls, settings: Settings) -> type[Any]:
        """A subclass with ``settings``' limits (in-process servers: tests, ``qahwa demo``)."""
        return type(
            cls.__name__,
            (cls,),
            {
                "header_timeout": settings.header_timeout_seconds,
                "body_timeout": settings.body_timeout_seconds,
                "max_connections": connection_cap(settings.max_connections),
            },
        )

    @classmethod
    def _limits(cls) -> tuple[float, float, int]:
        if cls.header_timeout is None or cls.body_timeout is None or cls.max_connections is None:
            s = Settings()
            cls.header_timeout = s.header_timeout_seconds
            cls.body_timeout = s.body_timeout_seconds
            cls.max_connections = connection_cap(s.max_connections)
        return cls.header_timeout, cls.body_timeout, cls.max_connections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # its flow control reads the socket's own
        joined = JoinedWrites(transport, self.loop, h11_heads=self.h11_heads)
        self.transport = cast(asyncio.Transport, joined)
        self._got_bytes = False
        self._idle_since = self.loop.time()
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        timeout, _, cap = self._limits()
        self._arm(timeout)
        if len(self.connections) > cap:
            victim = self._oldest_idle()
            if victim is not None:
                STATS.dropped += 1
                victim._drop()
            else:
                msg = "too many open connections; retry shortly"
                transport.write(_raw_response(503, "unavailable", msg))
                transport.close()

    def _in_request(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _oldest_idle(self) -> _Guard | None:
        best: _Guard | None = None
        for conn in self.connections:
            if (
                conn is self
                or not isinstance(conn, _Guard)
                or conn._in_request()
                or conn.transport.is_closing()
            ):
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

    def _disarm_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timeout(self) -> None:
        self._body_timer = None
        cycle = self.cycle
        if (
            cycle is not None
            and cycle.more_body
            and not cycle.response_started
            and not self.transport.is_closing()
        ):
            STATS.dropped += 1
            msg = f"the request body did not arrive within {self._limits()[1]:g} s"
            self.transport.write(_raw_response(408, "request_timeout", msg))
            self.transport.close()

    def _header_timeout(self) -> None:
        self._header_timer = None
        if not self._in_request() and not self.transport.is_closing():
            STATS.dropped += 1
            self._drop()

    def _drop(self) -> None:
        self._disarm()
        if self._got_bytes:
            msg = "the request head did not arrive in time"
            self.transport.write(_raw_response(408, "request_timeout", msg))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._got_bytes = True
        super().data_received(data)
        if self._in_request():
            self._disarm()  # the head is in
            if self.cycle.more_body:
                if self._body_timer is None:
                    self._body_timer = self.loop.call_later(self._limits()[1], self._body_timeout)
            else:
                self._disarm_body()
        else:
            self._disarm_body()
            self._arm(self._limits()[0])

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._got_bytes = False
        self._idle_since = self.loop.time()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._disarm_body()
        super().connection_lost(exc)


class GuardedHttpToolsProtocol(_Guard, HttpToolsProtocol):  # type: ignore[misc]
    """uvicorn's httptools protocol (llhttp, in C) with the guard and a head size limit."""

    h11_heads: ClassVar[bool] = True
    _in_head = False  # between a message's first byte and the end of its head
    _head_bytes = 0  # bytes received since that first byte, while in the head

    def on_message_begin(self) -> None:
        self._in_head, self._head_bytes = True, 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self.send_400_response("Invalid HTTP request received.")  # as h11's

    def send_400_response(self, msg: str) -> None:
        """A request the parser refused, answered as h11 answers it (close-delimited)."""
        self.transport.write(_H11_400 + msg.encode("ascii"))
        self.transport.close()


_H11_400 = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"


class GuardedH11Protocol(_Guard, H11Protocol):
    """uvicorn's h11 protocol (pure Python) with the guard."""
