"""Keys, the transparency log, the verify page and a health check."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse

from ..deps import PublicLogDep
from ..schemas import ConsistencyOut, KeysOut, LogEntriesOut, ProofOut, TreeHeadOut, errors
from ..settings import STATIC_DIR

router = APIRouter()

Q = ("validation_error",)  # a query parameter out of range


@router.get("/v1/keys", response_model=KeysOut, tags=["keys"], responses=errors(),
            summary="The Ed25519 public keys that sign commitments and transcripts")
def keys(public: PublicLogDep) -> dict[str, Any]:
    return public.keys()


@router.get("/v1/log", response_model=TreeHeadOut, tags=["log"],
            responses=errors(e404=("not_found",), e422=Q),
            summary="The signed head of the transparency log")
def log_head(
    public: PublicLogDep,
    tree_size: Annotated[int | None, Query(ge=0, le=2**31 - 1, description="an earlier size")] = None,
) -> dict[str, Any]:
    return public.tree_head(tree_size=tree_size)


@router.get("/v1/log/proof", response_model=ProofOut, tags=["log"],
            responses=errors(e404=("not_found",), e422=Q),
            summary="An RFC 6962 inclusion proof of entry `index`")
def log_proof(
    public: PublicLogDep,
    index: Annotated[int, Query(ge=0, le=2**31 - 1)],
    tree_size: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    return public.proof(index, tree_size=tree_size)


@router.get("/v1/log/consistency", response_model=ConsistencyOut, tags=["log"],
            responses=errors(e400=("bad_request",), e404=("not_found",), e422=Q),
            summary="An RFC 9162 consistency proof between the heads of sizes `first` "
                    "and `second`")
def log_consistency(
    public: PublicLogDep,
    first: Annotated[int, Query(ge=1, le=2**31 - 1, description="the older tree size")],
    second: Annotated[int, Query(ge=1, le=2**31 - 1, description="the newer tree size")],
) -> dict[str, Any]:
    return public.consistency(first=first, second=second)


@router.get("/v1/log/entries", response_model=LogEntriesOut, tags=["log"],
            responses=errors(e422=Q),
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


@router.get("/healthz", tags=["health"], responses=errors(), summary="Liveness: the database answers")
def healthz(public: PublicLogDep) -> dict[str, str]:
    public.healthy()
    return {"status": "ok"}
