"""Keys, the transparency log, the verify page and a health check."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse

from ..deps import PublicLogDep
from ..schemas import ERRORS, KeysOut, LogEntriesOut, ProofOut, TreeHeadOut
from ..settings import STATIC_DIR

router = APIRouter(responses=ERRORS)


@router.get("/v1/keys", response_model=KeysOut, tags=["keys"],
            summary="The Ed25519 public keys that sign commitments and transcripts")
def keys(public: PublicLogDep) -> dict[str, Any]:
    return public.keys()


@router.get("/v1/log", response_model=TreeHeadOut, tags=["log"],
            summary="The signed head of the transparency log")
def log_head(
    public: PublicLogDep,
    tree_size: Annotated[int | None, Query(ge=0, le=2**31 - 1, description="an earlier size")] = None,
) -> dict[str, Any]:
    return public.tree_head(tree_size=tree_size)


@router.get("/v1/log/proof", response_model=ProofOut, tags=["log"],
            summary="An RFC 6962 inclusion proof of entry `index`")
def log_proof(
    public: PublicLogDep,
    index: Annotated[int, Query(ge=0, le=2**31 - 1)],
    tree_size: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    return public.proof(index, tree_size=tree_size)


@router.get("/v1/log/entries", response_model=LogEntriesOut, tags=["log"],
            summary="Log entries from `start` (at most `limit`)")
def log_entries(
    public: PublicLogDep,
    start: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    return public.entries(start=start, limit=limit)


@router.get("/verify", include_in_schema=False)
def verify_page() -> FileResponse:
    page = STATIC_DIR / "verify.html"
    if not page.is_file():
        raise HTTPException(404, "the verify page is not installed on this server "
                                 "(service/static/verify.html is missing)")
    return FileResponse(page, media_type="text/html; charset=utf-8")


@router.get("/healthz", tags=["health"], summary="Liveness: the database answers")
def healthz(public: PublicLogDep) -> dict[str, str]:
    public.healthy()
    return {"status": "ok"}
