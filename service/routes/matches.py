"""/v1/matches: create, seat, play, watch, resign, transcript. A request body's fields are the
service call's keywords (``**dict(body)``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ..front import ServiceDep, TokenDep, WatchDep, json_response
from ..matches.match import checked_in_pool
from ..operators import OperatorDep
from ..schemas import (
    BODY,
    ActionIn,
    ActionOut,
    AnyEventsOut,
    AnyMatchOut,
    AnyTranscriptOut,
    CommitIn,
    CreateMatchIn,
    LockOut,
    MatchCreatedOut,
    Q,
    ResignIn,
    ResignOut,
    RevealIn,
    SeatedOut,
    SeatingOut,
    SeedIn,
    StateOut,
    errors,
)
from ..store import KIND_MATCH

router = APIRouter(prefix="/v1/matches", tags=["matches"])


MatchId = Annotated[str, Path(max_length=64, description="the match id")]
After = Annotated[int, Query(ge=-1, le=2**31 - 1, description="return events with seq > after")]
Sealed = Annotated[
    Literal["full", "brief"],
    Query(
        description="at a sealed table, the view's `sealed` block: `full`, or `brief` without "
        "`deck` and `shares`, the bulk of every sealed view, which a seat that follows the log "
        "holds already (docs/api.md)"
    ),
]
LastEventId = Annotated[
    str | None,
    Header(
        max_length=16, description="SSE reconnect: resume after this event id (overrides `after`)"
    ),
]


def resume_after(after: int, last_event_id: str | None) -> int:
    """``Last-Event-ID`` (sent by a reconnecting EventSource) wins over ``after``."""
    given = (last_event_id or "").strip()
    if given.isascii() and given.isdigit():  # not "²": str.isdigit takes it, int() not
        return max(after, min(int(given), 2**31 - 1))
    return after


@router.post(
    "",
    status_code=201,
    response_model=MatchCreatedOut,
    dependencies=[OperatorDep],
    responses=errors(BODY, "unauthorized unknown_game bad_ruleset bad_seats rate_limited"),
    summary="Create a match; returns the signed commit record and the seat tokens",
)
def create_match(body: CreateMatchIn, svc: ServiceDep) -> dict[str, Any]:
    names = [s.name for s in body.seats] if body.seats is not None else None
    house = [s.house for s in body.seats] if body.seats is not None else None
    return svc.create_match(body.game, ruleset=body.ruleset, names=names, house=house)


@router.get(
    "/{match_id}",
    response_model=AnyMatchOut,
    responses=errors("not_found", Q),
    summary="The public view of a match",
)
def get_match(match_id: MatchId, svc: ServiceDep) -> Response:
    return json_response(svc.public(match_id, kind=KIND_MATCH))


Seat = Annotated[int, Path(ge=0, le=64, description="the seat number")]


@router.post(
    "/{match_id}/seats/{seat}/commit",
    response_model=SeatingOut,
    responses=errors(
        BODY,
        "unauthorized forbidden not_found not_seating already_committed duplicate_commitment "
        "match_over bad_commitment bad_key bad_roll_chain",
    ),
    summary="qahwa-fair/2: this seat's commitment, key and roll-chain tip; the last "
    "commit locks the match",
)
def commit(
    match_id: MatchId, seat: Seat, body: CommitIn, svc: ServiceDep, token: TokenDep
) -> Response:
    return json_response(svc.commit(match_id, seat=seat, token=token, **dict(body)))


@router.get(
    "/{match_id}/lock",
    response_model=LockOut,
    responses=errors("not_found not_locked", Q),
    summary="qahwa-fair/2: the signed lock and its log index (409 before every seat committed)",
)
def get_lock(match_id: MatchId, svc: ServiceDep) -> Response:
    return json_response(svc.lock(match_id, kind=KIND_MATCH))


@router.post(
    "/{match_id}/seats/{seat}/reveal",
    response_model=SeatingOut,
    responses=errors(BODY, "unauthorized forbidden not_found not_locked match_over bad_reveal"),
    summary="qahwa-fair/2: reveal this seat's client seed and nonce; the last "
    "reveal starts the match",
)
def reveal(
    match_id: MatchId, seat: Seat, body: RevealIn, svc: ServiceDep, token: TokenDep
) -> Response:
    return json_response(
        svc.reveal(match_id, kind=KIND_MATCH, seat=seat, token=token, **dict(body))
    )


@router.post(
    "/{match_id}/seats/{seat}/seed",
    response_model=SeatedOut,
    deprecated=True,
    responses=errors(
        BODY, "unauthorized forbidden not_found not_seating seed_already_given bad_client_seed"
    ),
    summary="qahwa-fair/1 matches only: give this seat's client seed (404 for v2)",
)
def give_seed(
    match_id: MatchId, seat: Seat, body: SeedIn, svc: ServiceDep, token: TokenDep
) -> dict[str, Any]:
    svc.v1_seating(match_id, kind=KIND_MATCH, token=token, seat=seat)


@router.post(
    "/{match_id}/start",
    response_model=SeatedOut,
    deprecated=True,
    responses=errors("unauthorized not_found not_seating", Q),
    summary="qahwa-fair/1 matches only: start now (404 for v2: no seed is ever "
    "drawn by the server)",
)
def start(match_id: MatchId, svc: ServiceDep, token: TokenDep) -> dict[str, Any]:
    svc.v1_seating(match_id, kind=KIND_MATCH, token=token)


@router.get(
    "/{match_id}/state",
    response_model=StateOut,
    responses=errors("unauthorized not_found", Q),
    summary="This seat's view (its own hand, legal actions)",
)
async def state(
    match_id: MatchId,
    svc: ServiceDep,
    token: TokenDep,
    events_after: Annotated[
        int | None,
        Query(
            ge=-1,
            le=2**31 - 1,
            description="also return the public log's events with seq > events_after, up to "
            "this view's (a seat that follows the log reads them with its view)",
        ),
    ] = None,
    sealed: Sealed = "full",
) -> Response:
    brief = sealed == "brief"
    # on SQLite on the event loop, no thread hand-off (service.store.Store.on_loop)
    return json_response(
        await svc.store.on_loop(
            lambda: svc.state(
                match_id, kind=KIND_MATCH, token=token, events_after=events_after, brief=brief
            )
        )
    )


@router.post(
    "/{match_id}/actions",
    response_model=ActionOut,
    responses=errors(
        BODY,
        "unauthorized not_found stale_version not_your_turn not_started match_over stale_chain "
        "malformed_action illegal_action bad_signature",
    ),
    summary="Apply one action at a version (keyed seats: with sig over the chain head)",
)
async def act(
    match_id: MatchId, body: ActionIn, svc: ServiceDep, token: TokenDep, sealed: Sealed = "full"
) -> Response:
    def call() -> dict[str, Any]:
        return svc.act(match_id, token=token, brief=sealed == "brief", **dict(body))

    if checked_in_pool(body.action):
        return json_response(await run_in_threadpool(call))
    # on SQLite on the event loop when its locks are free now (service.store.Store.on_loop)
    return json_response(await svc.store.on_loop(call, write=True))


@router.post(
    "/{match_id}/resign",
    response_model=ResignOut,
    responses=errors(
        BODY, "unauthorized not_found match_over not_started stale_chain bad_signature"
    ),
    summary="Resign: the match ends (keyed seats: with sig over the chain head)",
)
def resign(
    match_id: MatchId, svc: ServiceDep, token: TokenDep, body: ResignIn | None = None
) -> Response:
    return json_response(svc.resign(match_id, token=token, **dict(body or {})))


@router.get(
    "/{match_id}/events",
    response_model=AnyEventsOut,
    responses=errors("not_found", Q),
    summary="The public event log after `after`; `wait` long-polls for new events",
)
async def events(
    match_id: MatchId,
    watch: WatchDep,
    after: After = -1,
    wait: Annotated[float, Query(ge=0, le=60, description="seconds to wait for news")] = 0,
) -> Response:
    return json_response(await watch.poll(match_id, kind=KIND_MATCH, after=after, wait=wait))


@router.get(
    "/{match_id}/events/stream",
    summary="The public event log as server-sent events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **errors("not_found", Q)},
)
async def events_stream(
    match_id: MatchId,
    watch: WatchDep,
    after: After = -1,
    timeout: Annotated[float, Query(gt=0, le=600, description="close after this long")] = 60,
    last_event_id: LastEventId = None,
) -> StreamingResponse:
    after = resume_after(after, last_event_id)
    # 404 before streaming
    first = await watch.read(match_id, kind=KIND_MATCH, after=after, with_chains=True)
    return StreamingResponse(
        watch.stream(first, kind=KIND_MATCH, after=after, timeout=timeout),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store"},
    )


@router.get(
    "/{match_id}/transcript",
    response_model=AnyTranscriptOut,
    responses=errors("not_found not_finished", Q),
    summary="The signed transcript (409 until the end)",
)
def transcript(match_id: MatchId, svc: ServiceDep) -> Response:
    return json_response(svc.transcript(match_id, kind=KIND_MATCH))
