"""FastAPI dependencies: the settings, the match service and the seat token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlmodel import Session

from .matches import MatchService
from .settings import Settings

_bearer = HTTPBearer(auto_error=False, description="a seat (or session) token")


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_service(request: Request) -> MatchService:
    svc: MatchService = request.app.state.service
    return svc


def get_token(
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str | None:
    return creds.credentials if creds is not None else None


SettingsDep = Annotated[Settings, Depends(get_settings)]
ServiceDep = Annotated[MatchService, Depends(get_service)]
TokenDep = Annotated[str | None, Depends(get_token)]


def get_read_session(request: Request) -> Iterator[Session]:
    """A read-only database session for the request."""
    with request.app.state.db.read() as s:
        yield s


ReadSessionDep = Annotated[Session, Depends(get_read_session)]
