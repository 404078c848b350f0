"""Cards and tricks: the one copy of the card rules that hokm, qahve and shelem share.

Card codes follow fairness-v1.md §4: rank + suit, ranks ``23456789TJQKA``, suits ``CDHS``;
jokers ``JB`` (black) and ``JR`` (coloured) belong to no suit. Then the tricks:

- :class:`Trick` — the trick on the table: its leader, the plays in order (with where each
  card came from: a hand, or a face-up pile in two-player shelem), the led suit, the
  winner once complete, and its JSON form for views.
- :class:`Tally` — the tricks and cards each seat has taken in the hand, summed per side.
- :func:`follow_reason` / :func:`playable` — follow suit: a seat holding the led suit must
  play it; some cards (qahve's jokers) may be played whatever was led.
- The phase names every card game uses in its view's ``phase``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fairness import DECK52

from .base import Action, Engine, only_keys
from .errors import IllegalActionError, MalformedActionError

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


# -- phases (a card game's view ``phase``) --------------------------------------------------
class Phase:
    """The phase names every card game's view uses."""

    CUT = "cut"  # the deck waits for a cut or a tap
    TRUMP = "trump"  # the hakem names trump
    DRAW = "draw"  # two-player hokm: drawing from the stock
    BID = "bid"  # an auction or a round of bids
    DISCARD = "discard"  # cards laid down face down
    PLAY = "play"  # the tricks are played
    OVER = "over"  # the match has ended (played out, resigned or abandoned)


#: what the table waits for in each phase, for "no … now" messages
WAITING = {
    Phase.CUT: "the deck waits for the cutter (cut or tap)",
    Phase.TRUMP: "the hakem must name trump (trump)",
    Phase.DRAW: "the players are drawing from the stock (draw)",
    Phase.BID: "the bidding is on (bid or pass)",
    Phase.DISCARD: "cards are being laid away face down (discard)",
    Phase.PLAY: "the cards are being played (play)",
}


def follow_reason(hand: Collection[str], card: str, led: str | None) -> str | None:
    """Why ``card`` from ``hand`` breaks follow suit when ``led`` was led (None: it doesn't).

    A joker may be played whatever was led (the 52-card games hold none).
    """
    if led is None or is_joker(card) or suit(card) == led:
        return None
    if any(suit(c) == led for c in hand):
        return f"you must follow suit: {led} was led and you still hold {led}"
    return None


def playable(hand: Iterable[str], led: str | None) -> list[str]:
    """The cards of ``hand`` that follow suit (in the hand's order)."""
    cards = list(hand)
    return [c for c in cards if follow_reason(cards, c, led) is None]


@dataclass
class Trick:
    """The trick on the table: ``leader`` leads, then each seat in turn adds a card."""

    #: where a played card came from: a hand, or a face-up pile (two-player shelem)
    HAND: ClassVar[str] = "hand"
    PILE: ClassVar[str] = "pile"

    leader: int
    plays: list[tuple[int, str]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.plays)

    @property
    def led(self) -> str | None:
        """The suit of the first card played (None before the lead, or when a joker was led)."""
        return suit(self.plays[0][1]) if self.plays else None

    def add(self, seat: int, card: str, source: str = "hand") -> None:
        self.plays.append((seat, card))
        self.sources.append(source)

    def cards(self) -> list[str]:
        return [c for _, c in self.plays]

    def winner(
        self, trump: str | None, *, reverse: bool = False, joker_order: Sequence[str] = ()
    ) -> int:
        return trick_winner(self.plays, trump, reverse=reverse, joker_order=joker_order)

    def plays_json(self, *, sources: bool = False) -> list[dict[str, Any]]:
        if sources:
            return [
                {"seat": s, "card": c, "from": f}
                for (s, c), f in zip(self.plays, self.sources, strict=True)
            ]
        return [{"seat": s, "card": c} for s, c in self.plays]

    def to_json(
        self, hand: int, winner: int, *, sources: bool = False, **extra: Any
    ) -> dict[str, Any]:
        """A completed trick as the views' ``last_trick``."""
        return {
            "hand": hand,
            "leader": self.leader,
            "plays": self.plays_json(sources=sources),
            "winner": winner,
            **extra,
        }


def close_trick(
    trick: Trick,
    tally: Tally,
    hand: int,
    trump: str | None,
    *,
    reverse: bool = False,
    joker_order: Sequence[str] = (),
    sources: bool = False,
    **extra: Any,
) -> tuple[int, dict[str, Any]]:
    """A complete trick's winner takes it: returns (winner, the ``last_trick`` JSON)."""
    winner = trick.winner(trump, reverse=reverse, joker_order=joker_order)
    tally.take(winner, trick)
    return winner, trick.to_json(hand, winner, sources=sources, **extra)


class Tally:
    """Tricks and cards taken per seat in one hand."""

    def __init__(self, n_seats: int) -> None:
        self.tricks = [0] * n_seats
        self.cards: list[list[str]] = [[] for _ in range(n_seats)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tally) and (self.tricks, self.cards) == (other.tricks, other.cards)

    __hash__ = None  # type: ignore[assignment]

    def take(self, seat: int, trick: Trick) -> None:
        self.tricks[seat] += 1
        self.cards[seat].extend(trick.cards())

    @property
    def played(self) -> int:
        return sum(self.tricks)

    def by_side(self, side_of: Callable[[int], int], n_sides: int) -> list[int]:
        out = [0] * n_sides
        for seat, n in enumerate(self.tricks):
            out[side_of(seat)] += n
        return out

    def side_cards(self, side_of: Callable[[int], int], n_sides: int) -> list[list[str]]:
        out: list[list[str]] = [[] for _ in range(n_sides)]
        for seat, cards in enumerate(self.cards):
            out[side_of(seat)].extend(cards)
        return out


class TrickGame(Engine):
    """What the trick games' engines (hokm, qahve, shelem) share beyond their own rules."""

    phase: str
    tally: Tally
    hand_number: int
    trick: Trick

    def _wrong_phase(self, what: str) -> IllegalActionError:
        """The error for an action of the wrong phase: "no trump call now: …"."""
        return IllegalActionError(f"no {what} now: {WAITING.get(self.phase, 'the hand is over')}")

    def _need_phase(self, phase: str, what: str) -> None:
        """That the hand is in ``phase`` (else the error "no ``what`` now: …")."""
        if self.phase != phase:
            raise self._wrong_phase(what)

    def side_tricks(self) -> list[int]:
        """Tricks taken this hand per side."""
        return self.tally.by_side(self.side_of, self.n_sides)

    def _card_of(self, action: Action, *keys: str) -> str:
        """The card of the 52-card deck a play names (``keys``: the play's fields)."""
        only_keys(action, *keys)
        card = action.get("card")
        if not isinstance(card, str) or not is_card(card) or is_joker(card):
            raise MalformedActionError(f"'card' must be a card code such as 'AS', got {card!r}")
        return card

    def _table_view(
        self, leader: int | None, last_trick: dict[str, Any] | None, sources: bool = False
    ) -> dict[str, Any]:
        """The view fields every trick game shows the same way: ``phase`` (``over`` once the
        match has ended, however it ended), ``hand_number``, ``leader``, ``trick`` (the cards
        on the table, with where each came from when ``sources``) and ``last_trick``."""
        return {
            "phase": Phase.OVER if self.outcome is not None else self.phase,
            "hand_number": self.hand_number,
            "leader": leader,
            "trick": self.trick.plays_json(sources=sources),
            "last_trick": last_trick,
        }
