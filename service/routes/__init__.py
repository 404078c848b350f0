"""HTTP routes: thin wrappers over :class:`service.matches.MatchService`."""

from __future__ import annotations

from typing import Any

from fastapi.responses import Response

from ..matches import view_json


def json_response(obj: dict[str, Any], status_code: int = 200) -> Response:
    """The body encoded once, here: FastAPI's response_model validation and
    ``jsonable_encoder`` walk would cost more than the action itself (docs/architecture.md).
    The declared ``response_model`` still documents the shape in OpenAPI, but never filters
    an answer: a model that dropped or defaulted a field (an old row's, one it does not list)
    would break the signatures of the records and transcripts the answer carries. A view's
    lock record goes out as the text it was stored as (:func:`service.matches.view_json`)."""
    return Response(view_json(obj), status_code=status_code, media_type="application/json")
