"""FastAPI dependencies: the services on ``app.state`` and the seat token.

They are ``async def`` on purpose: they only read attributes, and FastAPI runs a plain
``def`` dependency in the thread pool — one thread hand-off per dependency per request.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .logs import PublicLog
from .matches import MatchService
from .rng import RngSessions
from .watch import Watch

_bearer = HTTPBearer(auto_error=False, description="a seat (or session) token")


async def get_service(request: Request) -> MatchService:
    svc: MatchService = request.app.state.service
    return svc


async def get_rng(request: Request) -> RngSessions:
    rng: RngSessions = request.app.state.rng
    return rng


async def get_watch(request: Request) -> Watch:
    watch: Watch = request.app.state.watch
    return watch


async def get_public_log(request: Request) -> PublicLog:
    public: PublicLog = request.app.state.public_log
    return public


async def get_token(
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str | None:
    return creds.credentials if creds is not None else None


ServiceDep = Annotated[MatchService, Depends(get_service)]
RngDep = Annotated[RngSessions, Depends(get_rng)]
WatchDep = Annotated[Watch, Depends(get_watch)]
PublicLogDep = Annotated[PublicLog, Depends(get_public_log)]
TokenDep = Annotated[str | None, Depends(get_token)]
