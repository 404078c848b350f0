"""/metrics: Prometheus text format (service/metrics.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..metrics import Metrics

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    m: Metrics = request.app.state.metrics
    return Response(generate_latest(m.registry), media_type=CONTENT_TYPE_LATEST)
