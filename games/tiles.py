"""Domino tile primitives shared by iraqi_domino and mexican_train (codes "a-b", a <= b)."""

from __future__ import annotations

from collections.abc import Iterable

from fairness import parse_tile, tile_code

__all__ = ["ends", "is_double", "pips", "has_number", "other_end", "total_pips", "tile_code",
           "parse_tile"]


def ends(tile: str) -> tuple[int, int]:
    return parse_tile(tile)


def is_double(tile: str) -> bool:
    a, b = parse_tile(tile)
    return a == b


def pips(tile: str) -> int:
    a, b = parse_tile(tile)
    return a + b


def has_number(tile: str, n: int) -> bool:
    return n in parse_tile(tile)


def other_end(tile: str, n: int) -> int:
    """The number left open after laying ``tile`` against ``n``."""
    a, b = parse_tile(tile)
    if a == n:
        return b
    if b == n:
        return a
    raise ValueError(f"tile {tile} does not match {n}")


def total_pips(hand: Iterable[str]) -> int:
    return sum(pips(t) for t in hand)
