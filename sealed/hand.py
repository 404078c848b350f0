"""A hand's sealed record (fairness-v3 §9) and its verification (§10, the cryptographic part).

``verify_hand`` checks every key and its proof, the shuffle chain (each proof under its
seat's context, house seats first, then the others, each seat once), every share and its
proof, every opening, and every revealed key; when every key is revealed it opens the whole
final deck. What the rules make of the deck (the deal order, the deferred rules, the result)
is the games' part.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .context import Context
from .errors import SealedError
from .group import mul, s_add, scalar, sub
from .keys import KeyProof, check_revealed, hand_key, verify_key
from .masking import Deck, decode_deck, starting_deck
from .points import item_point, item_table
from .shares import Share, ShareProof, unmask, verify_share
from .shuffle_proof import ShuffleProof, verify_shuffle

FIELDS = ("hand", "game", "items", "keys", "shuffles", "shares", "openings", "revealed")


@dataclass(frozen=True, slots=True)
class VerifiedHand:
    hand_key: bytes
    deck: Deck  #: the final deck, after every shuffle
    opened: dict[int, str]  #: item position → code, of every opening
    order: tuple[str, ...] | None  #: every item's code by position, once every key is revealed


def _hex(v: Any, size: int, what: str) -> bytes:
    if not isinstance(v, str):
        raise SealedError(f"{what}: a hex string expected")
    try:
        b = bytes.fromhex(v)
    except ValueError as exc:
        raise SealedError(f"{what}: not hex") from exc
    if len(b) != size or v != b.hex():
        raise SealedError(f"{what}: {size} bytes of lowercase hex expected")
    return b


def _b64(v: Any, what: str) -> bytes:
    if not isinstance(v, str):
        raise SealedError(f"{what}: a base64 string expected")
    try:
        b = base64.b64decode(v, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise SealedError(f"{what}: not base64") from exc
    if base64.b64encode(b).decode("ascii") != v:
        raise SealedError(f"{what}: not canonical base64")
    return b


def _int(v: Any, what: str, below: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < below:
        raise SealedError(f"{what}: an integer in 0..{below - 1} expected")
    return v


def _list(entry: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    v = entry.get(name)
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise SealedError(f"sealed hand: {name!r} must be a list of objects")
    return v


def verify_hand(
    match_id: str, entry: Mapping[str, Any], seats: int, house: Collection[int] = ()
) -> VerifiedHand:
    """Verify one hand's ``"sealed"`` entry of a match with ``seats`` seats (``house``: the
    house seats). Raises SealedError naming the first thing that fails."""
    if not isinstance(entry, Mapping) or set(entry) != set(FIELDS):
        raise SealedError(f"sealed hand: exactly the fields {', '.join(FIELDS)} expected")
    hand = _int(entry["hand"], "sealed hand: hand", 2**32)
    game, items = entry["game"], entry["items"]
    if not isinstance(game, str) or not isinstance(items, list) or not items:
        raise SealedError("sealed hand: game must be a string and items a non-empty list")
    if not all(isinstance(c, str) for c in items):
        raise SealedError("sealed hand: items must be codes (strings)")
    ctx = Context(match_id, hand, 0)
    n = len(items)
    # §3: the keys, one per seat in seat order
    keys_in = _list(entry, "keys")
    if [k.get("seat") for k in keys_in] != list(range(seats)):
        raise SealedError(f"sealed hand: one key per seat, seats 0..{seats - 1} in order")
    keys: list[bytes] = []
    for k in keys_in:
        s = k["seat"]
        P = _hex(k.get("key"), 32, f"key of seat {s}")
        verify_key(
            ctx.for_seat(s), P, KeyProof.decode(_hex(k.get("proof"), 64, f"key proof of seat {s}"))
        )
        keys.append(P)
    P = hand_key(keys)
    # §5: the shuffle chain, house seats first, then the others, each once, in seat order
    order = sorted(house) + sorted(set(range(seats)) - set(house))
    shuffles = _list(entry, "shuffles")
    if [sh.get("seat") for sh in shuffles] != order:
        raise SealedError(f"sealed hand: shuffles by seats {order} in that order expected")
    deck = starting_deck(game, items)
    for sh in shuffles:
        s = sh["seat"]
        out = decode_deck(_b64(sh.get("deck"), f"deck of seat {s}"), n)
        proof = ShuffleProof.decode(_b64(sh.get("proof"), f"shuffle proof of seat {s}"), n)
        verify_shuffle(ctx.for_seat(s), P, deck, out, proof)
        deck = out
    # §6: shares
    shares: dict[tuple[int, int], Share] = {}
    for sh in _list(entry, "shares"):
        item = _int(sh.get("item"), "share item", n)
        s = _int(sh.get("seat"), "share seat", seats)
        if (item, s) in shares:
            raise SealedError(f"sealed hand: a second share of item {item} by seat {s}")
        share = Share(
            _hex(sh.get("share"), 32, f"share of seat {s}"),
            ShareProof.decode(_hex(sh.get("proof"), 96, f"share proof of seat {s}")),
        )
        verify_share(ctx.for_seat(s), keys[s], deck[item], share)
        shares[(item, s)] = share
    # §7: openings
    opened: dict[int, str] = {}
    for op in _list(entry, "openings"):
        item = _int(op.get("item"), "opening item", n)
        _int(op.get("seat"), "opening seat", seats)
        code = op.get("code")
        if not isinstance(code, str) or item in opened:
            raise SealedError(f"sealed hand: opening of item {item}: a code, once")
        missing = [s for s in range(seats) if (item, s) not in shares]
        if missing:
            raise SealedError(f"opening of item {item}: no share of seats {missing}")
        # every share was verified above: what is left of §7 is what they open the item to
        if unmask(deck[item], [shares[(item, s)].D for s in range(seats)]) != item_point(
            game, code
        ):
            raise SealedError(f"opening: the shares do not open this ciphertext to {code!r}")
        opened[item] = code
    # §3: revealed keys; with all of them, the whole deck
    revealed: dict[int, bytes] = {}
    for r in _list(entry, "revealed"):
        s = _int(r.get("seat"), "revealed seat", seats)
        x = scalar(
            _hex(r.get("secret"), 32, f"revealed key of seat {s}"), f"revealed key of seat {s}"
        )
        if s in revealed:
            raise SealedError(f"sealed hand: seat {s} revealed twice")
        check_revealed(keys[s], x, s)
        revealed[s] = x
    codes: tuple[str, ...] | None = None
    if len(revealed) == seats:
        x_all = revealed[0]
        for s in range(1, seats):
            x_all = s_add(x_all, revealed[s])
        table = item_table(game, items)
        found = [table.get(sub(c.B, mul(x_all, c.A))) for c in deck]
        if None in found:
            raise SealedError("sealed hand: the revealed keys do not open every item")
        codes = tuple(c for c in found if c is not None)
        if sorted(codes) != sorted(items):
            raise SealedError("sealed hand: the final deck does not hold every item once")
        for item, code in opened.items():
            if codes[item] != code:  # cannot happen when the openings verified
                raise SealedError(f"sealed hand: item {item} opened as {code}, holds {codes[item]}")
    return VerifiedHand(P, deck, opened, codes)
