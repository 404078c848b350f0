"""The request layer: the one ASGI middleware every request passes, and what a route takes.

:class:`Front` is one pure-ASGI layer (each layer costs per request, and a move should be
readable in a few files). For each HTTP request, in this order:

- **cross-origin reads** (docs/spec/api.md "Cross-origin reads"): the public reads a
  verifier needs answer any origin, so a verify page served from somewhere else — a player's
  own ``verify page`` on 127.0.0.1, a saved copy opened as a file (origin ``null``) — can
  fetch them: ``GET``/``HEAD`` of ``/v1/keys``, a match's ``transcript`` and ``log-proof``
  and ``reveal-proof``, ``/v1/log`` and everything under it, and everything under
  ``/log/``. Their answers, errors and 429s included (the page shows the server's message),
  carry ``Access-Control-Allow-Origin: *`` and never ``Access-Control-Allow-Credentials``; a
  preflight (``OPTIONS`` with ``Access-Control-Request-Method``) to them is answered 204 at
  once. Nothing else is cross-origin: every other path gets no CORS header, and a preflight
  to it is not answered as one (the browser then refuses the request);
- **the request id** (``X-Request-ID``): the client's when it is 1–64 of ``A-Z a-z 0-9 . _
  -``, else a new random one; sent back, and the ``request_id`` of every line logged while
  the request runs (:mod:`service.logging_json`);
- **the request limits** (:class:`RequestLimit`, docs/deploy.md): per credential, per
  address, and the address of a refused credential; a refusal is 429 ``rate_limited`` with
  ``Retry-After`` and ``Qahwa-Limit``;
- **the body**: read whole before the app runs. Over ``max_body_bytes``, declared by
  Content-Length or streamed chunked: 413 ``body_too_large``. A JSON body that is not
  UTF-8, nests deeper than :data:`MAX_JSON_DEPTH` or repeats a key: 400 ``malformed_json``.
  The app then reads it from the buffer;
- **signed refusals** (fairness-v2.md §7): every 4xx answer to a seat's request — a commit,
  a reveal, an action, a resignation — carries ``"refusal"``, the server's signed record
  of the request's hash, the status, the error code and the time, beside the error. A seat
  keeps it as the answer to its request: the server cannot later say it never got the
  request, nor that it refused it for another reason. Which statuses are signed is
  :func:`service.errors.signs_refusal`: not a 413 (the body was not read whole) nor a 429
  (the limits changed nothing);
- **metrics**: the request's latency and status in ``/metrics`` (429s and 413s included;
  :mod:`service.metrics` holds the registry).

No thread hand-off: everything here runs on the event loop's thread. The route's
dependencies (the services on ``app.state``, the seat token) and its JSON answer
(:func:`json_response`) are here too: they are the rest of the request layer a move passes.

**The request limits** (docs/deploy.md "Limits"). A request that names a credential
(``Authorization: Bearer …``: a seat or session token, an operator key) is limited per
credential: ``QAHWA_RATE_PER_SECOND_PER_TOKEN`` a second, so a café of players behind one
address is limited per seat, not by its address; a flood with one token is stopped at that
token. A request without one counts against its client address:
``QAHWA_RATE_PER_SECOND_PER_IP`` a second. A credential the server refuses (a 401 answer)
is charged to its address afterwards, and while that address's bucket is empty its
credentialed requests are refused too: made-up tokens cannot flood past the address limit.
The state is per process: N processes let a client make up to N times the rate. The client
address is the connection's, or the one the reverse proxy names in ``X-Forwarded-For`` when
the proxy is among uvicorn's ``--forwarded-allow-ips`` (default 127.0.0.1).

Why a token bucket of our own rather than the ``limits`` library (which was tried first):
the check runs on every request, and in one run on this shared machine one ``limits`` check
cost 36 µs with its in-memory sliding-window counter and 26 µs with its fixed window,
against 4.4 µs for this bucket; the library takes a lock per check and runs a timer thread
for expiry, which one dict used only by the event loop's thread does not need. The bucket
has no window edges, and its state is one pair of floats an address.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import random
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin, get_type_hints

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fairness import DuplicateKeyError, format_time_ms, loads_strict
from fairness.records import Refusal, request_sha256

from .clock import SYSTEM_CLOCK, Clock
from .errors import error_body, signs_refusal
from .logging_json import request_id
from .logs import PublicLog
from .matches import MatchService, view_json
from .metrics import ACTION_ROUTES, CREATE_ROUTES, LIMITS, METHODS, Metrics
from .rng import RngSessions
from .watch import Watch

if TYPE_CHECKING:
    from .keys import RecordSigner

# -- cross-origin reads ---------------------------------------------------------------------

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

# -- seat requests (signed refusals) --------------------------------------------------------

#: the seat's requests: ``POST`` to these paths (the match id is group 1)
SEAT_REQUEST = re.compile(
    r"^/v1/matches/([^/]{1,64})/(?:actions|resign|seats/\d+/(?:commit|reveal))$"
)

# -- request ids ----------------------------------------------------------------------------

_GOOD_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
# Request ids are unique, not secret (each answer carries its own): a generator seeded from
# the OS per process (and again in a forked child), not os.urandom per request — that call
# releases the GIL, and the event loop then waits for a worker thread to give it back.
_ids = random.Random(secrets.randbits(128))
os.register_at_fork(after_in_child=lambda: _ids.seed(secrets.randbits(128)))


def good_request_id(value: bytes) -> str | None:
    """The client's ``X-Request-ID`` if it is 1–64 of ``A-Z a-z 0-9 . _ -``, else None."""
    text = value.decode("latin-1")
    return text if _GOOD_ID.fullmatch(text) else None


# -- JSON bodies ----------------------------------------------------------------------------

MAX_JSON_DEPTH = 64


def json_body_problem(body: bytes) -> str | None:
    """Why a JSON body cannot be parsed as the API's JSON before JSON parsing, or None.

    Not UTF-8, or arrays/objects nested deeper than :data:`MAX_JSON_DEPTH` (which would
    otherwise reach Python's recursion limit), or an object that repeats a key. The depth
    scan runs only when the body has enough brackets to be that deep.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the request body is not UTF-8 (byte {exc.start})"
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return _duplicate_key(text)
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"the request body nests arrays/objects deeper than {MAX_JSON_DEPTH}"
        elif ch in "]}":
            depth -= 1
    return _duplicate_key(text)


def _duplicate_key(text: str) -> str | None:
    """fairness-v2.md §1: an object that repeats a key is refused on input (other JSON errors
    are left to the framework's parser, which reports them)."""
    try:
        loads_strict(text)
    except DuplicateKeyError as exc:
        return f"the request body is not accepted: {exc}"
    except ValueError:
        return None
    return None


# -- the request limits ---------------------------------------------------------------------

#: (method, path) pairs not limited per address: creation has its own limit per key
EXEMPT = {("POST", "/v1/matches"), ("POST", "/v1/rng"), ("GET", "/healthz"), ("GET", "/metrics")}
PRUNE_AT = 50_000  # addresses remembered before idle ones are forgotten


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def bearer_of(value: bytes) -> str | None:
    """The credential of an ``Authorization`` header's value if it is ``Bearer …``."""
    scheme, _, cred = value.partition(b" ")
    if scheme.lower() == b"bearer" and cred.strip():
        return cred.strip().decode("latin-1")
    return None


class AddressLimit:
    """``per_second`` requests a second per client address (0: no limit), in bursts of at
    most one second's worth. Only the event loop's thread calls it."""

    def __init__(self, per_second: int, clock: Clock = SYSTEM_CLOCK) -> None:
        self.rate = float(per_second)
        self.on = per_second > 0
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)
        self.clock = clock

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

    def check(self, scope: Scope, cred: str | None) -> tuple[float, str, str | None]:
        """Before the request with credential ``cred`` (its ``Authorization: Bearer``, or
        None): ``(wait, address, credential)``; ``wait`` 0.0 lets it go on; a refusal as
        the address has credential None."""
        who = client_address(scope)
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


# -- metrics --------------------------------------------------------------------------------


def route_of(scope: Scope) -> str:
    """The route template a request matched (the label of its metrics)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if scope.get("path", "").startswith("/static/"):
        return "/static"
    return "unmatched"


class Observer:
    """Counts each request in :class:`service.metrics.Metrics` (its labelled children are
    looked up once per method, route, status and limit)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._children: dict[tuple[str, str, int, str | None], tuple[Any, ...]] = {}

    def observe(
        self, method: str, route: str, status: int, seconds: float, limit: str | None = None
    ) -> None:
        """One request; ``limit``: a 429's ``Qahwa-Limit``."""
        if method not in METHODS:  # any token is a method to HTTP: keep the label set small
            method = "other"
        if status == 429 and limit not in LIMITS:
            limit = "create" if (method, route) in CREATE_ROUTES else "address"
        key = (method, route, status, limit)
        children = self._children.get(key)
        if children is None:
            m = self.metrics
            kind = ACTION_ROUTES.get((method, route)) if 200 <= status < 300 else None
            made = CREATE_ROUTES.get((method, route)) if 200 <= status < 300 else None
            limited = limit if status == 429 else None
            children = tuple(
                c
                for c in (
                    m.latency.labels(method, route),
                    m.requests.labels(method, route, str(status)),
                    m.actions.labels(kind) if kind else None,
                    m.created.labels(made) if made else None,
                    m.rate_limited.labels(limited) if limited else None,
                )
                if c is not None
            )
            if len(self._children) < 10_000:  # routes are templates: a bounded set
                self._children[key] = children
        children[0].observe(seconds)
        for c in children[1:]:
            c.inc()


# -- the middleware -------------------------------------------------------------------------


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """An error answer in the documented shape (:func:`service.errors.error_body`)."""
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


@dataclass(slots=True)
class _Body:
    """A request's body as read so far (``done``: whole)."""

    receive: Receive
    chunks: list[bytes] = field(default_factory=list)
    done: bool = False

    async def rest(self) -> None:
        """Read what is left of it (a refusal sent before the body was read is signed over
        the whole body too)."""
        while not self.done:
            message = await self.receive()
            if message["type"] != "http.request":
                return
            self.chunks.append(message.get("body", b""))
            self.done = not message.get("more_body", False)


class Front:
    """The app's one middleware (see the module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: Metrics,
        limit: RequestLimit,
        signer: RecordSigner,
        clock: Clock,
        max_body: int,
        hot: Sequence[APIRoute] = (),
    ) -> None:
        self.app = app
        self.hot = [h for h in map(HotRoute.of, hot) if h is not None]
        self.observer = Observer(metrics)
        self.limit = limit
        self.signer = signer
        self.clock = clock
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        method: str = scope["method"]
        path: str = scope["path"]
        cors = PUBLIC_READS.match(path) is not None
        rid: str | None = None
        cred: str | None = None
        declared: bytes | None = None
        json_body = plain_json = False
        name: bytes
        value: bytes
        seen_auth = seen_id = False
        for name, value in scope["headers"]:  # one pass, the first of each
            if name == b"authorization":
                if not seen_auth:
                    seen_auth, cred = True, bearer_of(value)
            elif name == b"x-request-id":
                if not seen_id:
                    seen_id, rid = True, good_request_id(value)
            elif name == b"content-length":
                declared = value
            elif name == b"content-type":
                json_body = b"json" in value.lower()
                plain_json = value == b"application/json"
        if cors and method == "OPTIONS":
            headers = dict(scope["headers"])
            if b"access-control-request-method" in headers:
                await _preflight(headers, send)
                return
        if rid is None:
            rid = f"{_ids.getrandbits(64):016x}"
        token = request_id.set(rid)
        id_header = (b"x-request-id", rid.encode("ascii"))
        cors = cors and method in READ_METHODS
        status = 500
        limit: str | None = None  # a 429's Qahwa-Limit: which limit refused it

        async def send_out(message: Message) -> None:
            nonlocal status, limit
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers", ())
                if status == 429:
                    limit = next(
                        (v.decode("latin-1") for k, v in headers if k == b"qahwa-limit"), None
                    )
                if cors:
                    kept = [
                        (k, v) for k, v in headers if k.lower() != b"access-control-allow-origin"
                    ]
                    message = {**message, "headers": [*kept, id_header, ALLOW_ORIGIN, EXPOSE]}
                else:
                    message = {**message, "headers": [*headers, id_header]}
            await send(message)

        try:
            limited = not self.limit.exempt(scope)
            who = ""
            if limited:
                wait, who, cred = self.limit.check(scope, cred)
                if wait:
                    status_, headers_, body_ = self.limit.refusal(who, cred, wait)
                    await send_out(
                        {"type": "http.response.start", "status": status_, "headers": headers_}
                    )
                    await send_out({"type": "http.response.body", "body": body_})
                    return
            seat = SEAT_REQUEST.match(path) if method == "POST" else None
            await self._run(scope, receive, send_out, declared, json_body, seat, plain_json)
            if limited and cred is not None and status == 401:
                self.limit.refused_credential(who)
        finally:
            self.observer.observe(
                method, route_of(scope), status, time.perf_counter() - start, limit
            )
            request_id.reset(token)

    async def _run(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        declared: bytes | None,
        json_body: bool,
        seat: re.Match[str] | None,
        plain_json: bool,
    ) -> None:
        """Read the body whole, refuse what the API cannot take, then run the app (a seat's
        request with its refusals signed)."""
        read = _Body(receive)
        if seat is not None:
            send = self._signing(seat.group(1), send, read)
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await error_response(400, "bad_request", "bad Content-Length")(scope, receive, send)
                return
            if size > self.max_body:
                await self._too_big()(scope, receive, send)
                return
        seen = 0
        chunks = read.chunks
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if message["type"] != "http.request":
                continue
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_body:
                await self._too_big()(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        read.done = True
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if json_body and body:
            problem = json_body_problem(body)
            if problem is not None:
                await error_response(400, "malformed_json", problem)(scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        for hot in self.hot:
            if hot.method == scope["method"]:
                found = hot.route.path_regex.match(scope["path"])
                if found is not None:
                    if await hot.serve(scope, replay, send, found, body if plain_json else None):
                        return
                    break
        await self.app(scope, replay, send)

    def _too_big(self) -> JSONResponse:
        """The 413 answer (made when it is sent, not for every request)."""
        return error_response(
            413, "body_too_large", f"the request body is larger than {self.max_body} bytes"
        )

    def _signing(self, match_id: str, send: Send, read: _Body) -> Send:
        """``send`` with a refusal of a seat's request signed (the module doc)."""
        start: Message | None = None
        held: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start
            if (
                message["type"] == "http.response.start"
                and message["status"] >= 400  # an answer that is no refusal costs no call
                and signs_refusal(message["status"])
            ):
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            held.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            await read.rest()
            body = self.sign(match_id, start["status"], b"".join(held), b"".join(read.chunks))
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return sending

    def sign(self, match_id: str, status: int, answer: bytes, request: bytes) -> bytes:
        """The error answer with its signed refusal added (as it is, if not the error
        shape)."""
        try:
            doc: Any = json.loads(answer)
        except ValueError:
            return answer
        error = doc.get("error") if isinstance(doc, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            return answer
        doc["refusal"] = Refusal(
            match_id,
            request_sha256(request),
            status,
            error["code"],
            format_time_ms(int(self.clock.now() * 1_000_000)),
        ).sign(self.signer)
        return json.dumps(doc, separators=(",", ":")).encode()


async def _preflight(headers: dict[bytes, bytes], send: Send) -> None:
    """A CORS preflight to a public read: 204 for GET/HEAD, 405 otherwise."""
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


# -- what a route takes ---------------------------------------------------------------------
# ``async def`` on purpose: they only read attributes, and FastAPI runs a plain ``def``
# dependency in the thread pool — one thread hand-off per dependency per request.


class _SeatToken(HTTPBearer):
    """The seat (or session) token of ``Authorization: Bearer …``, or None: HTTPBearer's
    parsing and OpenAPI scheme (named ``HTTPBearer`` as before), one dependency instead of
    two (each costs FastAPI its resolution per request)."""

    async def __call__(self, request: Request) -> str | None:  # type: ignore[override]
        return seat_token(request.scope)


def seat_token(scope: Scope) -> str | None:
    """HTTPBearer(auto_error=False)'s reading of the first Authorization header, without the
    headers mapping and the credentials model it builds per request."""
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, param = value.decode("latin-1").partition(" ")
            credentials = param.strip()
            return credentials if scheme and credentials and scheme.lower() == "bearer" else None
    return None


_bearer = _SeatToken(
    auto_error=False, scheme_name="HTTPBearer", description="a seat (or session) token"
)


#: each ``_state`` dependency and the ``app.state`` attribute it is
_STATE_OF: dict[Callable[..., Any], str] = {}


def _state(name: str) -> Any:
    """A dependency that is ``app.state.<name>`` (a service built at start-up)."""

    async def get(request: Request) -> Any:
        return getattr(request.app.state, name)

    _STATE_OF[get] = name
    return Depends(get)


ServiceDep = Annotated[MatchService, _state("service")]
RngDep = Annotated[RngSessions, _state("rng")]
WatchDep = Annotated[Watch, _state("watch")]
PublicLogDep = Annotated[PublicLog, _state("public_log")]
TokenDep = Annotated[str | None, Depends(_bearer)]


@dataclass
class HotRoute:
    """A route :class:`Front` calls itself when its request is plain: the move's two
    requests (GET a seat's state, POST an action) skip the framework's per-request routing
    over every route of the app and its dependency resolution (together about 400 Python
    calls a request).

    The route stays the framework's: the same endpoint function is called with the same
    arguments (its path parameters, its body model validated from the body, the services on
    ``app.state``, the seat token), its answer sent as it is, and a raised error answered by
    the app's own exception handler for it (or raised on, to the server-error handler, as
    before). Only a request the framework would surely accept is served here: path
    parameters within their length, a query string of the route's optional integer and
    word parameters alone, each at most once, as plain decimal digits within its bounds or
    as one of its words (``events_after=41&sealed=brief``: how a seat that follows the log
    reads its view), a body sent as
    ``application/json`` that is a JSON object its model accepts. Anything else (an error to
    report, an unusual form) goes through the framework as before, so every answer is the
    framework's, byte for byte. A route whose signature is not that plain is not taken
    (:meth:`of`).
    """

    route: APIRoute
    path_limits: list[tuple[str, int]]
    defaults: dict[str, Any]
    body: tuple[str, type[BaseModel]] | None
    #: (argument, app.state attribute; None: the seat token)
    deps: list[tuple[str, str | None]]
    #: an integer query parameter's name → its (ge, le)
    ints: dict[str, tuple[int | None, int | None]]
    #: a query parameter of a few plain words (a ``Literal``)'s name → its words
    words: dict[str, frozenset[str]]
    method: str = field(init=False)

    def __post_init__(self) -> None:
        self.method = next(iter(self.route.methods or ()))

    @classmethod
    def of(cls, route: APIRoute) -> HotRoute | None:
        """``route`` as a hot route, or None when its signature is not plain enough."""
        d = route.dependant
        hints = get_type_hints(route.endpoint)
        returns = hints.get("return")
        if (
            len(route.methods or ()) != 1
            or not inspect.iscoroutinefunction(route.endpoint)
            or not (isinstance(returns, type) and issubclass(returns, Response))
            or d.header_params
            or d.cookie_params
            or d.request_param_name
            or len(d.body_params) > 1
            or route.dependencies
        ):
            return None
        limits = []
        for p in d.path_params:
            if hints.get(p.name) is not str:
                return None
            maxlen = [getattr(m, "max_length", None) for m in p.field_info.metadata]
            if len(maxlen) != 1 or not isinstance(maxlen[0], int):
                return None
            limits.append((p.name, maxlen[0]))
        if any(p.field_info.is_required() for p in d.query_params):
            return None
        defaults = {p.name: p.field_info.get_default() for p in d.query_params}
        ints: dict[str, tuple[int | None, int | None]] = {}
        for p in d.query_params:
            bounds = _int_bounds(hints.get(p.name), p.field_info.metadata)
            if bounds is not None and p.alias == p.name:
                ints[p.name] = bounds
        words = {
            p.name: frozenset(w)
            for p in d.query_params
            if p.alias == p.name
            and not p.field_info.metadata
            and (w := _words(hints.get(p.name))) is not None
        }
        body: tuple[str, type[BaseModel]] | None = None
        if d.body_params:
            p = d.body_params[0]
            model = hints.get(p.name)
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                return None
            if getattr(p.field_info, "embed", False):
                return None
            body = (p.name, model)
        deps: list[tuple[str, str | None]] = []
        for sub in d.dependencies:
            if sub.dependencies or sub.name is None:
                return None
            if sub.call is _bearer:
                deps.append((sub.name, None))
            elif sub.call in _STATE_OF:
                deps.append((sub.name, _STATE_OF[sub.call]))
            else:
                return None
        return cls(route, limits, defaults, body, deps, ints, words)

    async def serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        found: re.Match[str],
        body: bytes | None,
    ) -> bool:
        """Answer the request if it is plain (True), else leave it to the framework."""
        params = found.groupdict()
        if any(len(params[n]) > m for n, m in self.path_limits):
            return False
        kwargs: dict[str, Any] = {**params, **self.defaults}
        query = scope.get("query_string")
        if query and not self._take_query(query, kwargs):
            return False
        if self.body is not None:
            if not body:
                return False
            name, model = self.body
            try:  # (a ValidationError is a ValueError)
                data = json.loads(body)
                if not isinstance(data, dict):
                    return False
                kwargs[name] = model.model_validate(data)
            except ValueError:
                return False
        app = scope["app"]
        for name, attr in self.deps:
            kwargs[name] = seat_token(scope) if attr is None else getattr(app.state, attr)
        scope["route"] = self.route
        scope["endpoint"] = self.route.endpoint
        scope["path_params"] = params
        try:
            answer: Response = await self.route.endpoint(**kwargs)
        except Exception as exc:
            handlers = app.exception_handlers
            handler = next(
                (
                    handlers[c]
                    for c in type(exc).__mro__
                    if c in handlers and c is not Exception  # Exception: the server error's
                ),
                None,
            )
            if handler is None:
                raise
            answer = await handler(Request(scope, receive), exc)
        await answer(scope, receive, send)
        return True

    def _take_query(self, query: bytes, kwargs: dict[str, Any]) -> bool:
        """The query string's values into ``kwargs`` when it is only the route's integer
        and word parameters, each once: an integer as digits the framework reads as the same
        number within its bounds, a word as one of its words, letter for letter (True); else
        nothing is taken (False: the framework answers)."""
        seen: dict[str, int | str] = {}
        for part in query.split(b"&"):
            name, _, text = part.decode("latin-1").partition("=")
            if name in self.words and name not in seen:
                if text not in self.words[name]:
                    return False
                seen[name] = text
                continue
            found = _INT_PARAM.fullmatch(part)
            if found is None:
                return False
            name = found[1].decode("ascii")
            bounds = self.ints.get(name)
            if bounds is None or name in seen:
                return False
            value = int(found[2])
            ge, le = bounds
            if (ge is not None and value < ge) or (le is not None and value > le):
                return False
            seen[name] = value
        kwargs.update(seen)
        return True


#: one ``name=value`` of a hot route's query string: a plain name, a decimal integer with no
#: sign but a minus, no leading zero, at most 18 digits (the framework reads it as that number)
_INT_PARAM = re.compile(rb"([a-z_]{1,40})=(0|-?[1-9][0-9]{0,17})")


def _words(hint: Any) -> tuple[str, ...] | None:
    """A ``Literal`` of plain lowercase words' words (the framework reads a query value as
    one of them only when it is that word, letter for letter), or None for anything else."""
    if get_origin(hint) is not Literal:
        return None
    words = get_args(hint)
    plain = all(isinstance(w, str) and re.fullmatch("[a-z]{1,16}", w) for w in words)
    return words if plain else None


def _int_bounds(hint: Any, metadata: Sequence[Any]) -> tuple[int | None, int | None] | None:
    """An optional integer query parameter's (ge, le), or None when it is anything else
    (another type, or a bound other than ``ge`` and ``le``)."""
    if hint != (int | None) and hint is not int:
        return None
    ge = le = None
    for m in metadata:
        if type(m).__name__ == "Ge" and isinstance(getattr(m, "ge", None), int):
            ge = m.ge
        elif type(m).__name__ == "Le" and isinstance(getattr(m, "le", None), int):
            le = m.le
        else:
            return None
    return ge, le


def json_response(obj: dict[str, Any], status_code: int = 200) -> Response:
    """The body encoded once, here: FastAPI's response_model validation and
    ``jsonable_encoder`` walk would cost more than the action itself (docs/architecture.md).
    The declared ``response_model`` still documents the shape in OpenAPI, but never filters
    an answer: a model that dropped or defaulted a field (an old row's, one it does not list)
    would break the signatures of the records and transcripts the answer carries. A view's
    lock record goes out as the text it was stored as (:func:`service.matches.view_json`)."""
    body = view_json(obj).encode()
    if status_code < 200 or status_code in (204, 304):  # no body: Starlette's own headers
        return Response(body, status_code=status_code, media_type="application/json")
    return JsonAnswer(body, status_code)


class JsonAnswer(Response):
    """A JSON answer whose body is encoded already: the headers Starlette's ``Response``
    would set (``content-length``, then ``content-type: application/json``), made without
    its general header handling."""

    media_type = "application/json"

    def __init__(self, body: bytes, status_code: int = 200) -> None:
        self.status_code = status_code
        self.background = None
        self.body = body
        self.raw_headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]
