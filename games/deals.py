"""Pure deal functions: how a shuffled deck becomes hands, piles, stock and kitty.

The engines deal with these, and ``verify_cli.render`` shows a recorded shuffle as the
deal it became with the very same functions, so a deal rule exists once. Nothing here
draws: every function maps a deck (a recorded shuffle's result) to its parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fairness import deck52

from .cards import is_joker

#: hokm's packet rounds per table size (fairness-v1.md §5 for four): five each, then fours.
#: Three players: 5-4-4-4 = 17 each from 51 cards. Two players: 5 each, the rest a stock.
HOKM_ROUNDS: dict[int, tuple[int, ...]] = {4: (5, 4, 4), 3: (5, 4, 4, 4), 2: (5,)}
#: the card taken out of the deck for three-player hokm (51 cards, 17 each)
HOKM_THREE_REMOVED = "2C"


def packets(n_seats: int, rounds: Sequence[int]) -> list[tuple[int, int, int]]:
    """The packets of a packet deal in deal order: (start, stop, seat offset from the first
    seat); each round gives every seat one packet of that round's size."""
    out = []
    pos = 0
    for size in rounds:
        for i in range(n_seats):
            out.append((pos, pos + size, i))
            pos += size
    return out


def deal_packets(
    deck: Sequence[str], first: int, n_seats: int = 4, rounds: Sequence[int] | None = None
) -> list[list[str]]:
    """Each seat's cards (in the order received) from a packet deal.

    ``first`` gets the first packet (hokm: the hakem; qahve: dealer+1); the next packet goes
    to the next seat in play order. ``rounds`` defaults to hokm's for ``n_seats``; the deck
    must hold exactly the cards the rounds deal.
    """
    if n_seats not in HOKM_ROUNDS or not 0 <= first < n_seats:
        raise ValueError(
            f"a packet deal is for 2 to 4 seats and a first seat below "
            f"{n_seats}, got {n_seats} and {first}"
        )
    plan = packets(n_seats, HOKM_ROUNDS[n_seats] if rounds is None else rounds)
    if len(deck) != plan[-1][1]:
        raise ValueError(f"a packet deal needs {plan[-1][1]} cards, got {len(deck)}")
    hands: list[list[str]] = [[] for _ in range(n_seats)]
    for start, stop, offset in plan:
        hands[(first + offset) % n_seats].extend(deck[start:stop])
    return hands


def cut_deck(deck: Sequence[str], k: int) -> list[str]:
    """The deck cut at ``k`` (1 ≤ k < len): ``deck[k:] + deck[:k]``."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < len(deck):
        raise ValueError(f"a cut must be 1 to {len(deck) - 1}, got {k!r}")
    return list(deck[k:]) + list(deck[:k])


def first_ace_seat(deck: Sequence[str], n_seats: int = 4) -> int:
    """The first seat to receive an ace when ``deck`` is dealt one card at a time from seat 0."""
    return first_ace_index(deck) % n_seats


def first_ace_index(deck: Sequence[str]) -> int:
    for i, card in enumerate(deck):
        if not is_joker(card) and card[0] == "A":
            return i
    raise ValueError("no ace in the deck")


# -- hokm ------------------------------------------------------------------------------------


def hokm_deck(n_seats: int) -> list[str]:
    """The canonical deck hokm shuffles for ``n_seats``: 52 cards, without 2C for three."""
    if n_seats == 3:
        return [c for c in deck52() if c != HOKM_THREE_REMOVED]
    return deck52()


@dataclass
class HokmDeal:
    """A hokm deal: each seat's cards in the order received (``first`` = its first packet,
    the five the hakem names trump from) and, for two players, the stock (top first)."""

    first: list[list[str]]
    rest: list[list[str]]
    stock: list[str] = field(default_factory=list)

    def full(self, seat: int) -> list[str]:
        return self.first[seat] + self.rest[seat]


def hokm_deal(deck: Sequence[str], hakem: int, n_seats: int) -> HokmDeal:
    """The deal of ``deck`` (already cut) from the hakem for a table of ``n_seats``."""
    rounds = HOKM_ROUNDS[n_seats] if n_seats in HOKM_ROUNDS else ()
    if n_seats == 2:
        dealt = 2 * rounds[0]
        hands = deal_packets(deck[:dealt], hakem, 2, rounds)
        return HokmDeal(hands, [[], []], list(deck[dealt:]))
    hands = deal_packets(deck, hakem, n_seats)
    return HokmDeal([h[: rounds[0]] for h in hands], [h[rounds[0] :] for h in hands])


# -- dominoes -------------------------------------------------------------------------------


def deal_tiles(deck: Sequence[str], n_seats: int, hand: int) -> tuple[list[list[str]], list[str]]:
    """A domino deal: seat s gets ``[hand·s, hand·s + hand)``; the rest is the draw pile
    (iraqi_domino) or the boneyard (mexican_train)."""
    if hand * n_seats > len(deck):
        raise ValueError(f"{n_seats} hands of {hand} need {hand * n_seats} tiles")
    return (
        [list(deck[hand * s : hand * s + hand]) for s in range(n_seats)],
        list(deck[hand * n_seats :]),
    )


# -- qahve -----------------------------------------------------------------------------------


def qahve_deal(deck: Sequence[str], dealer: int) -> list[list[str]]:
    """Qahve's 52-card deck (jokers included) in packets 5-4-4 from dealer+1."""
    return deal_packets(deck, (dealer + 1) % 4, 4)


# -- shelem ----------------------------------------------------------------------------------


@dataclass
class ShelemLayout:
    """A shelem deal: hands, the two-player piles (bottom first: ``pile[-1]`` is its top)
    and the kitty."""

    hands: list[list[str]]
    piles: list[list[list[str]]]
    kitty: list[str]


def shelem_layout(deck: Sequence[str], dealer: int, n_seats: int) -> ShelemLayout:
    """Four players, D = dealer: ``[0,12)``→D+1, ``[12,24)``→D+2, ``[24,36)``→D+3,
    ``[36,40)`` kitty, ``[40,52)``→D. Two players, O = the other: ``[0,12)`` O,
    ``[12,24)`` D, then piles of four: O, D, O, D, O, the kitty ``[44,48)``, D."""
    if len(deck) != 52 or n_seats not in (2, 4) or not 0 <= dealer < n_seats:
        raise ValueError("a shelem deal is 52 cards to 2 or 4 seats")
    d = dealer
    hands: list[list[str]] = [[] for _ in range(n_seats)]
    piles: list[list[list[str]]] = [[] for _ in range(n_seats)]
    if n_seats == 4:
        for i in range(3):
            hands[(d + 1 + i) % 4] = list(deck[12 * i : 12 * i + 12])
        hands[d] = list(deck[40:52])
        return ShelemLayout(hands, piles, list(deck[36:40]))
    o = (d + 1) % 2
    hands[o] = list(deck[0:12])
    hands[d] = list(deck[12:24])
    piles[o] = [list(deck[24:28]), list(deck[32:36]), list(deck[40:44])]
    piles[d] = [list(deck[28:32]), list(deck[36:40]), list(deck[48:52])]
    return ShelemLayout(hands, piles, list(deck[44:48]))
