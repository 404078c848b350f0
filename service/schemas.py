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
        "not_cosigned",
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


def errors(**codes: tuple[str, ...]) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route: ``errors(e404=("not_found",), e409=(...))``.

    Every route can also answer 503 ``unavailable`` (the database does not answer).
    """
    out: dict[int | str, dict[str, Any]] = {}
    wanted = {int(k[1:]): v for k, v in codes.items()}
    wanted.setdefault(503, ("unavailable",))
    for status in sorted(wanted):
        names = wanted[status]
        unknown = set(names) - set(_WHY[status])
        assert not unknown, f"{status}: codes {sorted(unknown)} are not documented"
        out[status] = {
            "model": ErrorOut,
            "description": "error codes: " + ", ".join(f"`{n}`" for n in names),
        }
    return out


BODY = {"e400": _WHY[400], "e413": _WHY[413]}


# -- OpenAPI links: how one answer's ids and tokens feed the next call (clients, schemathesis)
def _op(name: str, path: str, method: str) -> str:
    """FastAPI's operationId for a route function ``name`` at ``method path``."""
    return (
        name
        + "_"
        + path.strip("/").replace("/", "_").replace("{", "_").replace("}", "_")
        + "_"
        + method
    )


_MATCH = "$response.body#/match_id"
_SEAT0 = "Bearer {$response.body#/seats/0/token}"
_SESSION = "$response.body#/session_id"
_TOKEN = "Bearer {$response.body#/token}"


def _links(pairs: dict[str, tuple[str, str, str, dict[str, str]]]) -> dict[str, Any]:
    return {
        name: {"operationId": _op(fn, path, method), "parameters": params}
        for name, (fn, path, method, params) in pairs.items()
    }


LINKS: dict[tuple[str, str, str], dict[str, Any]] = {
    ("/v1/matches", "post", "201"): _links(
        {
            "GetMatch": ("get_match", "/v1/matches/{match_id}", "get", {"path.match_id": _MATCH}),
            "Commit": (
                "commit",
                "/v1/matches/{match_id}/seats/{seat}/commit",
                "post",
                {
                    "path.match_id": _MATCH,
                    "path.seat": "$response.body#/seats/0/seat",
                    "header.Authorization": _SEAT0,
                },
            ),
            "Lock": ("get_lock", "/v1/matches/{match_id}/lock", "get", {"path.match_id": _MATCH}),
            "Reveal": (
                "reveal",
                "/v1/matches/{match_id}/seats/{seat}/reveal",
                "post",
                {
                    "path.match_id": _MATCH,
                    "path.seat": "$response.body#/seats/0/seat",
                    "header.Authorization": _SEAT0,
                },
            ),
            "State": (
                "state",
                "/v1/matches/{match_id}/state",
                "get",
                {"path.match_id": _MATCH, "header.Authorization": _SEAT0},
            ),
            "Act": (
                "act",
                "/v1/matches/{match_id}/actions",
                "post",
                {"path.match_id": _MATCH, "header.Authorization": _SEAT0},
            ),
            "Resign": (
                "resign",
                "/v1/matches/{match_id}/resign",
                "post",
                {"path.match_id": _MATCH, "header.Authorization": _SEAT0},
            ),
            "Events": ("events", "/v1/matches/{match_id}/events", "get", {"path.match_id": _MATCH}),
            "Transcript": (
                "transcript",
                "/v1/matches/{match_id}/transcript",
                "get",
                {"path.match_id": _MATCH},
            ),
        }
    ),
    ("/v1/matches/{match_id}/resign", "post", "200"): _links(
        {
            "Transcript": (
                "transcript",
                "/v1/matches/{match_id}/transcript",
                "get",
                {"path.match_id": _MATCH},
            ),
        }
    ),
    ("/v1/rng", "post", "201"): _links(
        {
            "GetSession": (
                "get_session",
                "/v1/rng/{session_id}",
                "get",
                {"path.session_id": _SESSION},
            ),
            "Seed": (
                "give_seed",
                "/v1/rng/{session_id}/seed",
                "post",
                {"path.session_id": _SESSION, "header.Authorization": _TOKEN},
            ),
            "Draw": (
                "draw",
                "/v1/rng/{session_id}/draws",
                "post",
                {"path.session_id": _SESSION, "header.Authorization": _TOKEN},
            ),
            "Events": (
                "events",
                "/v1/rng/{session_id}/events",
                "get",
                {"path.session_id": _SESSION},
            ),
            "Close": (
                "close",
                "/v1/rng/{session_id}/close",
                "post",
                {"path.session_id": _SESSION, "header.Authorization": _TOKEN},
            ),
            "Transcript": (
                "transcript",
                "/v1/rng/{session_id}/transcript",
                "get",
                {"path.session_id": _SESSION},
            ),
        }
    ),
    ("/v1/rng/{session_id}/close", "post", "200"): _links(
        {
            "Transcript": (
                "transcript",
                "/v1/rng/{session_id}/transcript",
                "get",
                {"path.session_id": _SESSION},
            ),
        }
    ),
}


def add_links(doc: dict[str, Any]) -> dict[str, Any]:
    """Put :data:`LINKS` into a generated OpenAPI document (every target must exist)."""
    ids = {op["operationId"] for ops in doc["paths"].values() for op in ops.values()}
    for (path, method, status), links in LINKS.items():
        missing = {link["operationId"] for link in links.values()} - ids
        assert not missing, f"links to unknown operations {sorted(missing)}"
        doc["paths"][path][method]["responses"][status]["links"] = links
    return doc
