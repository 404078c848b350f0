"""Keys, the transparency log, the verify page and a health check."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse
from sqlmodel import col, select

from ..deps import ReadSessionDep, ServiceDep
from ..models import SigningKey
from ..schemas import KeysOut, LogEntriesOut, ProofOut, TreeHeadOut, errors

router = APIRouter()

Q = ("validation_error",)  # a query parameter out of range

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


@router.get("/v1/keys", response_model=KeysOut, tags=["keys"], responses=errors(),
            summary="The Ed25519 public keys that sign commitments and transcripts")
def keys(session: ReadSessionDep, request: Request) -> dict[str, Any]:
    current = request.app.state.signer.key_id
    rows = session.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all()
    return {"keys": [{"key_id": r.key_id, "alg": r.alg, "public_key": r.public_key,
                      "created_at": r.created_at, "current": r.key_id == current}
                     for r in rows]}


@router.get("/v1/log", response_model=TreeHeadOut, tags=["log"],
            responses=errors(e404=("not_found",), e422=Q),
            summary="The signed head of the transparency log")
def log_head(
    svc: ServiceDep,
    tree_size: Annotated[int | None, Query(ge=0, le=2**31 - 1, description="an earlier size")] = None,
) -> dict[str, Any]:
    return svc.tree_head(tree_size)


@router.get("/v1/log/proof", response_model=ProofOut, tags=["log"],
            responses=errors(e404=("not_found",), e422=Q),
            summary="An RFC 6962 inclusion proof of entry `index`")
def log_proof(
    svc: ServiceDep,
    index: Annotated[int, Query(ge=0, le=2**31 - 1)],
    tree_size: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    return svc.log_proof(index, tree_size)


@router.get("/v1/log/entries", response_model=LogEntriesOut, tags=["log"],
            responses=errors(e422=Q),
            summary="Log entries from `start` (at most `limit`)")
def log_entries(
    svc: ServiceDep,
    start: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    return svc.log_entries(start, limit)


@router.get("/verify", include_in_schema=False)
def verify_page() -> FileResponse:
    page = STATIC_DIR / "verify.html"
    if not page.is_file():
        raise HTTPException(404, "the verify page is not installed on this server "
                                 "(service/static/verify.html is missing)")
    return FileResponse(page, media_type="text/html; charset=utf-8")


@router.get("/healthz", tags=["health"], responses=errors(), summary="Liveness: the database answers")
def healthz(session: ReadSessionDep) -> dict[str, str]:
    session.exec(select(SigningKey.key_id).limit(1)).all()
    return {"status": "ok"}
