"""Keys, the transparency log, the verify page and a health check."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response

from qahwa_page import page_html, pyodide

from ..front import PublicLogDep
from ..schemas import ConsistencyOut, KeysOut, LogEntriesOut, ProofOut, Q, TreeHeadOut, errors
from ..settings import STATIC_DIR
from ..version import PROTOCOLS, VERSION

router = APIRouter()


@router.get(
    "/v1/keys",
    response_model=KeysOut,
    tags=["keys"],
    responses=errors(),
    summary="The Ed25519 public keys that sign commitments and transcripts",
)
def keys(public: PublicLogDep, request: Request) -> dict[str, Any]:
    return public.keys(request.app.state.clock.now())


@router.get(
    "/v1/log",
    response_model=TreeHeadOut,
    tags=["log"],
    responses=errors("not_found", Q),
    summary="The signed head of the transparency log",
    description="The head's `protocol` names the format of the signed head (docs/fairness.md "
    "§8, kept for every verifier); the `Qahwa-Protocols` header lists the protocols whose records this log holds "
    "and `Qahwa-Version` is this server's version.",
)
def log_head(
    public: PublicLogDep,
    response: Response,
    tree_size: Annotated[
        int | None, Query(ge=0, le=2**31 - 1, description="an earlier size")
    ] = None,
) -> dict[str, Any]:
    response.headers["Qahwa-Protocols"] = ", ".join(PROTOCOLS)
    response.headers["Qahwa-Version"] = VERSION
    return public.tree_head(tree_size=tree_size)


@router.get(
    "/v1/log/proof",
    response_model=ProofOut,
    tags=["log"],
    responses=errors("not_found", Q),
    summary="An RFC 6962 inclusion proof of entry `index`",
)
def log_proof(
    public: PublicLogDep,
    index: Annotated[int, Query(ge=0, le=2**31 - 1)],
    tree_size: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    return public.proof(index, tree_size=tree_size)


@router.get(
    "/v1/log/consistency",
    response_model=ConsistencyOut,
    tags=["log"],
    responses=errors("bad_request not_found", Q),
    summary="An RFC 9162 consistency proof between the heads of sizes `first` and `second`",
)
def log_consistency(
    public: PublicLogDep,
    first: Annotated[int, Query(ge=1, le=2**31 - 1, description="the older tree size")],
    second: Annotated[int, Query(ge=1, le=2**31 - 1, description="the newer tree size")],
) -> dict[str, Any]:
    return public.consistency(first=first, second=second)


@router.get(
    "/v1/log/entries",
    response_model=LogEntriesOut,
    tags=["log"],
    responses=errors(Q),
    summary="Log entries from `start` (at most `limit`)",
)
def log_entries(
    public: PublicLogDep,
    start: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    return public.entries(start=start, limit=limit)


@router.get("/verify", include_in_schema=False)
def verify_page() -> Response:
    page = STATIC_DIR / "verify.html"
    if not page.is_file():
        raise HTTPException(
            404,
            "the verify page is not installed on this server "
            "(qahwa_page/static/verify.html is missing)",
        )
    # merkle.js and verify.js inlined (qahwa_page.page_html): a copy saved from the browser
    # keeps its checks and its log row
    return Response(
        page_html(),
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": pyodide.PAGE_CSP, "Cache-Control": "no-cache"},
    )


def _page_asset(request: Request) -> Response:
    """The verify page's Python (qahwa_page/pyodide.py): runtime, sources, manifest, worker;
    anything else under /static/pyodide/ (not the /static mount) is 404."""
    path = request.scope["path"].removeprefix("/static/")
    runtime_dir = getattr(request.app.state, "pyodide_dir", pyodide.RUNTIME_DIR)
    found = pyodide.asset(path, runtime_dir)
    if found is None:
        raise HTTPException(
            404,
            f"no such file: /static/{path}"
            + (
                " (the Pyodide runtime is not installed: make pyodide)"
                if path.startswith("pyodide/")
                else ""
            ),
        )
    if isinstance(found.body, Path):
        return FileResponse(found.body, media_type=found.media_type, headers=found.headers)
    return Response(found.body, media_type=found.media_type, headers=found.headers)


for _asset in (
    "qahwa-py.json",
    "verify-worker.js",
    "qahwa-py-{digest}.zip",
    "pyodide/{version}/{name}",
    "pyodide/{rest:path}",
):
    router.add_api_route(f"/static/{_asset}", _page_asset, include_in_schema=False)


@router.get(
    "/healthz", tags=["health"], responses=errors(), summary="Liveness: the database answers"
)
def healthz(public: PublicLogDep) -> dict[str, str]:
    public.healthy()
    return {"status": "ok"}
