"""What the app needs to be operated (docs/deploy.md): operator keys, limits, timeouts,
metrics and request ids, installed on the app by :func:`install`."""

from __future__ import annotations

from fastapi import FastAPI

from .db import Database
from .limits import AddressLimit
from .logging_json import RequestIds
from .metrics import Metrics, Observe
from .operators import Operators, ensure_first_key
from .routes import ops as ops_routes
from .serving import BodyTimeout
from .settings import Settings


def install(app: FastAPI, settings: Settings, db: Database) -> None:
    """Call after every other middleware is added: these wrap them (outermost last)."""
    ensure_first_key(db, settings.operator_key_path)
    app.state.operators = Operators(db, settings)
    app.state.metrics = Metrics(db)
    app.include_router(ops_routes.router)
    app.add_middleware(BodyTimeout, seconds=settings.body_timeout_seconds)
    app.add_middleware(AddressLimit, per_second=settings.rate_per_second_per_ip)
    app.add_middleware(Observe, metrics=app.state.metrics)
    app.add_middleware(RequestIds)
