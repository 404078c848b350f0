"""A whole hand's sealed record made in one process holding every seat's keys: for the
benchmark, the tests and examples. A table never works like this (each seat makes its own
key, shuffle and shares, on its own machine); the record it yields is the same shape
(fairness-v3 §9) and verifies the same."""

from __future__ import annotations

import base64
from collections.abc import Collection, Sequence
from typing import Any

from .context import Context
from .keys import hand_key, make_key
from .masking import deck_b64, starting_deck
from .points import item_table
from .randomness import Randomness
from .shares import make_share, own_item
from .shuffle_proof import shuffle


def simulated_hand(
    match_id: str,
    hand: int,
    game: str,
    items: Sequence[str],
    seats: int,
    house: Collection[int] = (),
    opened: int = 0,
    rng: Randomness | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Keys, shuffles (house seats first), every item dealt face down (position i to seat
    i mod seats, with the other seats' shares), the first ``opened`` items opened by their
    owners, every key revealed. Returns the §9 entry and the code each position holds, as its
    owner learnt it."""
    ctx = Context(match_id, hand, 0)
    keys = [make_key(ctx.for_seat(s), rng) for s in range(seats)]
    P = hand_key([k.P for k in keys])
    deck = starting_deck(game, items)
    shuffles = []
    for s in sorted(house) + sorted(set(range(seats)) - set(house)):
        deck, proof = shuffle(ctx.for_seat(s), P, deck, rng)
        b64_proof = base64.b64encode(proof.encode()).decode("ascii")
        shuffles.append({"seat": s, "deck": deck_b64(deck), "proof": b64_proof})
    table = item_table(game, items)
    shares: list[dict[str, Any]] = []
    learnt: list[str] = []
    for item, c in enumerate(deck):
        owner = item % seats
        made = {s: make_share(ctx.for_seat(s), keys[s].x, c, rng) for s in range(seats)}
        learnt.append(own_item(c, keys[owner].x, [made[s].D for s in made if s != owner], table))
        for s in range(seats):
            if s != owner or item < opened:  # the owner's own share only with its opening
                shares.append(
                    {
                        "item": item,
                        "seat": s,
                        "share": made[s].D.hex(),
                        "proof": made[s].proof.encode().hex(),
                    }
                )
    entry = {
        "hand": hand,
        "game": game,
        "items": list(items),
        "keys": [
            {"seat": s, "key": k.P.hex(), "proof": k.proof.encode().hex()}
            for s, k in enumerate(keys)
        ],
        "shuffles": shuffles,
        "shares": shares,
        "openings": [{"item": i, "seat": i % seats, "code": learnt[i]} for i in range(opened)],
        "revealed": [{"seat": s, "secret": k.x.hex()} for s, k in enumerate(keys)],
    }
    return entry, learnt
