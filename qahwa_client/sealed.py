"""A conforming seat at a sealed table (qahwa-fair/3, docs/spec/fairness-v3.md "The conforming
sealed seat").

The seat's sealed side is :class:`games.sealed_seat.SealedSeat`, written once: its own deal
machine (:mod:`games.sealed_deal`), built from the match's signed lock (game, ruleset, house
seats, roll-chain tips) and fed the public event log, says what the seat owes, which items
are its own and when the hand's play is over; its secrets (:mod:`sealed.seat`) make the key,
shuffle, shares and openings. This module gives it the client's errors. The seat handles of
aio.py drive it: each sealed view is checked against the machine after the log's new events
(:meth:`~games.sealed_seat.SealedSeat.take_events`) and shown in player form, and what the
player chooses is sent in wire form (:meth:`~games.sealed_seat.SealedSeat.wire`). Every
refusal is kept as one of the seat's disputes, with its evidence.
"""

from __future__ import annotations

from games import sealed_seat
from sealed.seat import MemoryKeys, SealedKeys

from .errors import ClientError

__all__ = ["MemoryKeys", "SealedKeys", "SealedSeat", "SealedStepRefused"]


class SealedStepRefused(ClientError):
    """The seat refuses: a deal step in the event log does not verify, a view disagrees
    with the seat's own deal machine, or the seat was asked for a step its machine does not
    owe (a share of its own item, a made-up ``open``, its key before the hand's end). The
    seat sends nothing for it and keeps a dispute (evidence against the server)."""


class SealedSeat(sealed_seat.SealedSeat):
    """One seat's sealed side of a match, refusing with the client's errors."""

    refused = SealedStepRefused
    error = ClientError
