"""Nothing-up-my-sleeve points (fairness-v3 §2): item points and proof generators."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

from .group import from_hash, lp, u32be

ITEM_DOMAIN = b"qahwa-fair/3 item"
GENERATOR_DOMAIN = b"qahwa-fair/3 generator"
#: the most items a deck may hold (a double-12 set has 91 tiles; a margin for future sets)
MAX_ITEMS = 1024


@lru_cache(maxsize=4096)
def item_point(game: str, code: str) -> bytes:
    """M(game, code) = from_hash(SHA-512("qahwa-fair/3 item" || 0x00 || lp(game) || lp(code)))."""
    h = hashlib.sha512(
        ITEM_DOMAIN + b"\x00" + lp(game.encode("utf-8")) + lp(code.encode("utf-8"))
    ).digest()
    return from_hash(h)


@lru_cache(maxsize=MAX_ITEMS + 1)
def generator(i: int) -> bytes:
    """H(i) = from_hash(SHA-512("qahwa-fair/3 generator" || u32be(i)))."""
    return from_hash(hashlib.sha512(GENERATOR_DOMAIN + u32be(i)).digest())


@lru_cache(maxsize=64)
def generators(n: int) -> tuple[bytes, ...]:
    """H(0), …, H(n): H(0) is the commitment chain's start h, H(1+i) is h_i."""
    return tuple(generator(i) for i in range(n + 1))


def item_table(game: str, codes: Sequence[str]) -> dict[bytes, str]:
    """Point → code for the items of a game: how a seat names an item it opened."""
    table = {item_point(game, c): c for c in codes}
    if len(table) != len(codes):
        raise ValueError("item codes repeat")
    return table
