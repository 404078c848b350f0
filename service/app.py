"""The FastAPI application factory."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fairness import SecretBox

from . import docs_ui, keys, migrate
from .db import Database
from .matches import ApiError, MatchService, now_iso
from .routes import matches as matches_routes
from .routes import public as public_routes
from .routes import rng as rng_routes
from .settings import Settings

log = logging.getLogger("qahwa.service")

STATIC_DIR = Path(__file__).resolve().parent / "static"

_STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 409: "conflict", 413: "body_too_large",
                 415: "unsupported_media_type", 422: "validation_error"}


def error_response(status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers=headers)


class BodyLimit:
    """Reject request bodies over ``limit`` bytes with 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = error_response(413, "body_too_large",
                                 f"the request body is larger than {self.limit} bytes")
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await error_response(400, "bad_request", "bad Content-Length")(
                        scope, receive, send)
                    return
                if declared > self.limit:
                    await too_big(scope, receive, send)
                    return
        seen = 0
        response_started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooBig()
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooBig:
            if not response_started:
                await too_big(scope, receive, send)


class _TooBig(Exception):
    pass


class _Static(StaticFiles):
    """/static: the verify page's assets (404 with a clear message while not installed)."""

    async def get_response(self, path: str, scope: Scope) -> Any:
        if not Path(str(self.directory)).is_dir():
            raise StarletteHTTPException(404, "no static files are installed on this server")
        return await super().get_response(path, scope)


def _validation_message(exc: RequestValidationError) -> tuple[int, str, str]:
    errors = exc.errors()
    for err in errors:
        if err.get("type") == "json_invalid":
            return 400, "malformed_json", f"the request body is not valid JSON: {err.get('msg')}"
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        if err.get("type") == "extra_forbidden":
            parts.append(f"{loc}: unknown field")
        else:
            parts.append(f"{loc}: {err.get('msg')}")
    if any(e.get("type") == "missing" and tuple(e.get("loc", ())) == ("body",) for e in errors):
        return 400, "missing_body", "this request needs a JSON body"
    if any(e.get("type") == "model_attributes_type" and tuple(e.get("loc", ())) == ("body",)
           for e in errors):
        return 400, "bad_request", ("the request body must be a JSON object, sent with "
                                      "Content-Type: application/json")
    return 422, "validation_error", "; ".join(parts)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app: open the database (migrating it), load keys, wire the routes."""
    settings = settings or Settings()
    db = Database(settings.database_url)
    if settings.run_migrations:
        migrate.upgrade(db)
    signer = keys.signer(settings)
    box = SecretBox(keys.master_key(settings))
    try:
        with db.write() as s:
            keys.register(s, signer, now_iso())
    except IntegrityError:  # another process registered it at the same moment
        pass
    service = MatchService(db, settings, signer, box)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()

        def sweeper() -> None:
            while not stop.wait(settings.sweep_interval_seconds):
                try:
                    service.sweep()
                except Exception:  # keep sweeping; the error is logged without details
                    log.exception("abandonment sweep failed")

        thread = threading.Thread(target=sweeper, name="qahwa-sweep", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)
            db.dispose()

    app = FastAPI(
        title="qahwa",
        version="1.0.0",
        summary="Provably fair dice and shuffles for café games (qahwa-fair/1)",
        lifespan=lifespan,
        docs_url=None,  # served offline by docs_ui
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.signer = signer
    app.state.service = service

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such path: {request.url.path}"
        return error_response(exc.status_code, code, message, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, code, message = _validation_message(exc)
        return error_response(status, code, message)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error on %s %s: %s", request.method, request.url.path,
                  type(exc).__name__)
        return error_response(500, "internal", "internal server error")

    _ = HTTPException  # FastAPI's subclass is handled by the Starlette handler above
    app.include_router(matches_routes.router)
    app.include_router(rng_routes.router)
    app.include_router(public_routes.router)
    docs_ui.install(app)
    app.mount("/static", _Static(directory=STATIC_DIR, check_dir=False), name="static")
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    return app
