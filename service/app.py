"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from fairness import SecretBox

from . import docs_ui, keys, migrate, play
from .c2sp import LogC2SP, LogShelf
from .clock import SYSTEM_CLOCK, Clock
from .db import Database
from .errors import HTTP_CODES, ServiceError
from .front import Front, RequestLimit, error_response
from .logs import PublicLog
from .matches import MatchService
from .metrics import Metrics
from .operators import Operators, ensure_first_key
from .rng import RngSessions
from .routes import log_c2sp as log_c2sp_routes
from .routes import matches as matches_routes
from .routes import ops as ops_routes
from .routes import public as public_routes
from .routes import rng as rng_routes
from .schemas import add_links
from .settings import STATIC_DIR, Settings
from .version import PROTOCOLS, VERSION
from .watch import CHANNEL, Hub, PgListener, Watch, WatchersFlag

log = logging.getLogger("qahwa.service")

#: the routes of a move, served by the request layer without the framework's dispatch when
#: the request is plain (service/front.py ``HotRoute``)
HOT_ROUTES = {
    ("/v1/matches/{match_id}/state", "GET"),
    ("/v1/matches/{match_id}/actions", "POST"),
}


class _Static(StaticFiles):
    """/static: the verify page's assets (404 with a clear message while not installed)."""

    async def get_response(self, path: str, scope: Scope) -> Any:
        if not Path(str(self.directory)).is_dir():
            raise StarletteHTTPException(404, "no static files are installed on this server")
        return await super().get_response(path, scope)


def _validation_message(exc: RequestValidationError) -> tuple[int, str, str]:
    errors = exc.errors()

    def of_body(kind: str) -> bool:
        return any(e.get("type") == kind and tuple(e.get("loc", ())) == ("body",) for e in errors)

    for err in errors:
        if err.get("type") == "json_invalid":
            return 400, "malformed_json", f"the request body is not valid JSON: {err.get('msg')}"
    if of_body("missing"):
        return 400, "missing_body", "this request needs a JSON body"
    if of_body("model_attributes_type"):
        return (
            400,
            "bad_request",
            "the request body must be a JSON object, sent with Content-Type: application/json",
        )
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        what = "unknown field" if err.get("type") == "extra_forbidden" else err.get("msg")
        parts.append(f"{loc}: {what}")
    return 422, "validation_error", "; ".join(parts)


def create_app(settings: Settings | None = None, *, clock: Clock | None = None) -> FastAPI:
    """Build the app: open the database (migrating it), load keys, wire the routes.

    ``clock``: the time every deadline and rate is measured with (service/clock.py; the
    machine's unless given: tests pass one they move).
    """
    settings = settings or Settings()
    clock = clock or SYSTEM_CLOCK
    db = Database(settings.database_url)
    if settings.run_migrations:
        migrate.upgrade(db, master_key=lambda: keys.master_key(settings))
    box = SecretBox(keys.master_key(settings))
    signer = keys.open_ring(settings, db, box, clock)  # RetiredKeyError: none in force
    log_id, origin, note_seed = keys.log_identity(settings, db, box)  # LogIdentityError
    service = MatchService(db, settings, signer, box, clock)
    log_c2sp = LogC2SP(db, settings, note_seed, origin=origin, log_id=log_id)
    hub = Hub()
    service.store.on_commit.append(hub.publish)
    service.store.on_status.append(hub.publish)  # a status change without an event too
    service.store.on_log.append(log_c2sp.poke)  # a new log entry: a checkpoint is due
    listener: PgListener | None = None
    if db.dialect == "postgresql":
        service.store.notify_channel = CHANNEL
        service.store.notify_wanted = WatchersFlag(db)  # NOTIFY only while someone waits
        listener = PgListener(settings.database_url, hub)
        log_c2sp.poll_seconds = 5.0  # other processes append too

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        if listener is not None:
            listener.start()
        stop = threading.Event()

        def sweeper() -> None:
            # the first sweep at once: it extends the turn deadlines that passed while
            # nothing was serving (fairness-v2.md §7) and starts this process's heartbeat
            while True:
                try:
                    app.state.metrics.swept_run(service.sweep())
                except Exception:  # keep sweeping; the error is logged without details
                    app.state.metrics.swept_run(None)
                    log.exception("deadline sweep failed")
                if stop.wait(settings.sweep_interval_seconds):
                    return

        thread = threading.Thread(target=sweeper, name="qahwa-sweep", daemon=True)
        thread.start()
        signer.start()
        metrics = app.state.metrics  # (set below, before the app starts: the sweeper's too)
        log_c2sp.on_lag = lambda name, n: metrics.witness_lag.labels(witness=name).set(n)
        log_c2sp.start()
        try:
            yield
        finally:
            stop.set()
            lobby = getattr(app.state, "play_lobby", None)  # service/play.py's, if it ran
            if lobby is not None:
                lobby.close()
            log_c2sp.stop()
            signer.stop()
            thread.join(timeout=5)
            if listener is not None:
                listener.stop()
            hub.bind(None)
            db.dispose()

    app = FastAPI(
        title="qahwa",
        version=VERSION,
        summary="Provably fair dice and shuffles for café games (" + ", ".join(PROTOCOLS) + ")",
        lifespan=lifespan,
        docs_url=None,  # served offline by docs_ui
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.clock = clock
    app.state.db = db
    app.state.signer = signer
    app.state.service = service
    app.state.rng = RngSessions(service)
    app.state.watch = Watch(service, hub)
    app.state.log_c2sp = log_c2sp
    app.state.logs = LogShelf(db, settings, box, log_c2sp)
    app.state.public_log = PublicLog(
        db,
        signer,
        {"origin": log_c2sp.origin, "vkey": log_c2sp.vkey},
        log_id=log_id,
        logs=app.state.logs.listing,
    )

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such path: {request.url.path}"
        if exc.status_code == 400 and message == "There was an error parsing the body":
            code, message = "malformed_json", "the request body is not valid JSON"
        return error_response(exc.status_code, code, message, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, code, message = _validation_message(exc)
        return error_response(status, code, message)

    @app.exception_handler(OperationalError)
    @app.exception_handler(InterfaceError)
    @app.exception_handler(DisconnectionError)
    @app.exception_handler(PoolTimeout)
    async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
        # The database is down, restarting or locked: the transaction was rolled back, so
        # nothing changed; the next request after it is back succeeds (the pool pings).
        log.warning(
            "database unavailable on %s %s: %s",
            request.method,
            request.url.path,
            type(getattr(exc, "orig", None) or exc).__name__,
        )
        return error_response(
            503,
            "unavailable",
            "the database is not available right now; nothing was changed, retry in a few seconds",
            headers={"Retry-After": "2"},
        )

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.error(
            "internal error on %s %s: %s", request.method, request.url.path, type(exc).__name__
        )
        return error_response(500, "internal", "internal server error")

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_links(FastAPI.openapi(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.include_router(matches_routes.router)
    app.include_router(rng_routes.router)
    app.include_router(public_routes.router)
    app.include_router(log_c2sp_routes.router)
    docs_ui.install(app)
    app.include_router(play.router)  # /play, the web table (service/play.py)
    app.mount("/static", _Static(directory=STATIC_DIR, check_dir=False), name="static")
    # what it needs to be operated (docs/deploy.md): operator keys, metrics, the limits
    ensure_first_key(db, settings.operator_key_path)
    app.state.operators = Operators(db, settings, clock)
    app.state.metrics = Metrics(db)
    app.state.address_limit = RequestLimit(
        settings.rate_per_second_per_ip, settings.rate_per_second_per_token, clock
    )
    app.include_router(ops_routes.router)
    # the one middleware (service/front.py): CORS, request ids, limits, body, refusals, metrics
    app.add_middleware(
        Front,
        metrics=app.state.metrics,
        limit=app.state.address_limit,
        signer=signer,
        clock=clock,
        max_body=settings.max_body_bytes,
        hot=[  # the move's two requests (front.HotRoute)
            r
            for r in matches_routes.router.routes
            if isinstance(r, APIRoute) and (r.path, *(r.methods or ())) in HOT_ROUTES
        ],
    )
    return app
