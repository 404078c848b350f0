"""FastAPI dependencies: the services on ``app.state`` and the seat token (defined in
:mod:`service.front`, the request layer; named here for the routes)."""

from __future__ import annotations

from .front import PublicLogDep, RngDep, ServiceDep, TokenDep, WatchDep

__all__ = ["PublicLogDep", "RngDep", "ServiceDep", "TokenDep", "WatchDep"]
