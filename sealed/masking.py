"""Barnett–Smart masking: ElGamal over the hand key (fairness-v3 §4)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import SealedError
from .group import IDENTITY, point
from .points import MAX_ITEMS, item_point


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """(A, B) = (r·G, M + r·P)."""

    A: bytes
    B: bytes


Deck = tuple[Ciphertext, ...]


def starting_deck(game: str, codes: Sequence[str]) -> Deck:
    """The rules' canonical order, each item as (identity, M(code))."""
    if len(set(codes)) != len(codes):
        raise SealedError("starting deck: item codes repeat")
    return tuple(Ciphertext(IDENTITY, item_point(game, c)) for c in codes)


def encode_deck(deck: Deck) -> bytes:
    """A_0 || B_0 || A_1 || B_1 || … (64 bytes an item)."""
    return b"".join(c.A + c.B for c in deck)


def decode_deck(raw: bytes, n: int | None = None) -> Deck:
    if not isinstance(raw, bytes) or len(raw) % 64 or not raw:
        raise SealedError("deck: a non-empty multiple of 64 bytes expected")
    count = len(raw) // 64
    if count > MAX_ITEMS:
        raise SealedError(f"deck: at most {MAX_ITEMS} items")
    if n is not None and count != n:
        raise SealedError(f"deck: {n} items expected, got {count}")
    return tuple(
        Ciphertext(
            point(raw[64 * i : 64 * i + 32], f"deck item {i} A"),
            point(raw[64 * i + 32 : 64 * i + 64], f"deck item {i} B"),
        )
        for i in range(count)
    )


def deck_b64(deck: Deck) -> str:
    return base64.b64encode(encode_deck(deck)).decode("ascii")


def deck_from_b64(text: str, n: int | None = None) -> Deck:
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as exc:
        raise SealedError("deck: not base64") from exc
    return decode_deck(raw, n)
