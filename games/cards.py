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


def is_joker(card: str) -> bool:
    return card in JOKERS


def suit(card: str) -> str | None:
    """The card's suit letter, or None for a joker."""
    return None if is_joker(card) else card[1]


def rank(card: str) -> int:
    """0 for a 2 ... 12 for an ace (jokers: ValueError)."""
    if is_joker(card):
        raise ValueError("a joker has no rank")
    return RANKS.index(card[0])


def is_card(code: object) -> bool:
    return isinstance(code, str) and (code in DECK52 or code in JOKERS)


def sort_hand(cards: Iterable[str]) -> list[str]:
    """A hand in display order: jokers first (JR, JB), then suits C, D, H, S, high rank first."""
    def key(c: str) -> tuple[int, int]:
        if is_joker(c):
            return (-1, -JOKERS.index(c))
        return (SUITS.index(c[1]), -rank(c))
    return sorted(cards, key=key)


def holds_suit(hand: Iterable[str], s: str) -> bool:
    return any(suit(c) == s for c in hand)


def follow_suit_cards(hand: Sequence[str], led: str | None) -> list[str]:
    """Cards a seat may play under plain follow-suit (no joker rules): the led suit if held."""
    if led is None:
        return list(hand)
    same = [c for c in hand if suit(c) == led]
    return same if same else list(hand)


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


# -- dealing (fairness-v1.md §5: hokm and qahve) --------------------------------------------

#: The packets of a 52-card deal in deal order: (start, stop, seat offset from the first
#: seat). Five each, then twice four each: ``[0,5)``→F, ``[5,10)``→F+1, …, ``[48,52)``→F+3.
PACKETS: tuple[tuple[int, int, int], ...] = tuple(
    [(5 * i, 5 * i + 5, i) for i in range(4)]
    + [(20 + 4 * i, 24 + 4 * i, i % 4) for i in range(8)]
)


def deal_packets(deck: Sequence[str], first: int, n_seats: int = 4) -> list[list[str]]:
    """Each seat's 13 cards (in the order received) from a 52-card deck, packets 5-4-4.

    ``first`` is the seat that gets the first packet (hokm: the hakem; qahve: dealer+1);
    the next packet goes to the next seat in play order.
    """
    if len(deck) != 52:
        raise ValueError(f"a packet deal needs 52 cards, got {len(deck)}")
    if n_seats != 4 or not 0 <= first < n_seats:
        raise ValueError("a packet deal is for four seats, first seat 0 to 3")
    hands: list[list[str]] = [[] for _ in range(n_seats)]
    for start, stop, offset in PACKETS:
        hands[(first + offset) % n_seats].extend(deck[start:stop])
    return hands


def cut_deck(deck: Sequence[str], k: int) -> list[str]:
    """The deck cut at ``k`` (1 ≤ k < len): ``deck[k:] + deck[:k]``."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < len(deck):
        raise ValueError(f"a cut must be 1 to {len(deck) - 1}, got {k!r}")
    return list(deck[k:]) + list(deck[:k])


def first_ace_seat(deck: Sequence[str], n_seats: int = 4) -> int:
    """The first seat to receive an ace when ``deck`` is dealt one card at a time from seat 0."""
    for i, card in enumerate(deck):
        if not is_joker(card) and card[0] == "A":
            return i % n_seats
    raise ValueError("no ace in the deck")
