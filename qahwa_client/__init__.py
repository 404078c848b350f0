"""qahwa_client: a typed Python client for the qahwa HTTP API (sync and async), and a
conforming client of qahwa-fair/2 (fairness-v2.md §3a).

``Client(base_url).create_match(game)`` returns a match handle whose ``seats`` commit, check
the signed lock and reveal (``match.start()``), then act with their own tokens, each action
signed with the seat's own key; ``Client.verify()`` checks a transcript locally with
``verify``'s core and ``Match.check_transcript()`` holds it to each seat's lock and receipts.
The models in :mod:`qahwa_client.models` are the ones the server publishes.
"""

from fairness.seat import Dispute, Terms

from ._shared import Unanswered
from .aio import AsyncClient, AsyncMatch, AsyncRngSession, AsyncSeat
from .client import Client, Match, RngSession, Seat
from .errors import (
    ApiError,
    ClientError,
    FreshRollsRefused,
    NotOurMatch,
    StaleVersion,
    TranscriptMismatch,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "AsyncMatch",
    "AsyncRngSession",
    "AsyncSeat",
    "Client",
    "ClientError",
    "Dispute",
    "FreshRollsRefused",
    "Match",
    "NotOurMatch",
    "RngSession",
    "Seat",
    "StaleVersion",
    "Terms",
    "TranscriptMismatch",
    "Unanswered",
]
