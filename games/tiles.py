"""Domino tile primitives shared by iraqi_domino and mexican_train (codes "a-b", a <= b),
and :class:`DominoEngine`, what their engines share.

A tile laid in a line or a train is an oriented pair ``(inner, outer)``: ``inner`` touches
the number it was laid against, ``outer`` is the number it leaves open. A double leaves
its own number open, so laying it never changes an end's number.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from fairness import parse_tile

from .base import Action, Engine
from .deals import deal_tiles
from .errors import MalformedActionError


def is_double(tile: str) -> bool:
    a, b = parse_tile(tile)
    return a == b


def pips(tile: str) -> int:
    a, b = parse_tile(tile)
    return a + b


def has_number(tile: str, n: int) -> bool:
    return n in parse_tile(tile)


def orient(tile: str, n: int) -> tuple[int, int]:
    """``tile`` laid against ``n``: the pair ``(n, number left open)``."""
    a, b = parse_tile(tile)
    if a == n:
        return (n, b)
    if b == n:
        return (n, a)
    raise ValueError(f"tile {tile} does not match {n}")


def total_pips(hand: Iterable[str]) -> int:
    return sum(pips(t) for t in hand)


def sort_tiles(tiles: Iterable[str]) -> list[str]:
    """Tiles in the canonical order of fairness-v1.md §4 (by (a, b))."""
    return sorted(tiles, key=parse_tile)


def check_tile_code(value: object, max_pip: int) -> str:
    """``value`` if it is a canonical tile code with numbers 0 … ``max_pip``, else ValueError."""
    if not isinstance(value, str):
        raise ValueError(f"a tile must be a string like '3-5', got {value!r}")
    a, b = parse_tile(value)  # ItemsError (a ValueError) for anything else
    if b > max_pip:
        raise ValueError(f"no tile {value} in a double-{max_pip} set")
    return value


def action_tile(action: Mapping[str, Any], max_pip: int) -> str:
    """The action's ``tile``, checked as :func:`check_tile_code` (MalformedActionError)."""
    try:
        return check_tile_code(action.get("tile"), max_pip)
    except ValueError as exc:
        raise MalformedActionError(str(exc)) from None


def opening_rank(tile: str) -> tuple[bool, int, int]:
    """Where ``tile`` stands in iraqi_domino's forced opening: every double above the other
    tiles, then the most pips, then the higher end."""
    a, b = parse_tile(tile)
    return (a == b, a + b, max(a, b))


class DominoEngine(Engine):
    """What the domino engines share: the seat to act (``current``), a round's deal, and
    the legal actions (the seat's plays; without one, a draw when it may draw, else a
    pass)."""

    ACTION_TYPES: ClassVar[tuple[str, ...]] = ("play", "draw", "pass")
    round: int
    current: int

    def _turn(self) -> int | None:
        return self.current

    def _legal(self, seat: int) -> list[Action]:
        return self._plays(seat) or [{"type": "draw" if self._may_draw() else "pass"}]

    @abstractmethod
    def _plays(self, seat: int) -> list[Action]:
        """The plays ``seat`` may make now."""

    @abstractmethod
    def _may_draw(self) -> bool:
        """Whether the seat to act, if it cannot play, draws (else it passes)."""

    def _deal(self, items: list[str], hand: int) -> tuple[list[list[str]], list[str]]:
        """The round's hands and draw pile (boneyard): its tiles (``items``) shuffled at
        ``r{round}/shuffle``, then dealt."""
        deck = self._shuffled(f"r{self.round}/shuffle", items)
        return deal_tiles(deck, self.n_seats, hand)
