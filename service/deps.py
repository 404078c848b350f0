"""FastAPI dependencies: the services on ``app.state`` and the seat token.

They are ``async def`` on purpose: they only read attributes, and FastAPI runs a plain
``def`` dependency in the thread pool — one thread hand-off per dependency per request.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .logs import PublicLog
from .matches import MatchService
from .rng import RngSessions
from .watch import Watch


class _SeatToken(HTTPBearer):
    """The seat (or session) token of ``Authorization: Bearer …``, or None: HTTPBearer's own
    parsing and OpenAPI scheme (named ``HTTPBearer`` as before), one dependency instead of
    two (each costs FastAPI its resolution per request)."""

    async def __call__(self, request: Request) -> str | None:  # type: ignore[override]
        creds: HTTPAuthorizationCredentials | None = await super().__call__(request)
        return creds.credentials if creds is not None else None


_bearer = _SeatToken(
    auto_error=False, scheme_name="HTTPBearer", description="a seat (or session) token"
)


def _state(name: str) -> Any:
    """A dependency that is ``app.state.<name>`` (a service built at start-up)."""

    async def get(request: Request) -> Any:
        return getattr(request.app.state, name)

    return Depends(get)


ServiceDep = Annotated[MatchService, _state("service")]
RngDep = Annotated[RngSessions, _state("rng")]
WatchDep = Annotated[Watch, _state("watch")]
PublicLogDep = Annotated[PublicLog, _state("public_log")]
TokenDep = Annotated[str | None, Depends(_bearer)]
