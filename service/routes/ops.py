"""/metrics: Prometheus text format (service/metrics.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..metrics import Metrics

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    m: Metrics = request.app.state.metrics
    body, content_type = m.exposition()
    return Response(body, media_type=content_type)
