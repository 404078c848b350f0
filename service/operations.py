"""What the app needs to be operated (docs/deploy.md): operator keys, the address limit,
metrics and request ids, installed on the app by :func:`install`."""

from __future__ import annotations

import time

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .clock import SYSTEM_CLOCK, Clock
from .db import Database
from .limits import RequestLimit
from .logging_json import incoming_request_id, request_id
from .metrics import Metrics, route_of
from .operators import Operators, ensure_first_key
from .routes import ops as ops_routes
from .settings import Settings


class Front:
    """The outermost middleware, one layer for what every request needs (each layer costs
    per request): its id (``X-Request-ID``, set for its log lines), the per-credential and
    per-address limit, and its latency and status in /metrics (429s and 413s included)."""

    def __init__(self, app: ASGIApp, metrics: Metrics, limit: RequestLimit) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        rid = incoming_request_id(scope)
        token = request_id.set(rid)
        id_header = (b"x-request-id", rid.encode("ascii"))
        status = 500
        limit: str | None = None  # a 429's Qahwa-Limit: which limit refused it

        async def send_out(message: Message) -> None:
            nonlocal status, limit
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 429:
                    limit = next(
                        (v.decode("latin-1") for k, v in message["headers"] if k == b"qahwa-limit"),
                        None,
                    )
                message = {**message, "headers": [*message.get("headers", ()), id_header]}
            await send(message)

        try:
            wait, who, cred = 0.0, "", None
            limited = not self.limit.exempt(scope)
            if limited:
                wait, who, cred = self.limit.check(scope)
            if wait == 0.0:
                await self.app(scope, receive, send_out)
                if limited and cred is not None and status == 401:
                    self.limit.refused_credential(who)
            else:
                status, headers, body = self.limit.refusal(who, cred, wait)
                await send_out(
                    {"type": "http.response.start", "status": status, "headers": headers}
                )
                await send_out({"type": "http.response.body", "body": body})
        finally:
            self.metrics.observe(
                scope["method"], route_of(scope), status, time.perf_counter() - start, limit
            )
            request_id.reset(token)


def install(app: FastAPI, settings: Settings, db: Database, clock: Clock = SYSTEM_CLOCK) -> None:
    """Call after every other middleware is added: :class:`Front` wraps them all."""
    ensure_first_key(db, settings.operator_key_path)
    app.state.operators = Operators(db, settings, clock)
    app.state.metrics = Metrics(db)
    app.state.address_limit = RequestLimit(
        settings.rate_per_second_per_ip, settings.rate_per_second_per_token, clock
    )
    app.include_router(ops_routes.router)
    app.add_middleware(Front, metrics=app.state.metrics, limit=app.state.address_limit)
