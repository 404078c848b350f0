"""qahwa_client: a typed Python client for the qahwa HTTP API (sync and async).

``Client(base_url).create_match(game)`` returns a match handle whose ``seats`` act with
their own tokens; ``Client.verify()`` checks a transcript locally with ``verify``'s core.
The models in :mod:`qahwa_client.models` are the ones the server publishes.
"""

from .aio import AsyncClient, AsyncMatch, AsyncRngSession, AsyncSeat
from .client import Client, Match, RngSession, Seat
from .errors import ApiError, StaleVersion

__all__ = ["ApiError", "AsyncClient", "AsyncMatch", "AsyncRngSession", "AsyncSeat", "Client",
           "Match", "RngSession", "Seat", "StaleVersion"]
