"""Card primitives shared by hokm, qahve and shelem.

Card codes follow fairness-v1.md §4: rank + suit, ranks ``23456789TJQKA``, suits ``CDHS``;
jokers ``JB`` (black) and ``JR`` (coloured) belong to no suit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fairness import DECK52

RANKS = "23456789TJQKA"
SUITS = "CDHS"
JOKERS = ("JB", "JR")
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


#: every card code, jokers included (a set: membership without scanning the deck)
_CARDS = frozenset(DECK52) | frozenset(JOKERS)


def is_joker(card: str) -> bool:
    return card in JOKERS


def suit(card: str) -> str | None:
    """The card's suit letter, or None for a joker."""
    return None if card in JOKERS else card[1]


#: ``RANKS.index`` of each rank letter
_RANK = {r: i for i, r in enumerate(RANKS)}


def rank(card: str) -> int:
    """0 for a 2 ... 12 for an ace (jokers: ValueError)."""
    if card in JOKERS:
        raise ValueError("a joker has no rank")
    try:
        return _RANK[card[0]]
    except KeyError:
        raise ValueError(f"{card[0]!r} is not a rank") from None


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in _CARDS


def sort_hand(cards: Iterable[str]) -> list[str]:
    """A hand in display order: jokers first (JR, JB), then suits C, D, H, S, high rank first."""

    def key(c: str) -> tuple[int, int]:
        if is_joker(c):
            return (-1, -JOKERS.index(c))
        return (SUITS.index(c[1]), -rank(c))

    return sorted(cards, key=key)


def trick_winner(
    plays: Sequence[tuple[int, str]],
    trump: str | None,
    *,
    reverse: bool = False,
    joker_order: Sequence[str] = (),
) -> int:
    """The seat that wins a trick.

    ``plays`` are (seat, card) in play order; the led suit is that of the first non-joker
    card led (a led joker leads no suit: then the first card decides nothing, and only
    jokers and trumps can win; with none of those the highest card of the first suited card
    played wins). ``reverse`` reverses rank order (hokm's nars). ``joker_order`` lists
    jokers from lowest to highest; any joker beats every suited card.
    """
    if not plays:
        raise ValueError("empty trick")
    if not joker_order:
        # no joker order: tricks without jokers (the 52-card games) by rank lookups alone,
        # the same strengths as below; anything else takes the general way
        first = plays[0][1]
        led = first[1] if first not in JOKERS else None
        best_seat, best_s, best_r = -1, -1, -1
        for seat, card in plays:
            r = _RANK.get(card[0]) if card not in JOKERS else None
            if r is None or led is None:
                break
            if reverse:
                r = 12 - r
            s = card[1]
            level = 2 if trump is not None and s == trump else 1 if s == led else 0
            if level == 0:
                r = 0
            if (level, r) > (best_s, best_r):  # (the first card: level >= 0 > -1)
                best_seat, best_s, best_r = seat, level, r
        else:
            return best_seat
    led = suit(plays[0][1])
    if led is None:
        led = next((suit(c) for _, c in plays if not is_joker(c)), None)

    def strength(card: str) -> tuple[int, int]:
        if is_joker(card):
            return (3, list(joker_order).index(card))
        r = rank(card)
        if reverse:
            r = 12 - r
        s = suit(card)
        if trump is not None and s == trump:
            return (2, r)
        if s == led:
            return (1, r)
        return (0, 0)

    best_seat, best_card = plays[0]
    best = strength(best_card)
    for seat, card in plays[1:]:
        st = strength(card)
        if st > best:
            best_seat, best = seat, st
    return best_seat
