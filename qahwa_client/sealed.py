"""A conforming seat at a sealed table (qahwa-fair/3, docs/spec/fairness-v3.md §9a).

The seat's protocol side (its key, shuffle, shares and openings with their proofs, the checks
of every other seat's steps in the public event log, its hand by code) is
:class:`sealed.seat.SealedSeat`, written once; this module gives it the client's errors. The
seat handles of aio.py drive it: each sealed view is checked against the log's new events
(:meth:`~sealed.seat.SealedSeat.take_events`) and shown in player form, and what the player
chooses is sent in wire form (:meth:`~sealed.seat.SealedSeat.wire`).
"""

from __future__ import annotations

from sealed import seat
from sealed.seat import MemoryKeys, SealedKeys

from .errors import ClientError

__all__ = ["MemoryKeys", "SealedKeys", "SealedSeat", "SealedStepRefused"]


class SealedStepRefused(ClientError):
    """Another seat's deal step (a key, a shuffle, a share) in the event log does not verify,
    or the view disagrees with the log: the seat makes no step over it (the server should
    have refused it; this is evidence against it)."""


class SealedSeat(seat.SealedSeat):
    """One seat's sealed side of a match, refusing with the client's errors."""

    refused = SealedStepRefused
    error = ClientError
