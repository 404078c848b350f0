"""The log in the C2SP formats (api.md "The log as a C2SP transparency log"): the
checkpoint, hash tiles, entry bundles, and a match's offline proof. ``/log/`` is the log
this process appends to; ``/logs/<id>/log/`` any log of the deployment, the older ones
read-only (``qahwa keys new-log``, docs/deploy.md §10)."""

from __future__ import annotations

import gzip
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from ..c2sp import IMMUTABLE, NO_CACHE, LogC2SP, LogShelf, Proven
from ..schemas import Q, errors

router = APIRouter()

TEXT = "text/plain; charset=utf-8"


def _shelf(request: Request) -> LogShelf:
    shelf: LogShelf = request.app.state.logs
    return shelf


def _checkpoint(log: LogC2SP) -> Response:
    return Response(log.checkpoint(), media_type=TEXT, headers={"Cache-Control": NO_CACHE})


def _tile(request: Request, log: LogC2SP, path: str) -> Response:
    body = log.tile("tile/" + path)
    headers = {"Cache-Control": IMMUTABLE, "Vary": "Accept-Encoding"}
    if path.startswith("entries/") and "gzip" in request.headers.get("accept-encoding", ""):
        body = gzip.compress(body, compresslevel=6, mtime=0)
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type="application/octet-stream", headers=headers)


@router.get("/log/checkpoint", include_in_schema=False)
def checkpoint(request: Request) -> Response:
    return _checkpoint(_shelf(request).active)


@router.get("/log/tile/{path:path}", include_in_schema=False)
def tile(request: Request, path: str) -> Response:
    return _tile(request, _shelf(request).active, path)


@router.get("/logs/{log_id}/log/checkpoint", include_in_schema=False)
def numbered_checkpoint(
    request: Request, log_id: Annotated[int, Path(ge=1, le=2**31 - 1)]
) -> Response:
    return _checkpoint(_shelf(request).get(log_id))


@router.get("/logs/{log_id}/log/tile/{path:path}", include_in_schema=False)
def numbered_tile(
    request: Request, log_id: Annotated[int, Path(ge=1, le=2**31 - 1)], path: str
) -> Response:
    return _tile(request, _shelf(request).get(log_id), path)


MISSING = "Qahwa-Witnesses-Missing"


def _proof(proven: Proven) -> Response:
    """A tlog-proof answer: the proof, never cached, and the witnesses its checkpoint lacks."""
    return Response(
        proven.text,
        media_type=TEXT,
        headers={"Cache-Control": NO_CACHE, MISSING: " ".join(proven.missing)},
    )


@router.get(
    "/v1/matches/{match_id}/log-proof",
    tags=["log"],
    response_class=Response,
    responses={
        200: {
            "content": {TEXT: {"schema": {"type": "string"}}},
            "description": "a c2sp.org/tlog-proof@v1 proof under the checkpoint holding the "
            "entry that the most configured witnesses cosigned, with the cosignatures it has",
            "headers": {
                MISSING: {
                    "description": "the configured witnesses whose cosignature the proof's "
                    "checkpoint lacks, space-separated (empty: none); each client's policy "
                    "decides whether that is enough",
                    "schema": {"type": "string"},
                }
            },
        },
        **errors("not_found not_locked", Q),
    },
    summary="An offline proof (c2sp.org/tlog-proof) of the match's log entry, never held up "
    "by a witness",
)
def log_proof(
    request: Request, match_id: Annotated[str, Path(max_length=64, description="the match id")]
) -> Response:
    return _proof(_shelf(request).match_proof(match_id))


@router.get(
    "/v1/matches/{match_id}/reveal-proof",
    tags=["log"],
    response_class=Response,
    responses={
        200: {
            "content": {TEXT: {"schema": {"type": "string"}}},
            "description": "a c2sp.org/tlog-proof@v1 proof",
        },
        **errors("not_found not_finished", Q),
    },
    summary="An offline proof (c2sp.org/tlog-proof) of the match's reveal record "
    "(fairness-v2 §8: its chain head, result and transcript hash) under the newest "
    "checkpoint its witnesses cosigned (the missing ones named in Qahwa-Witnesses-Missing)",
)
def reveal_proof(
    request: Request, match_id: Annotated[str, Path(max_length=64, description="the match id")]
) -> Response:
    return _proof(_shelf(request).reveal_proof(match_id))
