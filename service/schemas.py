"""The API's request and response models, and the errors each route documents.

The wire models live in :mod:`qahwa_wire.models`, which the Python client is typed with too:
the service imports them from there (the service never imports the client, the client never
imports the service).
"""

from __future__ import annotations

from typing import Any

from qahwa_wire.models import *  # noqa: F403 (re-exported for the routes)
from qahwa_wire.models import ErrorOut

# Every error a route can answer, by status: the codes (docs/api.md) and when.
_WHY: dict[int, tuple[str, ...]] = {
    400: ("malformed_json", "missing_body", "bad_request"),
    401: ("unauthorized",),
    403: ("forbidden",),
    404: ("not_found",),
    409: (
        "stale_version",
        "not_your_turn",
        "not_started",
        "not_seating",
        "seed_already_given",
        "match_over",
        "not_finished",
        "not_locked",
        "already_committed",
        "duplicate_commitment",
        "stale_chain",
        "session_full",
    ),
    413: ("body_too_large",),
    422: (
        "validation_error",
        "unknown_game",
        "bad_ruleset",
        "bad_seats",
        "bad_client_seed",
        "malformed_action",
        "illegal_action",
        "bad_commitment",
        "bad_key",
        "bad_roll_chain",
        "bad_reveal",
        "bad_signature",
    ),
    429: ("rate_limited",),
    503: ("unavailable",),
}


def errors(*codes: str) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route: the error codes it can answer, space-separated
    (``errors(BODY, "unauthorized not_found stale_version")``), each documented under the
    status :data:`_WHY` lists it under, in the order given. Every route can also answer 503
    ``unavailable`` (the database does not answer)."""
    status_of = {code: status for status, names in _WHY.items() for code in names}
    wanted: dict[int, list[str]] = {}
    for code in dict.fromkeys(" ".join((*codes, "unavailable")).split()):
        assert code in status_of, f"code {code!r} is not documented"
        wanted.setdefault(status_of[code], []).append(code)
    return {
        status: {
            "model": ErrorOut,
            "description": "error codes: " + ", ".join(f"`{n}`" for n in wanted[status]),
        }
        for status in sorted(wanted)
    }


#: what a route with a JSON body can answer about the body
BODY = "malformed_json missing_body bad_request body_too_large validation_error"
Q = "validation_error"  # a path or query parameter out of range


# -- OpenAPI links: how one answer's ids and tokens feed the next call (clients, schemathesis)
_M = "/v1/matches/{match_id}"
_R = "/v1/rng/{session_id}"
_MATCH = {"path.match_id": "$response.body#/match_id"}
_SEAT0 = {**_MATCH, "header.Authorization": "Bearer {$response.body#/seats/0/token}"}
_SEAT = {
    **_MATCH,
    "path.seat": "$response.body#/seats/0/seat",
    "header.Authorization": _SEAT0["header.Authorization"],
}
_SESSION = {"path.session_id": "$response.body#/session_id"}
_TOKEN = {**_SESSION, "header.Authorization": "Bearer {$response.body#/token}"}

#: (the path and status of a POST's answer, the link's name): the operation it leads to (its
#: method, and its path: a match's or session's own plus a tail) and the parameters it takes
#: from the answer
LINKS: dict[tuple[str, str, str], tuple[str, str, str, dict[str, str]]] = {
    ("/v1/matches", "201", "GetMatch"): ("get", _M, "", _MATCH),
    ("/v1/matches", "201", "Commit"): ("post", _M, "/seats/{seat}/commit", _SEAT),
    ("/v1/matches", "201", "Lock"): ("get", _M, "/lock", _MATCH),
    ("/v1/matches", "201", "Reveal"): ("post", _M, "/seats/{seat}/reveal", _SEAT),
    ("/v1/matches", "201", "State"): ("get", _M, "/state", _SEAT0),
    ("/v1/matches", "201", "Act"): ("post", _M, "/actions", _SEAT0),
    ("/v1/matches", "201", "Resign"): ("post", _M, "/resign", _SEAT0),
    ("/v1/matches", "201", "Events"): ("get", _M, "/events", _MATCH),
    ("/v1/matches", "201", "Transcript"): ("get", _M, "/transcript", _MATCH),
    ("/v1/matches/{match_id}/resign", "200", "Transcript"): ("get", _M, "/transcript", _MATCH),
    ("/v1/rng", "201", "GetSession"): ("get", _R, "", _SESSION),
    ("/v1/rng", "201", "Seed"): ("post", _R, "/seed", _TOKEN),
    ("/v1/rng", "201", "Draw"): ("post", _R, "/draws", _TOKEN),
    ("/v1/rng", "201", "Events"): ("get", _R, "/events", _SESSION),
    ("/v1/rng", "201", "Close"): ("post", _R, "/close", _TOKEN),
    ("/v1/rng", "201", "Transcript"): ("get", _R, "/transcript", _SESSION),
    ("/v1/rng/{session_id}/close", "200", "Transcript"): ("get", _R, "/transcript", _SESSION),
}


def add_links(doc: dict[str, Any]) -> dict[str, Any]:
    """Put :data:`LINKS` into a generated OpenAPI document (every target must exist: its
    operationId is the document's own)."""
    for (path, status, name), (method, resource, tail, params) in LINKS.items():
        answer = doc["paths"][path]["post"]["responses"][status]
        target = doc["paths"][resource + tail][method]["operationId"]
        links = answer.setdefault("links", {})
        links[name] = {"operationId": target, "parameters": dict(params)}
    return doc
