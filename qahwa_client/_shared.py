"""What the async client (:mod:`qahwa_client.aio`, the source) and the sync one generated
from it (:mod:`qahwa_client.client`) share without an ``await``: request bodies, headers,
the resend rule and the :class:`Unanswered` error."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import TypeAdapter

from qahwa_wire.models import StateOut

from .errors import ClientError

STATE = TypeAdapter[StateOut](StateOut)

# Answers after which a request is sent again, byte for byte (fairness-v2.md §3a.6): the
# server may or may not have acted on it.
RESEND_STATUS = frozenset({500, 502, 503, 504})
#: an ``after`` no match reaches: the answer is where the log stands, with no events
LATEST = 2**31 - 1


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create_body(
    game: str,
    ruleset: Mapping[str, Any] | None,
    names: Sequence[str] | None,
    house: Sequence[bool] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"game": game}
    if ruleset is not None:
        body["ruleset"] = dict(ruleset)
    if house is not None and names is None:
        raise ClientError("house seats are declared with their names")
    if names is not None:
        flags = list(house) if house is not None else [False] * len(names)
        if len(flags) != len(names):
            raise ClientError(f"{len(names)} names but {len(flags)} house flags")
        body["seats"] = [{"name": n, "house": h} for n, h in zip(names, flags, strict=True)]
    return body


def accepted_out(match_id: str, seat: int, seq: int, view: StateOut) -> dict[str, Any]:
    """An action's answer rebuilt from the log and a fresh view (its first answer lost)."""
    return {
        "match_id": match_id,
        "seat": seat,
        "version": view.version,
        "status": view.status,
        "first_seq": seq,
        "state": view.model_dump(mode="json"),
        "chain": view.chain,
    }


class Unanswered(ClientError):
    """A request got no answer (or only 5xx) however often it was resent; it is kept in the
    seat's ``requests`` without a receipt."""
