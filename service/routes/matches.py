"""/v1/matches: create, seat, play, watch, resign, transcript."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query
from fastapi.responses import Response, StreamingResponse

from ..deps import ServiceDep, TokenDep, WatchDep
from ..operators import OperatorDep
from ..schemas import (
    BODY,
    ActionIn,
    ActionOut,
    CreateMatchIn,
    EventsOut,
    MatchCreatedOut,
    MatchOut,
    ResignOut,
    SeatedOut,
    SeedIn,
    StateOut,
    TranscriptOut,
    errors,
)
from ..store import KIND_MATCH, dumps

router = APIRouter(prefix="/v1/matches", tags=["matches"])

Q = ("validation_error",)  # a path or query parameter out of range

MatchId = Annotated[str, Path(max_length=64, description="the match id")]
After = Annotated[int, Query(ge=-1, le=2**31 - 1, description="return events with seq > after")]
LastEventId = Annotated[str | None, Header(
    max_length=16, description="SSE reconnect: resume after this event id (overrides `after`)")]


def json_response(obj: Any, status_code: int = 200) -> Response:
    """The body encoded once, here: FastAPI's response_model validation and
    ``jsonable_encoder`` walk would cost more than the action itself (docs/architecture.md).
    The declared ``response_model`` still documents the shape in OpenAPI."""
    return Response(dumps(obj), status_code=status_code, media_type="application/json")


def resume_after(after: int, last_event_id: str | None) -> int:
    """``Last-Event-ID`` (sent by a reconnecting EventSource) wins over ``after``."""
    if last_event_id is not None and last_event_id.strip().isascii() \
            and last_event_id.strip().isdigit():  # not "²": str.isdigit takes it, int() not
        return max(after, min(int(last_event_id.strip()), 2**31 - 1))
    return after


@router.post("", status_code=201, response_model=MatchCreatedOut, dependencies=[OperatorDep],
             responses=errors(**BODY, e401=("unauthorized",), e429=("rate_limited",),
                              e422=("validation_error", "unknown_game", "bad_ruleset",
                                    "bad_seats")),
             summary="Create a match; returns the signed commitment and the seat tokens")
def create_match(body: CreateMatchIn, svc: ServiceDep) -> dict[str, Any]:
    names = [s.name for s in body.seats] if body.seats is not None else None
    return svc.create_match(body.game, ruleset=body.ruleset, names=names)


@router.get("/{match_id}", response_model=MatchOut, responses=errors(e404=("not_found",), e422=Q),
            summary="The public view of a match")
def get_match(match_id: MatchId, svc: ServiceDep) -> Response:
    return json_response(svc.public(match_id, kind=KIND_MATCH))


@router.post("/{match_id}/seats/{seat}/seed", response_model=SeatedOut,
             responses=errors(**BODY, e401=("unauthorized",), e403=("forbidden",),
                              e404=("not_found",), e409=("not_seating", "seed_already_given"),
                              e422=("validation_error", "bad_client_seed")),
             summary="Give this seat's client seed (while seating)")
def give_seed(match_id: MatchId, seat: Annotated[int, Path(ge=0, le=64)], body: SeedIn,
              svc: ServiceDep, token: TokenDep) -> dict[str, Any]:
    return svc.give_seed(match_id, kind=KIND_MATCH, seat=seat, token=token,
                         client_seed=body.client_seed)


@router.post("/{match_id}/start", response_model=SeatedOut,
             responses=errors(e401=("unauthorized",), e404=("not_found",),
                              e409=("not_seating",), e422=Q),
             summary="Start now; the server draws the seeds not yet given")
def start(match_id: MatchId, svc: ServiceDep, token: TokenDep) -> dict[str, Any]:
    return svc.start(match_id, kind=KIND_MATCH, token=token)


@router.get("/{match_id}/state", response_model=StateOut,
            responses=errors(e401=("unauthorized",), e404=("not_found",), e422=Q),
            summary="This seat's view (its own hand, legal actions)")
def state(match_id: MatchId, svc: ServiceDep, token: TokenDep) -> Response:
    return json_response(svc.state(match_id, kind=KIND_MATCH, token=token))


@router.post("/{match_id}/actions", response_model=ActionOut,
             responses=errors(**BODY, e401=("unauthorized",), e404=("not_found",),
                              e409=("stale_version", "not_your_turn", "not_started",
                                    "match_over"),
                              e422=("validation_error", "malformed_action", "illegal_action")),
             summary="Apply one action at a version")
def act(match_id: MatchId, body: ActionIn, svc: ServiceDep, token: TokenDep) -> Response:
    return json_response(svc.act(match_id, token=token, action=body.action,
                                 version=body.version))


@router.post("/{match_id}/resign", response_model=ResignOut,
             responses=errors(e401=("unauthorized",), e404=("not_found",),
                              e409=("match_over",), e422=Q), summary="Resign: the match ends")
def resign(match_id: MatchId, svc: ServiceDep, token: TokenDep) -> dict[str, Any]:
    return svc.resign(match_id, token=token)


@router.get("/{match_id}/events", response_model=EventsOut,
            responses=errors(e404=("not_found",), e422=Q),
            summary="The public event log after `after`; `wait` long-polls for new events")
async def events(
    match_id: MatchId, watch: WatchDep, after: After = -1,
    wait: Annotated[float, Query(ge=0, le=60, description="seconds to wait for news")] = 0,
) -> Response:
    return json_response(await watch.poll(match_id, kind=KIND_MATCH, after=after, wait=wait))


@router.get("/{match_id}/events/stream", summary="The public event log as server-sent events",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}},
                       **errors(e404=("not_found",), e422=Q)})
async def events_stream(
    match_id: MatchId, watch: WatchDep, after: After = -1,
    timeout: Annotated[float, Query(gt=0, le=600, description="close after this long")] = 60,
    last_event_id: LastEventId = None,
) -> StreamingResponse:
    after = resume_after(after, last_event_id)
    first = await watch.read(match_id, kind=KIND_MATCH, after=after)  # 404 before streaming
    return StreamingResponse(watch.stream(first, kind=KIND_MATCH, after=after, timeout=timeout),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})


@router.get("/{match_id}/transcript", response_model=TranscriptOut,
            responses=errors(e404=("not_found",), e409=("not_finished",), e422=Q),
            summary="The signed transcript (409 until the end)")
def transcript(match_id: MatchId, svc: ServiceDep) -> Response:
    return json_response(svc.transcript(match_id, kind=KIND_MATCH))
