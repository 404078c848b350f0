"""/v1/rng: plain provably fair dice, draws and shuffles for clients with their own rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from ..front import RngDep, ServiceDep, TokenDep, WatchDep, json_response
from ..operators import OperatorDep
from ..schemas import (
    BODY,
    DrawIn,
    DrawOut,
    Q,
    RngClosedOut,
    RngCreatedOut,
    RngCreateIn,
    RngEventsOut,
    RngMatchOut,
    RngSeededOut,
    RngSeedIn,
    RngTranscriptOut,
    SeatedOut,
    errors,
)
from ..store import KIND_RNG

router = APIRouter(prefix="/v1/rng", tags=["rng"])

SessionId = Annotated[str, Path(max_length=64, description="the session id")]


@router.post(
    "",
    status_code=201,
    response_model=RngCreatedOut,
    dependencies=[OperatorDep],
    responses=errors(BODY, "unauthorized rate_limited"),
    summary="Open a session; returns the signed commit record and the session token "
    "(a client_seed here is 422: it comes after the record, with /seed)",
)
def create(rng: RngDep, body: RngCreateIn | None = None) -> Response:
    return json_response(rng.create(), 201)


@router.get(
    "/{session_id}",
    response_model=RngMatchOut,
    responses=errors("not_found", Q),
    summary="The session's public record",
)
def get_session(session_id: SessionId, svc: ServiceDep) -> Response:
    return json_response(svc.public(session_id, kind=KIND_RNG))


@router.post(
    "/{session_id}/seed",
    response_model=RngSeededOut | SeatedOut,
    responses=errors(
        BODY, "unauthorized not_found not_seating seed_already_given bad_client_seed bad_reveal"
    ),
    summary="Give the client seed and nonce (after the commit record): locks the "
    "session, logs the lock",
)
def give_seed(session_id: SessionId, body: RngSeedIn, rng: RngDep, token: TokenDep) -> Response:
    return json_response(rng.seed(session_id, token=token, **dict(body)))


@router.post(
    "/{session_id}/draws",
    response_model=DrawOut,
    responses=errors(
        BODY,
        "unauthorized not_found match_over not_started session_full malformed_action "
        "illegal_action",
    ),
    summary="One draw, labelled d{k}",
)
def draw(session_id: SessionId, body: DrawIn, rng: RngDep, token: TokenDep) -> Response:
    return json_response(rng.draw(session_id, token=token, action=body.to_action()))


@router.get(
    "/{session_id}/events",
    response_model=RngEventsOut,
    responses=errors("not_found", Q),
    summary="The session's draws",
)
async def events(
    session_id: SessionId,
    watch: WatchDep,
    after: Annotated[int, Query(ge=-1, le=2**31 - 1)] = -1,
    wait: Annotated[float, Query(ge=0, le=60)] = 0,
) -> Response:
    return json_response(await watch.poll(session_id, kind=KIND_RNG, after=after, wait=wait))


@router.post(
    "/{session_id}/close",
    response_model=RngClosedOut,
    responses=errors("unauthorized not_found match_over", Q),
    summary="Close: reveals the server seed and returns the signed transcript",
)
def close(session_id: SessionId, rng: RngDep, token: TokenDep) -> Response:
    return json_response(rng.close(session_id, token=token))


@router.get(
    "/{session_id}/transcript",
    response_model=RngTranscriptOut,
    responses=errors("not_found not_finished", Q),
    summary="The signed transcript (409 until closed)",
)
def transcript(session_id: SessionId, svc: ServiceDep) -> Response:
    return json_response(svc.transcript(session_id, kind=KIND_RNG))
