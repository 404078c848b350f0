"""The API's request and response models, and the errors each route documents.

The wire models live in :mod:`qahwa_client.models` so the Python client is typed with
exactly what this server publishes; the service imports them from there (the client never
imports the service).
"""

from __future__ import annotations

from typing import Any

from qahwa_client.models import (
    ActionIn,
    ActionOut,
    CommitmentOut,
    CreateMatchIn,
    DrawIn,
    DrawOut,
    ErrorBody,
    ErrorOut,
    EventsOut,
    KeyOut,
    KeysOut,
    LogEntriesOut,
    LogEntryOut,
    MatchCreatedOut,
    MatchOut,
    ProofOut,
    PublicSeat,
    ResignOut,
    RngClosedOut,
    RngCreatedOut,
    RngCreateIn,
    SeatedOut,
    SeatIn,
    SeatOut,
    SeedIn,
    Signature,
    StateOut,
    Strict,
    TranscriptOut,
    TreeHeadOut,
)

__all__ = [
    "ActionIn", "ActionOut", "CommitmentOut", "CreateMatchIn", "DrawIn", "DrawOut",
    "ErrorBody", "ErrorOut", "EventsOut", "KeyOut", "KeysOut", "LogEntriesOut",
    "LogEntryOut", "MatchCreatedOut", "MatchOut", "ProofOut", "PublicSeat", "ResignOut",
    "RngClosedOut", "RngCreatedOut", "RngCreateIn", "SeatedOut", "SeatIn", "SeatOut",
    "SeedIn", "Signature", "StateOut", "Strict", "TranscriptOut", "TreeHeadOut", "errors",
]

# Every error a route can answer, by status: the codes (docs/api.md) and when.
_WHY: dict[int, tuple[str, ...]] = {
    400: ("malformed_json", "missing_body", "bad_request"),
    401: ("unauthorized",),
    403: ("forbidden",),
    404: ("not_found",),
    409: ("stale_version", "not_your_turn", "not_started", "not_seating",
          "seed_already_given", "match_over", "not_finished"),
    413: ("body_too_large",),
    422: ("validation_error", "unknown_game", "bad_ruleset", "bad_seats", "bad_client_seed",
          "malformed_action", "illegal_action"),
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
        out[status] = {"model": ErrorOut,
                       "description": "error codes: " + ", ".join(f"`{n}`" for n in names)}
    return out


BODY = {"e400": _WHY[400], "e413": _WHY[413]}
