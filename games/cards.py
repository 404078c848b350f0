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
#: ``rank`` of each card of the 52-card deck
_CARD_RANK = {c: _RANK[c[0]] for c in DECK52}


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


def _hand_order(c: str) -> tuple[int, int]:
    """``sort_hand``'s key: jokers first (JR, JB), then suits C, D, H, S, high rank first."""
    if is_joker(c):
        return (-1, -JOKERS.index(c))
    return (SUITS.index(c[1]), -rank(c))


#: ``_hand_order`` of every card code
_HAND_ORDER = {c: _hand_order(c) for c in _CARDS}


def sort_hand(cards: Iterable[str]) -> list[str]:
    """A hand in display order: jokers first (JR, JB), then suits C, D, H, S, high rank first."""
    cards = list(cards)
    try:
        return sorted(cards, key=_HAND_ORDER.__getitem__)  # the usual case: card codes
    except (KeyError, TypeError):  # not all card codes: the key says why (or copes)
        return sorted(cards, key=_hand_order)


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
        # no joker order: tricks of 52-deck cards alone by rank lookups, the same order as
        # below (the best card so far is of the led suit or trump: a card beats it when it
        # is of its suit and ranks above it, or is a trump and it is not); a trick with any
        # other card takes the general way
        get = _CARD_RANK.get
        best_seat, best_card = plays[0]
        best_r = get(best_card)
        if best_r is not None:
            best_s = best_card[1]
            for seat, card in plays[1:]:
                r = get(card)
                if r is None:
                    break
                s = card[1]
                if s == best_s:
                    if r < best_r if reverse else r > best_r:
                        best_seat, best_r = seat, r
                elif s == trump:
                    best_seat, best_s, best_r = seat, s, r
            else:
                return best_seat
    return plain_trick_winner(plays, trump, reverse, joker_order)


def plain_trick_winner(
    plays: Sequence[tuple[int, str]], trump: str | None, reverse: bool, joker_order: Sequence[str]
) -> int:
    """:func:`trick_winner` the general way, by each card's strength (what its rank lookups
    compute for tricks of 52-deck cards alone)."""
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
